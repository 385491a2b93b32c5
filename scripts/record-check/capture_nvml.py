"""Write what NVML answers on this machine, call by call, in tests/nvml_fake.py's format.

Run by ``scripts/device-gpu-check`` on a lent GPU machine::

    python scripts/record-check/capture_nvml.py > h200-nvml.json

The calls are exactly those the environment probe makes
(``bench_adapters/recording/environment.py``); an answer NVML refuses is written as
``{"error": NAME}``, which the stand-in raises again. Serial numbers and UUIDs are
never asked for, so nothing here names one machine.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import pynvml as nvml

SM, MEMORY = 1, 2  # NVML_CLOCK_SM, NVML_CLOCK_MEM


def answer(call: Callable[..., Any], *args: Any) -> Any:
    try:
        value = call(*args)
    except nvml.NVMLError as error:
        return {"error": type(error).__name__}
    if isinstance(value, bytes):
        return value.decode()
    if hasattr(value, "total"):
        return {"total": value.total, "free": value.free, "used": value.used}
    if isinstance(value, tuple):
        return list(value)
    return value


def device(handle: Any) -> dict[str, Any]:
    return {
        "nvmlDeviceGetName": answer(nvml.nvmlDeviceGetName, handle),
        "nvmlDeviceGetMemoryInfo": answer(nvml.nvmlDeviceGetMemoryInfo, handle),
        "nvmlDeviceGetCudaComputeCapability": answer(
            nvml.nvmlDeviceGetCudaComputeCapability, handle
        ),
        "nvmlDeviceGetMaxClockInfo": {
            str(clock): answer(nvml.nvmlDeviceGetMaxClockInfo, handle, clock)
            for clock in (SM, MEMORY)
        },
        "nvmlDeviceGetApplicationsClock": {
            str(clock): answer(nvml.nvmlDeviceGetApplicationsClock, handle, clock)
            for clock in (SM, MEMORY)
        },
        "nvmlDeviceGetEnforcedPowerLimit": answer(nvml.nvmlDeviceGetEnforcedPowerLimit, handle),
        "nvmlDeviceGetEccMode": answer(nvml.nvmlDeviceGetEccMode, handle),
    }


def main() -> None:
    nvml.nvmlInit()
    try:
        devices = [
            device(nvml.nvmlDeviceGetHandleByIndex(index))
            for index in range(nvml.nvmlDeviceGetCount())
        ]
        captured = {
            "$comment": "What NVML (nvidia-ml-py) answered on a lent machine, call by call, "
            "captured by scripts/record-check/capture_nvml.py for tests/nvml_fake.py.",
            "nvmlSystemGetDriverVersion": answer(nvml.nvmlSystemGetDriverVersion),
            "nvmlSystemGetCudaDriverVersion_v2": answer(nvml.nvmlSystemGetCudaDriverVersion_v2),
            "devices": devices,
        }
    finally:
        nvml.nvmlShutdown()
    json.dump(captured, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
