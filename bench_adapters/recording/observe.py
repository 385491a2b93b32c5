"""What the device did while a run was timed: NVML clocks, temperature, power and
throttle reasons, sampled around (and, at a low rate, during) the timed calls.

The environment record states the device's *settings* (maximum and application
clocks, power limit); a run's figure also depends on what the device actually did
while it ran — a clock held down by heat or power, a throttle reason raised. A
:class:`Watch` samples a :class:`Monitor` when the timed calls start, every
``interval`` seconds while they run (a daemon thread: at the default 0.1 s its NVML
calls take well under 1 % of the host's time, so the host path being timed is not
disturbed), and when they end; :func:`summary` turns the samples into the run's
``sourceNative.metrics`` (:data:`METRICS`). :class:`NvmlMonitor` asks NVML (pynvml,
imported when it first samples); a reading NVML refuses is left out, never guessed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, Protocol

#: One sample's readings: ``sm_clock_mhz``, ``mem_clock_mhz``, ``temperature_c``,
#: ``power_w`` and ``throttle_reasons`` (NVML's bit mask), each where NVML answered.
Sample = Mapping[str, float]

#: ``sourceNative.metrics`` names of a watch's summary, and how each is made.
METRICS = (
    ("nvml_sm_clock_mhz_min", "sm_clock_mhz", "min"),
    ("nvml_sm_clock_mhz_max", "sm_clock_mhz", "max"),
    ("nvml_mem_clock_mhz_min", "mem_clock_mhz", "min"),
    ("nvml_mem_clock_mhz_max", "mem_clock_mhz", "max"),
    ("nvml_temperature_c_max", "temperature_c", "max"),
    ("nvml_power_w_max", "power_w", "max"),
    ("nvml_throttle_reasons", "throttle_reasons", "or"),
)
#: How many samples the summary is over.
SAMPLES_METRIC = "nvml_samples"


class Monitor(Protocol):
    """Reads the device's current state."""

    def sample(self) -> Sample:
        """The readings now (those the device refuses are left out)."""


def summary(samples: Sequence[Sample]) -> dict[str, float]:
    """The run's metrics of ``samples``: min/max clocks, max temperature and power,
    every throttle reason raised in any sample (bitwise or), and the sample count."""
    found: dict[str, float] = {}
    for name, reading, how in METRICS:
        values = [s[reading] for s in samples if reading in s]
        if not values:
            continue
        if how == "or":
            mask = 0
            for value in values:
                mask |= int(value)
            found[name] = mask
        else:
            found[name] = min(values) if how == "min" else max(values)
    if found:
        found[SAMPLES_METRIC] = len(samples)
    return found


class Watch:
    """Samples ``monitor`` on entry, every ``interval`` s while inside, and on exit.

    A monitor that fails stops being asked (the run goes on without its readings);
    the samples taken before stay.
    """

    def __init__(self, monitor: Monitor, interval: float = 0.1) -> None:
        self.monitor = monitor
        self.interval = interval
        self.samples: list[Sample] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._broken = False

    def _take(self) -> None:
        if self._broken:
            return
        try:
            self.samples.append(dict(self.monitor.sample()))
        except Exception:
            self._broken = True

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._take()

    def __enter__(self) -> Watch:
        self._take()
        if self.interval > 0 and not self._broken:
            self._thread = threading.Thread(target=self._loop, name="nvml-watch", daemon=True)
            self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._take()

    def summary(self) -> dict[str, float]:
        """:func:`summary` of the samples taken."""
        return summary(self.samples)


def _import_pynvml() -> Any:
    import importlib

    return importlib.import_module("pynvml")


class NvmlMonitor:
    """Device ``index``'s clocks, temperature, power and throttle reasons, from NVML."""

    def __init__(self, index: int = 0, nvml: Callable[[], Any] = _import_pynvml) -> None:
        self.index = index
        self._load = nvml
        self._nvml: Any = None
        self._handle: Any = None

    def _device(self) -> tuple[Any, Any]:
        if self._nvml is None:
            nvml = self._load()
            nvml.nvmlInit()
            self._handle = nvml.nvmlDeviceGetHandleByIndex(self.index)
            self._nvml = nvml
        return self._nvml, self._handle

    def sample(self) -> Sample:
        nvml, handle = self._device()
        sm, mem = getattr(nvml, "NVML_CLOCK_SM", 1), getattr(nvml, "NVML_CLOCK_MEM", 2)
        gpu_sensor = getattr(nvml, "NVML_TEMPERATURE_GPU", 0)
        reasons = getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or getattr(
            nvml, "nvmlDeviceGetCurrentClocksThrottleReasons", None
        )
        asks: list[tuple[str, Callable[[], Any], float]] = [
            ("sm_clock_mhz", lambda: nvml.nvmlDeviceGetClockInfo(handle, sm), 1.0),
            ("mem_clock_mhz", lambda: nvml.nvmlDeviceGetClockInfo(handle, mem), 1.0),
            ("temperature_c", lambda: nvml.nvmlDeviceGetTemperature(handle, gpu_sensor), 1.0),
            ("power_w", lambda: nvml.nvmlDeviceGetPowerUsage(handle), 0.001),  # mW
        ]
        if reasons is not None:
            asks.append(("throttle_reasons", lambda: reasons(handle), 1.0))
        readings: dict[str, float] = {}
        for name, ask, scale in asks:
            try:
                value = ask()
            except Exception:  # NVML refuses some readings on some devices: left out
                continue
            readings[name] = int(value) if scale == 1.0 else float(value) * scale
        return readings
