"""The ExecutionEnvironment of this machine, read off the machine itself.

:func:`probe` asks, in order: NVML (``nvidia-ml-py``, imported as ``pynvml``) for each
GPU's name, count, memory, compute capability, clocks (application and max), power
limit, ECC and the driver and CUDA driver versions; ``nvidia-smi -q -x`` for the same
when NVML is missing or refuses; torch (when installed, and only if CUDA is
available) for the SM count, which neither NVML nor nvidia-smi reports, and the CUDA
runtime it was built with; package metadata for the torch and triton versions (not
imported); and the platform for Python, the OS and the CPU. On a machine with no GPU the CPU is
the device, so the probe also reads what its timings depend on: the logical CPUs this
process may run on, the clock policy (cpufreq governor and driver, turbo or boost, from
``/sys`` where readable) and, when numpy can be imported, its version and the BLAS it
was built with (``numpy.show_config``).

Every field carries where it came from in the spec's ``provenance`` map. v1alpha1's
origins have no ``probed`` (adding an enum value is a change the released version
forbids: ``schema diff`` reports ``ENUM_VALUE_ADDED``), so a probed field has origin
``record`` — the machine's own statement about itself — with a detail that begins
``probed:`` and names the call that answered. A field no probe could read is absent
and listed as ``unknown`` with why: never guessed. A machine with no GPU, no NVML and
no torch is still a valid environment: vendor and product ``none``, saying so.

What the caller knows and no probe can (``kernelindex env --set torch=2.5.1``) comes
as :data:`KNOWN_KEYS`: each key names one spec field; a declared value has origin
``caller`` and only fills a field the probe left unknown.

The answers are injected (:class:`Sources`), so everything is tested on a CPU against
recorded answers (tests/fixtures/gpu/).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import os
import platform
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from bench_adapters.common.gpus import resolve_gpu
from bench_adapters.common.names import gpu_slug, record_name
from bench_adapters.common.provenance import (
    CALLER,
    CATALOG,
    RECORD,
    UNKNOWN,
    DeclarationError,
    ProvenanceMap,
    split_setting,
)
from bench_adapters.common.records import environment_record as environment_envelope
from kernelindex_sdk.base.recordformat import DEVICE_NAME_KEY, HARDWARE_KEY, PRODUCT_KEY, VENDOR_KEY
from kernelindex_sdk.models import Metadata

#: The origin of a probed field (v1alpha1 has no ``probed`` origin: see the module doc).
PROBED = RECORD
#: How long ``nvidia-smi`` may take before it is given up: a hung one must not eat a
#: short GPU window.
NVIDIA_SMI_TIMEOUT_S = 10
#: Packages whose versions an environment records (read from metadata, never imported).
PACKAGES = ("torch", "triton")

#: The hardware fields the probe fills, in the order a record lists them.
HARDWARE_ORDER = (
    "vendor",
    "product",
    "formFactor",
    "architecture",
    "deviceName",
    "memoryBytes",
    "count",
    "computeCapability",
    "multiprocessors",
    "memoryClockHz",
    "maxClockHz",
    "applicationClockHz",
    "applicationMemoryClockHz",
    "powerLimitMilliwatts",
    "eccEnabled",
    "hostCpu",
    "hostCpuCores",
    "hostCpuFrequencyPolicy",
)
#: GPU facts a reader wants: each one not found is listed as unknown.
GPU_FIELDS = HARDWARE_ORDER[4:15]
#: Software components a reader wants: each one not found is listed as unknown.
SOFTWARE_FIELDS = ("driver", "cuda-driver", "cuda", "torch", "triton", "python", "os")

_INTEGER = "integer"
_BOOLEAN = "boolean"
_TEXT = "text"


@attrs.frozen
class Key:
    """A ``--set`` key: the spec path it fills and the type its value has."""

    path: tuple[str, str]
    type: str


#: Hardware fields whose values are text (the rest are whole numbers, ECC a flag).
_TEXT_FIELDS = frozenset(
    (
        "vendor",
        "product",
        "formFactor",
        "architecture",
        "deviceName",
        "computeCapability",
        "hostCpu",
        "hostCpuFrequencyPolicy",
    )
)
#: Every key ``--set`` accepts (one definition; the usage error lists them): each
#: hardware field by its wire name, each software component by its name.
KNOWN_KEYS: Mapping[str, Key] = {
    **{
        name: Key(
            ("hardware", name),
            _BOOLEAN if name == "eccEnabled" else _TEXT if name in _TEXT_FIELDS else _INTEGER,
        )
        for name in HARDWARE_ORDER
    },
    **{name: Key(("software", name), _TEXT) for name in SOFTWARE_FIELDS},
}


@attrs.frozen
class Fact:
    """One field's value and the call that answered it."""

    value: Any
    detail: str


@attrs.define
class Probed:
    """What the probe found: facts by spec path, and why each missing one is missing."""

    facts: dict[tuple[str, str], Fact] = attrs.field(factory=dict)
    missing: dict[tuple[str, str], str] = attrs.field(factory=dict)
    #: Things a person should hear (other GPU models in the machine, a probe that failed).
    notes: list[str] = attrs.field(factory=list)

    def put(self, path: tuple[str, str], value: Any, detail: str) -> None:
        """Record a fact unless an earlier (better) source already gave it."""
        if value is None or value == "" or path in self.facts:
            return
        self.facts[path] = Fact(value, detail)
        self.missing.pop(path, None)

    def lack(self, path: tuple[str, str], why: str) -> None:
        """Say why a field could not be read (the first reason stands)."""
        if path not in self.facts:
            self.missing.setdefault(path, why)

    def value(self, path: tuple[str, str]) -> Any:
        fact = self.facts.get(path)
        return None if fact is None else fact.value

    @property
    def has_gpu(self) -> bool:
        return ("hardware", "deviceName") in self.facts


# --------------------------------------------------------------------------- sources


def _run_nvidia_smi(argv: Sequence[str]) -> str:
    if shutil.which(argv[0]) is None:
        raise FileNotFoundError(f"{argv[0]} is not on PATH")
    return subprocess.run(
        list(argv), capture_output=True, text=True, check=True, timeout=NVIDIA_SMI_TIMEOUT_S
    ).stdout


def _import_pynvml() -> Any:
    return importlib.import_module("pynvml")


def _torch_facts(index: int) -> dict[str, Any]:
    """What torch says of device ``index``; raises when torch or CUDA is not there."""
    torch = importlib.import_module("torch")
    facts: dict[str, Any] = {}
    if getattr(torch.version, "cuda", None):
        facts["cuda"] = str(torch.version.cuda)
    if not torch.cuda.is_available():
        facts["why"] = "torch sees no CUDA device"
        return facts
    props = torch.cuda.get_device_properties(index)
    facts.update(
        name=str(props.name),
        major=int(props.major),
        minor=int(props.minor),
        total_memory=int(props.total_memory),
        multi_processor_count=int(props.multi_processor_count),
        count=int(torch.cuda.device_count()),
    )
    return facts


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "Hardware") and value.strip():
                    return " ".join(value.split())[:4096]
    except OSError:
        pass
    return platform.processor() or None


def _version(name: str) -> str:
    return importlib.metadata.version(name)


def _cores() -> int | None:
    """The logical CPUs this process may run on (its affinity where the OS has one)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count()


def _read_sys(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip() or None
    except OSError:
        return None


def frequency_policy(root: Path = Path("/sys/devices/system/cpu")) -> str | None:
    """``governor performance, driver intel_pstate, turbo on`` (what ``/sys`` says)."""
    parts = []
    for name, words in (("scaling_governor", "governor"), ("scaling_driver", "driver")):
        value = _read_sys(root / "cpu0" / "cpufreq" / name)
        if value:
            parts.append(f"{words} {value}")
    no_turbo = _read_sys(root / "intel_pstate" / "no_turbo")
    if no_turbo in ("0", "1"):
        parts.append("turbo off" if no_turbo == "1" else "turbo on")
    boost = _read_sys(root / "cpufreq" / "boost")
    if boost in ("0", "1"):
        parts.append("boost on" if boost == "1" else "boost off")
    return " ".join(", ".join(parts).split())[:4096] or None


def _numpy_facts() -> dict[str, str]:
    """numpy's version and the BLAS it was built with; raises ImportError without numpy."""
    numpy = importlib.import_module("numpy")
    facts = {"numpy": str(numpy.__version__)}
    try:
        config = numpy.show_config(mode="dicts")  # numpy 1.26 and later
    except TypeError:
        return facts
    blas = (config or {}).get("Build Dependencies", {}).get("blas", {})
    name, version = blas.get("name"), blas.get("version")
    if name and blas.get("found", True):
        facts["numpy-blas"] = f"{name} {version}".strip() if version else str(name)
    return facts


@attrs.frozen
class Sources:
    """Where the probe asks: each replaceable, so tests answer from recorded files.

    ``nvml``: returns the ``pynvml`` module (raises when it is not installed).
    ``nvidia_smi``: runs ``nvidia-smi`` with the given arguments, returns its stdout.
    ``torch``: what torch says of a device (see :func:`_torch_facts`).
    ``version``: an installed package's version (``PackageNotFoundError`` if none).
    """

    nvml: Callable[[], Any] = _import_pynvml
    nvidia_smi: Callable[[Sequence[str]], str] = _run_nvidia_smi
    torch: Callable[[int], dict[str, Any]] = _torch_facts
    version: Callable[[str], str] = _version
    python: Callable[[], str] = platform.python_version
    os: Callable[[], str] = lambda: f"{platform.system()} {platform.release()}".strip()
    cpu: Callable[[], str | None] = _cpu_model
    cores: Callable[[], int | None] = _cores
    frequency_policy: Callable[[], str | None] = frequency_policy
    numpy: Callable[[], dict[str, str]] = _numpy_facts


# --------------------------------------------------------------------------- the probe


def probe(index: int = 0, sources: Sources | None = None) -> Probed:
    """Read this machine: GPU ``index`` (and how many of its model), software, host."""
    src = sources or Sources()
    found = Probed()
    why_nvml = _probe_nvml(found, index, src)
    why_smi = None
    if why_nvml is not None:
        why_smi = _probe_nvidia_smi(found, index, src)
    _probe_torch(found, index, src)
    for package in PACKAGES:
        try:
            found.put(("software", package), src.version(package), "probed: package metadata")
        except importlib.metadata.PackageNotFoundError:
            found.lack(("software", package), f"{package} is not installed")
        except Exception as error:  # a broken install: say so, do not guess
            found.lack(("software", package), _why(f"{package} metadata", error))
    found.put(("software", "python"), src.python(), "probed: platform.python_version()")
    found.put(("software", "os"), src.os(), "probed: platform.system() and release()")
    found.put(("hardware", "hostCpu"), src.cpu(), "probed: /proc/cpuinfo model name")
    if not found.has_gpu:
        _probe_cpu(found, src)
        reasons = "; ".join(r for r in (why_nvml, why_smi) if r) or "no GPU was found"
        for field in GPU_FIELDS:
            found.lack(("hardware", field), f"no GPU: {reasons}")
        for component in ("driver", "cuda-driver"):
            found.lack(("software", component), f"no NVIDIA driver answered: {reasons}")
    for component in SOFTWARE_FIELDS:
        found.lack(("software", component), "no probe could read it")
    for field in GPU_FIELDS:
        found.lack(("hardware", field), _MISSING_WHY.get(field, "no probe reported it"))
    found.lack(("hardware", "hostCpu"), "the OS does not name the CPU model")
    return found


def _probe_cpu(found: Probed, src: Sources) -> None:
    """What a CPU's timings depend on (the module doc): read where no GPU is the device."""
    found.put(("hardware", "hostCpuCores"), src.cores(), "probed: os.sched_getaffinity(0)")
    found.lack(("hardware", "hostCpuCores"), "the OS does not say how many CPUs there are")
    found.put(
        ("hardware", "hostCpuFrequencyPolicy"),
        src.frequency_policy(),
        "probed: /sys/devices/system/cpu cpufreq, intel_pstate",
    )
    found.lack(
        ("hardware", "hostCpuFrequencyPolicy"),
        "the OS does not expose cpufreq in /sys/devices/system/cpu (a VM or container)",
    )
    try:
        facts = src.numpy()
    except ImportError:
        return  # no numpy: nothing to say of it
    except Exception as error:  # a broken numpy: say so, do not guess
        found.lack(("software", "numpy"), _why("numpy", error))
        return
    for component, value in facts.items():
        found.put(("software", component), value, "probed: numpy.show_config(mode='dicts')")


_MISSING_WHY = {
    "multiprocessors": "neither NVML nor nvidia-smi reports the SM count; torch with CUDA "
    "does, and it was not available",
    "computeCapability": "not reported by the driver's answer (NVML answers it; "
    "nvidia-smi -q -x may not)",
}


def _why(what: str, error: BaseException) -> str:
    text = " ".join(str(error).split()) or "(no message)"
    return f"{what}: {type(error).__name__}: {text[:300]}"


def _probe_nvml(found: Probed, index: int, src: Sources) -> str | None:
    """Fill what NVML answers; None when it answered, else why it could not."""
    try:
        nvml = src.nvml()
        nvml.nvmlInit()
    except Exception as error:  # missing module, missing library, driver not loaded
        return _why("NVML", error)
    try:
        count = int(nvml.nvmlDeviceGetCount())
        if count <= index:
            return f"NVML: {count} GPU(s), no GPU {index}"
        handle = nvml.nvmlDeviceGetHandleByIndex(index)

        def ask(path: tuple[str, str], call: str, convert: Callable[..., Any], *args: Any) -> None:
            try:
                answer = getattr(nvml, call)(*args)
                found.put(path, convert(answer), f"probed: NVML {call}")
            except Exception as error:  # NotSupported, NoPermission...: that field only
                found.lack(path, _why(f"NVML {call}", error))

        ask(("hardware", "deviceName"), "nvmlDeviceGetName", _text, handle)
        name = found.value(("hardware", "deviceName"))
        same = 0
        for other in range(count):
            try:
                other_name = _text(nvml.nvmlDeviceGetName(nvml.nvmlDeviceGetHandleByIndex(other)))
            except Exception:
                continue
            if other_name == name:
                same += 1
            else:
                found.notes.append(f"GPU {other} is another model ({other_name}); not described")
        if same:
            found.put(
                ("hardware", "count"),
                same,
                "probed: NVML nvmlDeviceGetCount, GPUs of this model",
            )
        ask(("hardware", "memoryBytes"), "nvmlDeviceGetMemoryInfo", _total, handle)
        ask(
            ("hardware", "computeCapability"),
            "nvmlDeviceGetCudaComputeCapability",
            _capability,
            handle,
        )
        sm, mem = getattr(nvml, "NVML_CLOCK_SM", 1), getattr(nvml, "NVML_CLOCK_MEM", 2)
        ask(("hardware", "maxClockHz"), "nvmlDeviceGetMaxClockInfo", _mhz, handle, sm)
        ask(("hardware", "memoryClockHz"), "nvmlDeviceGetMaxClockInfo", _mhz, handle, mem)
        ask(("hardware", "applicationClockHz"), "nvmlDeviceGetApplicationsClock", _mhz, handle, sm)
        ask(
            ("hardware", "applicationMemoryClockHz"),
            "nvmlDeviceGetApplicationsClock",
            _mhz,
            handle,
            mem,
        )
        ask(
            ("hardware", "powerLimitMilliwatts"),
            "nvmlDeviceGetEnforcedPowerLimit",
            _positive,
            handle,
        )
        enabled = getattr(nvml, "NVML_FEATURE_ENABLED", 1)
        ask(
            ("hardware", "eccEnabled"),
            "nvmlDeviceGetEccMode",
            lambda modes: int(modes[0]) == enabled,
            handle,
        )
        ask(("software", "driver"), "nvmlSystemGetDriverVersion", _text)
        cuda_call = (
            "nvmlSystemGetCudaDriverVersion_v2"
            if hasattr(nvml, "nvmlSystemGetCudaDriverVersion_v2")
            else "nvmlSystemGetCudaDriverVersion"
        )
        ask(("software", "cuda-driver"), cuda_call, _cuda_version)
        return None
    except Exception as error:
        return _why("NVML", error)
    finally:
        with contextlib.suppress(Exception):
            nvml.nvmlShutdown()


def _probe_nvidia_smi(found: Probed, index: int, src: Sources) -> str | None:
    """Fill what ``nvidia-smi -q -x`` answers; None when it answered, else why not."""
    try:
        text = src.nvidia_smi(["nvidia-smi", "-q", "-x"])
    except subprocess.CalledProcessError as error:
        said = " ".join(str(error.stdout or error.stderr or "").split())[:200]
        return f"nvidia-smi: exit {error.returncode}" + (f": {said}" if said else "")
    except (OSError, subprocess.SubprocessError) as error:
        return _why("nvidia-smi", error)
    try:
        gpus = parse_nvidia_smi(text)
    except ValueError as error:
        return f"nvidia-smi: {error}"
    if len(gpus) <= index:
        return f"nvidia-smi: {len(gpus)} GPU(s), no GPU {index}"
    facts = gpus[index]
    for key, (value, where) in facts.items():
        found.put(key, value, f"probed: nvidia-smi -q -x {where}")
    name = facts.get(("hardware", "deviceName"), (None, ""))[0]
    same = sum(1 for gpu in gpus if gpu.get(("hardware", "deviceName"), (None, ""))[0] == name)
    for number, gpu in enumerate(gpus):
        other = gpu.get(("hardware", "deviceName"), (None, ""))[0]
        if other != name:
            found.notes.append(f"GPU {number} is another model ({other}); not described")
    found.put(("hardware", "count"), same, "probed: nvidia-smi -q -x, GPUs of this model")
    return None


def _probe_torch(found: Probed, index: int, src: Sources) -> None:
    try:
        facts = src.torch(index)
    except ImportError as error:
        found.lack(("software", "cuda"), f"torch is not installed ({error})")
        found.lack(
            ("hardware", "multiprocessors"),
            "torch is not installed; NVML and nvidia-smi do not report the SM count",
        )
        return
    except Exception as error:
        found.lack(("hardware", "multiprocessors"), _why("torch", error))
        return
    if "cuda" in facts:
        found.put(("software", "cuda"), facts["cuda"], "probed: torch.version.cuda (runtime)")
    else:
        found.lack(("software", "cuda"), "torch was built without CUDA")
    if "name" not in facts:
        found.lack(("hardware", "multiprocessors"), str(facts.get("why", "torch sees no GPU")))
        return
    where = f"probed: torch.cuda.get_device_properties({index})"
    found.put(("hardware", "multiprocessors"), facts["multi_processor_count"], where)
    # NVML and nvidia-smi came first; torch fills what neither answered.
    found.put(("hardware", "deviceName"), facts["name"], where)
    found.put(("hardware", "computeCapability"), f"{facts['major']}.{facts['minor']}", where)
    found.put(("hardware", "memoryBytes"), facts["total_memory"] or None, where)
    found.put(("hardware", "count"), facts.get("count"), "probed: torch.cuda.device_count()")


# --------------------------------------------------------------------------- nvidia-smi XML


_UNIT = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]+)\s*$")
_SCALE = {
    "mib": 2**20,
    "gib": 2**30,
    "kib": 2**10,
    "b": 1,
    "mhz": 10**6,
    "ghz": 10**9,
    "w": 1000,
    "mw": 1,
}


def _quantity(text: str | None, where: str) -> int | None:
    """``81559 MiB`` → bytes, ``1980 MHz`` → Hz, ``700.00 W`` → mW; ``N/A`` → None."""
    if text is None:
        return None
    match = _UNIT.match(text)
    if match is None:
        if text.strip() in ("N/A", "[N/A]", "", "Not Supported", "[Not Supported]"):
            return None
        raise ValueError(f"{where}: {text.strip()[:60]!r} is not a number with a unit")
    scale = _SCALE.get(match.group(2).lower())
    if scale is None:
        raise ValueError(f"{where}: unknown unit {match.group(2)!r}")
    value = round(float(match.group(1)) * scale)
    return value if value > 0 else None


def parse_nvidia_smi(text: str) -> list[dict[tuple[str, str], tuple[Any, str]]]:
    """Each ``<gpu>`` of ``nvidia-smi -q -x`` → spec path → (value, element it came from)."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as error:
        raise ValueError(f"its XML cannot be read ({error})") from None
    if root.tag != "nvidia_smi_log":
        raise ValueError(f"its XML is <{root.tag}>, not <nvidia_smi_log>")
    system: dict[tuple[str, str], tuple[Any, str]] = {}
    for tag, component in (("driver_version", "driver"), ("cuda_version", "cuda-driver")):
        value = (root.findtext(tag) or "").strip()
        if value and value != "N/A":
            system[("software", component)] = (value, f"/nvidia_smi_log/{tag}")
    gpus = []
    for gpu in root.findall("gpu"):
        facts = dict(system)
        for path, tags, convert in _SMI_FIELDS:
            for tag in tags:
                raw = gpu.findtext(tag)
                read = None if raw is None else convert(raw, tag)
                if read is not None:
                    facts[path] = (read, f"/nvidia_smi_log/gpu/{tag}")
                    break
        gpus.append(facts)
    return gpus


def _name(raw: str, where: str) -> str | None:
    return raw.strip() or None


def _cc_text(raw: str, where: str) -> str | None:
    value = raw.strip()
    return value if re.fullmatch(r"[0-9]{1,3}\.[0-9]{1,3}", value) else None


def _ecc(raw: str, where: str) -> bool | None:
    value = raw.strip().lower()
    return True if value == "enabled" else False if value == "disabled" else None


#: Spec path → the ``<gpu>`` elements that may hold it (first present wins), and how
#: its text reads. Power: ``gpu_power_readings`` since driver 535, ``power_readings``
#: before it.
_SMI_FIELDS: tuple[tuple[tuple[str, str], tuple[str, ...], Callable[[str, str], Any]], ...] = (
    (("hardware", "deviceName"), ("product_name",), _name),
    (("hardware", "memoryBytes"), ("fb_memory_usage/total",), _quantity),
    (("hardware", "computeCapability"), ("compute_cap",), _cc_text),
    (("hardware", "maxClockHz"), ("max_clocks/sm_clock",), _quantity),
    (("hardware", "memoryClockHz"), ("max_clocks/mem_clock",), _quantity),
    (("hardware", "applicationClockHz"), ("applications_clocks/graphics_clock",), _quantity),
    (("hardware", "applicationMemoryClockHz"), ("applications_clocks/mem_clock",), _quantity),
    (
        ("hardware", "powerLimitMilliwatts"),
        (
            "gpu_power_readings/current_power_limit",
            "power_readings/enforced_power_limit",
            "power_readings/power_limit",
        ),
        _quantity,
    ),
    (("hardware", "eccEnabled"), ("ecc_mode/current_ecc",), _ecc),
)


# --------------------------------------------------------------------------- NVML answers


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _total(info: Any) -> int | None:
    total = int(info.total)
    return total if total > 0 else None


def _capability(pair: Any) -> str:
    major, minor = pair
    return f"{int(major)}.{int(minor)}"


def _mhz(value: Any) -> int | None:
    return int(value) * 10**6 if int(value) > 0 else None


def _positive(value: Any) -> int | None:
    return int(value) if int(value) > 0 else None


def _cuda_version(value: Any) -> str:
    """NVML's 12040 → ``12.4``."""
    number = int(value)
    return f"{number // 1000}.{(number % 1000) // 10}"


# --------------------------------------------------------------------------- the record


def parse_settings(items: Sequence[str]) -> dict[str, Any]:
    """``["torch=2.5.1", "count=8"]`` → key → typed value; an unknown key names the known.

    Raises :class:`~bench_adapters.common.provenance.DeclarationError` (one line), also
    for an item that is not UTF-8 text.
    """
    declared: dict[str, Any] = {}
    for item in items:
        key, value = split_setting(item, DeclarationError)
        known = KNOWN_KEYS.get(key)
        if known is None:
            raise DeclarationError(
                f"--set {key!r}: unknown key; known keys: {', '.join(KNOWN_KEYS)}"
            )
        if key in declared:
            raise DeclarationError(f"--set {key}: given twice")
        if not value:
            raise DeclarationError(f"--set {key}=: an empty value declares nothing")
        if known.type == _INTEGER:
            if not value.isascii() or not value.isdigit() or len(value) > 15 or int(value) < 1:
                raise DeclarationError(f"--set {key}={value!r}: expected a positive whole number")
            declared[key] = int(value)
        elif known.type == _BOOLEAN:
            if value not in ("true", "false"):
                raise DeclarationError(f"--set {key}={value!r}: expected true or false")
            declared[key] = value == "true"
        else:
            declared[key] = value
    return declared


def environment_record(
    found: Probed,
    declared: Mapping[str, Any] | None = None,
    *,
    extra_software: Mapping[str, tuple[str, str]] | None = None,
    name_prefix: str = "env",
) -> dict[str, Any]:
    """The ExecutionEnvironment of a probe, with the caller's declarations and provenance.

    ``extra_software``: more components (``liger-kernel``) → (version, provenance
    detail), for a harness that knows what else it measured.
    """
    provenance = ProvenanceMap()
    hardware: dict[str, Any] = {}
    software: dict[str, str] = {}
    device_name = found.value(("hardware", "deviceName"))
    declared = dict(declared or {})
    if isinstance(device_name, str):
        resolved = resolve_gpu(device_name)
        for key, value in resolved.spec.items():
            hardware[key] = value
            provenance.add(("hardware", key), CATALOG, f"the GPU catalog, from {device_name!r}")
        if not resolved.known:
            provenance.add(
                ("hardware", "product"), PROBED, "probed: the device name (not in the GPU catalog)"
            )
    else:
        declared_name = declared.get("deviceName") or declared.get("product")
        hardware["vendor"] = "none"
        hardware["product"] = "none"
        why = found.missing.get(("hardware", "deviceName"), "no GPU was found")
        why = why.removeprefix("no GPU: ")
        for key in ("vendor", "product"):
            provenance.add(("hardware", key), PROBED, f"probed: no GPU on this machine ({why})")
        if declared_name:
            resolved = resolve_gpu(str(declared_name))
            hardware.update(resolved.spec)
            for key in resolved.spec:
                provenance.add(("hardware", key), CALLER, "--set, through the GPU catalog")
    capability = found.value(("hardware", "computeCapability"))
    for (section, key), fact in found.facts.items():
        target = hardware if section == HARDWARE_KEY else software
        target[key] = fact.value
        provenance.add((section, key), PROBED, fact.detail)
    if isinstance(capability, str):
        major, _, minor = capability.partition(".")
        hardware["architecture"] = f"sm_{major}{minor}"
        provenance.add(("hardware", "architecture"), PROBED, "probed: from the compute capability")
    for component, (version, detail) in (extra_software or {}).items():
        if component not in software:
            software[component] = version
            provenance.add(("software", component), PROBED, detail)
    for key, value in declared.items():
        section, field = KNOWN_KEYS[key].path
        target = hardware if section == HARDWARE_KEY else software
        if (section, field) in found.facts:
            continue  # a probed value stands (ignored_declarations says so)
        target[field] = value
        provenance.add((section, field), CALLER, f"--set {key}={value}"[:4096])
    for (section, field), why in found.missing.items():
        target = hardware if section == HARDWARE_KEY else software
        if field not in target:
            provenance.add((section, field), UNKNOWN, why)
    ordered_hardware = {key: hardware[key] for key in HARDWARE_ORDER if key in hardware}
    ordered_hardware.update({k: v for k, v in hardware.items() if k not in ordered_hardware})
    label = str(
        hardware.get(DEVICE_NAME_KEY)
        or ("no-gpu" if hardware[VENDOR_KEY] == "none" else hardware[PRODUCT_KEY])
    )
    torch_version = software.get("torch", "unknown")
    metadata = Metadata(
        name=record_name(f"{name_prefix}-{gpu_slug(label)}"),
        title=f"{label} · torch {torch_version} · CUDA {software.get('cuda', 'unknown')}"
        f" · driver {software.get('driver', 'unknown')}",
    )
    return environment_envelope(
        metadata, ordered_hardware, dict(sorted(software.items())), provenance.as_json()
    )


def ignored_declarations(found: Probed, declared: Mapping[str, Any]) -> list[str]:
    """The declarations a probed value overrides, said as warnings."""
    notes = []
    for key, value in declared.items():
        fact = found.facts.get(KNOWN_KEYS[key].path)
        if fact is not None and fact.value != value:
            notes.append(f"--set {key}={value} ignored: the machine reports {fact.value}")
    return notes


def gpu_available(index: int = 0) -> tuple[bool, str]:
    """Whether torch sees CUDA device ``index``, and if not why (for skips)."""
    try:
        torch = importlib.import_module("torch")
    except ImportError as error:
        return False, f"torch is not installed ({error})"
    if not torch.cuda.is_available():
        return False, f"no CUDA device (torch {torch.__version__})"
    if torch.cuda.device_count() <= index:
        return False, f"no CUDA device {index}"
    return True, ""
