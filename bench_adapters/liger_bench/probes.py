"""The three things a sweep asks of the machine, each behind a small protocol.

* :class:`Device` — is there a GPU, what is it (name, compute capability, memory,
  driver, CUDA runtime, package versions), was an error an out-of-memory, and
  releasing memory between runs;
* :class:`Timer` — latency quantiles of a callable (``triton.testing.do_bench``);
* :class:`MemoryProbe` — peak device memory of a callable
  (``torch.cuda.max_memory_allocated`` after ``reset_peak_memory_stats``).

The sweep takes them as arguments, so record assembly, environment capture and the
correctness gate are tested on a CPU with stand-ins; the CUDA implementations here
import torch, triton and pynvml only inside their methods, so importing this module
(``kernelindex --help``, ``--dry-run``) never needs them.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import attrs

from bench_adapters.recording import timing

# The timer is the recorder's (one definition of do_bench's settings and call).
from bench_adapters.recording.environment import Probed, Sources, probe
from bench_adapters.recording.measure import is_out_of_memory
from bench_adapters.recording.timing import QUANTILES, DoBenchTimer, Timer, TimerSettings

__all__ = [
    "QUANTILES",
    "CudaDevice",
    "Device",
    "DeviceInfo",
    "DoBenchTimer",
    "MemoryProbe",
    "NoDevice",
    "Timer",
    "TimerSettings",
    "TorchMemoryProbe",
]

#: Packages whose versions an environment records, under these names.
SOFTWARE_PACKAGES = ("torch", "triton", "liger-kernel", "transformers")
#: The ones the environment probe does not read itself (it reads torch and triton).
LIGER_PACKAGES = ("liger-kernel", "transformers")


class NoDevice(Exception):
    """No usable CUDA device (or no torch): the message says which, and how to get one."""


@attrs.frozen
class DeviceInfo:
    """What the environment record says about the machine a sweep ran on."""

    #: Exactly as the driver reports it, e.g. ``NVIDIA H200``.
    name: str
    #: Compute capability (major, minor), e.g. (9, 0).
    capability: tuple[int, int]
    memory_bytes: int | None
    #: Component -> version: driver, cuda, torch, triton, liger-kernel, python, ...
    software: Mapping[str, str]
    #: What could not be read, and why (e.g. the driver version): said before a sweep.
    notes: tuple[str, ...] = ()
    #: The environment probe's answers, field by field with their provenance (a real
    #: device has them; a stand-in in tests may not).
    probed: Probed | None = None

    @property
    def architecture(self) -> str:
        """``sm_90`` for capability (9, 0)."""
        major, minor = self.capability
        return f"sm_{major}{minor}"


class Device(Protocol):
    """The GPU a sweep runs on."""

    def require(self) -> None:
        """Raise :class:`NoDevice` unless a CUDA device can run the kernels."""

    def describe(self) -> DeviceInfo:
        """Name, capability, memory and software versions."""

    def is_out_of_memory(self, error: BaseException) -> bool:
        """Whether ``error`` means the device ran out of memory."""

    def release(self) -> None:
        """Drop cached allocations between runs, so one run's memory never burdens the next."""


class MemoryProbe(Protocol):
    """Measures peak device memory of repeated calls."""

    repetitions: int

    def peaks(self, fn: Callable[[], object]) -> list[int]:
        """Peak bytes allocated during each of ``repetitions`` calls of ``fn``."""


def quantile(values: Sequence[float], q: float) -> float:
    """Linear-interpolation quantile, as ``torch.quantile`` computes it by default."""
    if not values:
        raise ValueError("quantile of no values")
    return timing.quantile(sorted(values), q)


def package_versions(
    names: Sequence[str] = SOFTWARE_PACKAGES,
    version_of: Callable[[str], str] = importlib.metadata.version,
) -> dict[str, str]:
    """Installed versions of ``names`` (the ones not installed are left out)."""
    found = {}
    for name in names:
        try:
            found[name] = version_of(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return found


class CudaDevice:
    """The current CUDA device, through torch."""

    def __init__(self, index: int = 0, sources: Sources | None = None) -> None:
        self.index = index
        #: Where the environment probe asks (tests answer from recorded files).
        self.sources = sources
        self._info: DeviceInfo | None = None

    def _torch(self) -> Any:
        try:
            return importlib.import_module("torch")
        except ImportError as error:
            raise NoDevice(
                f"torch is not installed ({error}); install it: "
                "pip install liger-kernel triton torch"
            ) from error

    def require(self) -> None:
        torch = self._torch()
        if not torch.cuda.is_available():
            build = getattr(torch.version, "cuda", None)
            why = "torch was built without CUDA" if not build else "no CUDA device is visible"
            raise NoDevice(
                f"no CUDA device: {why} (torch {torch.__version__}); "
                "Liger's kernels run on an NVIDIA GPU"
            )
        if self.index >= torch.cuda.device_count():
            raise NoDevice(f"no CUDA device {self.index}: {torch.cuda.device_count()} visible")
        torch.cuda.set_device(self.index)

    def describe(self) -> DeviceInfo:
        """Read once per device object: the answer cannot change, and reading the driver
        version may cost ``nvidia-smi``'s timeout."""
        if self._info is None:
            self._info = self._read()
        return self._info

    def _read(self) -> DeviceInfo:
        """The environment probe (NVML, nvidia-smi, torch, package metadata: the one that
        ``kernelindex env`` and the recorder use), plus the Liger packages' versions."""
        torch = self._torch()
        props = torch.cuda.get_device_properties(self.index)
        found = probe(self.index, self.sources)
        software = {
            key: str(fact.value)
            for (section, key), fact in found.facts.items()
            if section == "software"
        }
        notes = list(found.notes)
        if "driver" not in software:
            why = found.missing.get(("software", "driver"), "no probe could read it")
            notes.append(
                f"the NVIDIA driver version could not be read ({why}); "
                "the environment record is written without it"
            )
        for name, version in package_versions(LIGER_PACKAGES).items():
            software.setdefault(name, version)
        # One source for the device's memory: the probe's (NVML's total, else
        # nvidia-smi's, else torch's), the figure the environment record states; torch's
        # total_memory leaves out what the driver reserves, so the two disagree.
        memory = found.facts.get(("hardware", "memoryBytes"))
        return DeviceInfo(
            name=str(props.name),
            capability=(int(props.major), int(props.minor)),
            memory_bytes=int(memory.value)
            if memory is not None
            else int(props.total_memory) or None,
            software=software,
            notes=tuple(notes),
            probed=found,
        )

    def is_out_of_memory(self, error: BaseException) -> bool:
        """The recorder's rule (torch's OutOfMemoryError, MemoryError, or the CUDA text)."""
        return is_out_of_memory(error)

    def release(self) -> None:
        import gc

        gc.collect()
        torch = self._torch()
        torch.cuda.synchronize()
        torch.cuda.empty_cache()


class TorchMemoryProbe:
    """Peak memory as Liger's harness reads it: reset the peak, call, read the peak."""

    def __init__(self, repetitions: int = 10) -> None:
        self.repetitions = repetitions

    def peaks(self, fn: Callable[[], object]) -> list[int]:
        torch = importlib.import_module("torch")
        found = []
        for _ in range(self.repetitions):
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            fn()
            torch.cuda.synchronize()
            found.append(int(torch.cuda.max_memory_allocated()))
        return found
