"""A stand-in for ``pynvml`` that answers from a recorded file (tests/fixtures/gpu/*-nvml.json).

Only the calls the environment probe makes, with NVML's own names and argument
shapes; an answer ``{"error": NAME}`` raises :class:`NVMLError` with that name, as
pynvml raises ``NVMLError_NoPermission`` and the like.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "gpu"


class NVMLError(Exception):
    """pynvml's base error."""


class FakeNvml:
    NVML_CLOCK_GRAPHICS = 0
    NVML_CLOCK_SM = 1
    NVML_CLOCK_MEM = 2
    NVML_FEATURE_ENABLED = 1
    NVMLError = NVMLError

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.initialized = 0
        self.shut_down = 0

    @classmethod
    def from_file(cls, name: str) -> FakeNvml:
        return cls(json.loads((FIXTURES / name).read_text()))

    def _answer(self, value: Any) -> Any:
        if isinstance(value, dict) and "error" in value:
            raise NVMLError(value["error"])
        return value

    def nvmlInit(self) -> None:
        self.initialized += 1

    def nvmlShutdown(self) -> None:
        self.shut_down += 1

    def nvmlSystemGetDriverVersion(self) -> str:
        return str(self._answer(self.answers["nvmlSystemGetDriverVersion"]))

    def nvmlSystemGetCudaDriverVersion_v2(self) -> int:
        return int(self._answer(self.answers["nvmlSystemGetCudaDriverVersion_v2"]))

    def nvmlDeviceGetCount(self) -> int:
        return len(self.answers["devices"])

    def nvmlDeviceGetHandleByIndex(self, index: int) -> dict[str, Any]:
        return dict(self.answers["devices"][index])

    def nvmlDeviceGetName(self, handle: dict[str, Any]) -> bytes:
        return str(self._answer(handle["nvmlDeviceGetName"])).encode()  # old pynvml: bytes

    def nvmlDeviceGetMemoryInfo(self, handle: dict[str, Any]) -> SimpleNamespace:
        return SimpleNamespace(**self._answer(handle["nvmlDeviceGetMemoryInfo"]))

    def nvmlDeviceGetCudaComputeCapability(self, handle: dict[str, Any]) -> tuple[int, int]:
        major, minor = self._answer(handle["nvmlDeviceGetCudaComputeCapability"])
        return int(major), int(minor)

    def nvmlDeviceGetMaxClockInfo(self, handle: dict[str, Any], clock: int) -> int:
        return int(self._answer(self._answer(handle["nvmlDeviceGetMaxClockInfo"])[str(clock)]))

    def nvmlDeviceGetApplicationsClock(self, handle: dict[str, Any], clock: int) -> int:
        answer = self._answer(handle["nvmlDeviceGetApplicationsClock"])
        return int(self._answer(answer[str(clock)]))

    def nvmlDeviceGetEnforcedPowerLimit(self, handle: dict[str, Any]) -> int:
        return int(self._answer(handle["nvmlDeviceGetEnforcedPowerLimit"]))

    def nvmlDeviceGetEccMode(self, handle: dict[str, Any]) -> tuple[int, int]:
        current, pending = self._answer(handle["nvmlDeviceGetEccMode"])
        return int(current), int(pending)

    # The readings a run samples while it is timed (bench_adapters.recording.observe).
    NVML_TEMPERATURE_GPU = 0

    def nvmlDeviceGetClockInfo(self, handle: dict[str, Any], clock: int) -> int:
        return int(self._answer(self._answer(handle["nvmlDeviceGetClockInfo"])[str(clock)]))

    def nvmlDeviceGetTemperature(self, handle: dict[str, Any], sensor: int) -> int:
        return int(self._answer(handle["nvmlDeviceGetTemperature"]))

    def nvmlDeviceGetPowerUsage(self, handle: dict[str, Any]) -> int:
        return int(self._answer(handle["nvmlDeviceGetPowerUsage"]))

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: dict[str, Any]) -> int:
        return int(self._answer(handle["nvmlDeviceGetCurrentClocksEventReasons"]))
