"""Facts about JSON on the wire that several layers need, each defined once.

The keys of a record that readers of plain dicts need, the JSON Schema dialect the
schemas are written in, the limits of strict JSON (what the intake reads, what the
facade and the adapters may write), the JSON type name of a Python
value (for messages), and RFC 3339 timestamps as the schemas allow them (parsed the
same way by the semantic checks and by ``compare``).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Final

#: The apiVersion records are written in: the newest this SDK has schemas for.
#: (The models spell it in their ``Literal`` types; a test holds them to this.)
CURRENT_API_VERSION: Final = "kernelindex.dev/v1alpha1"

#: ``observedAt`` of a run whose source records no time (nvbench, KernelBench): the
#: schema requires one, and no guess (a file's mtime, the import's clock) would be
#: true, so a fixed instant that cannot be mistaken for a real one stands in, and the
#: run carries :data:`OBSERVED_AT_UNKNOWN` to say so. Readers (``kernelindex ls``)
#: count such a run as undated, never as one from 1970.
UNKNOWN_OBSERVED_AT: Final = "1970-01-01T00:00:00.000Z"
#: The quality flag of a run whose ``observedAt`` is :data:`UNKNOWN_OBSERVED_AT`.
OBSERVED_AT_UNKNOWN: Final = "observed_at_unknown"
#: The quality flag of a run timed by a timer injected through a test seam (a fake, or
#: a caller's own): its figures are not a measurement kernelindex made, and its
#: protocol's ``timer`` is ``unknown``. Readers show it; gates refuse it.
INJECTED_TIMER: Final = "injected_timer"

#: Keys of a record read off plain dicts (parsed JSON) by code that does not build the
#: models (``compare``, the adapters' assembly): the models name the same members
#: (``wire_name`` of their attributes; ``tests/test_one_definition.py`` holds the two
#: together), so a renamed member is one edit here and one in the model. A run's
#: reference fields are per apiVersion: ``checks.for_version(v).REFERENCES``.
API_VERSION_KEY: Final = "apiVersion"
KIND_KEY: Final = "kind"
METADATA_KEY: Final = "metadata"
SPEC_KEY: Final = "spec"
#: Metadata members.
NAME_KEY: Final = "name"
TITLE_KEY: Final = "title"
LABELS_KEY: Final = "labels"
#: Run spec members (and those of its result, measurements and source-native part).
STATUS_KEY: Final = "status"
REASON_KEY: Final = "reason"
OBSERVED_AT_KEY: Final = "observedAt"
QUALITY_FLAGS_KEY: Final = "qualityFlags"
#: The quality flag of a run whose latency is mostly the host's time: its median is over
#: twice the GPU's own time (a CUDA-graph replay of the same call, recorded beside it).
HOST_BOUND_FLAG: Final = "host-bound"
MEASUREMENTS_KEY: Final = "measurements"
SOURCE_NATIVE_KEY: Final = "sourceNative"
TIMING_KEY: Final = "timing"
SOURCE_KEY: Final = "source"
BENCHMARK_KEY: Final = "benchmark"
EXTERNAL_ID_KEY: Final = "externalId"
METRICS_KEY: Final = "metrics"
LATENCY_NS_KEY: Final = "latencyNs"
PRIMARY_STATISTIC_KEY: Final = "primaryStatistic"
SAMPLES_KEY: Final = "samples"
METRIC_KEY: Final = "metric"
UNIT_KEY: Final = "unit"
STATISTIC_KEY: Final = "statistic"
VALUE_KEY: Final = "value"
#: Protocol spec members.
HARNESS_KEY: Final = "harness"
MEASUREMENT_KEY: Final = "measurement"
COMPARABILITY_KEY: Final = "comparability"
#: Where each field of a protocol's or an environment's spec came from.
PROVENANCE_KEY: Final = "provenance"
#: Members of a protocol's measurement settings (written in the adapters' own order,
#: timer or probe first, which is not the model's).
TIMER_KEY: Final = "timer"
MEMORY_PROBE_KEY: Final = "memoryProbe"
QUANTILES_KEY: Final = "quantiles"
WARMUP_MS_KEY: Final = "warmupMs"
REPETITION_MS_KEY: Final = "repetitionMs"
REPETITIONS_KEY: Final = "repetitions"
WARMUP_ITERATIONS_KEY: Final = "warmupIterations"
HARNESS_SETTINGS_KEY: Final = "harnessSettings"
FLUSH_L2_CACHE_KEY: Final = "flushL2Cache"
GRAD_TO_NONE_KEY: Final = "gradToNone"
#: Workload spec members.
KERNEL_KEY: Final = "kernel"
PASS_KEY: Final = "pass"
DTYPE_KEY: Final = "dtype"
PARAMETERS_KEY: Final = "parameters"
SETTINGS_KEY: Final = "settings"
#: Implementation spec members (a package has a name and a version).
PROVIDER_KEY: Final = "provider"
BACKEND_KEY: Final = "backend"
PACKAGE_KEY: Final = "package"
VERSION_KEY: Final = "version"
ENTRY_POINT_KEY: Final = "entryPoint"
#: Environment spec members, and the hardware members read or written by hand.
HARDWARE_KEY: Final = "hardware"
SOFTWARE_KEY: Final = "software"
VENDOR_KEY: Final = "vendor"
PRODUCT_KEY: Final = "product"
FORM_FACTOR_KEY: Final = "formFactor"
ARCHITECTURE_KEY: Final = "architecture"
DEVICE_NAME_KEY: Final = "deviceName"
COMPUTE_CAPABILITY_KEY: Final = "computeCapability"
ECC_ENABLED_KEY: Final = "eccEnabled"
COUNT_KEY: Final = "count"

#: The dialect of every kernelindex schema.
DRAFT_2020_12: Final = "https://json-schema.org/draft/2020-12/schema"

#: Deepest nesting of arrays/objects strict intake accepts. Real records are < 10 deep;
#: the limit exists so hostile input cannot exhaust the stack of a recursive parser.
MAX_DEPTH: Final = 256

#: Largest integer an IEEE double (and so JCS, I-JSON, JavaScript) holds exactly.
MAX_SAFE_INTEGER: Final = 2**53 - 1

#: Longest integer literal a schema file may hold (``big_integers``): Python's own
#: ``int()`` refuses more than 4300 digits, and no bound needs a tenth of them.
MAX_BIG_INTEGER_DIGITS: Final = 400

_JSON_TYPES: Final = {
    dict: "object",
    list: "array",
    str: "string",
    bool: "boolean",
    int: "number",
    float: "number",
    type(None): "null",
}


def json_type(value: Any) -> str:
    """The JSON type of a Python value, as JSON names them (``object``, ``array``,
    ``string``, ``number`` — integers too —, ``boolean``, ``null``), or its Python type
    name for anything else."""
    name = _JSON_TYPES.get(type(value))
    if name is not None:
        return name
    for python, json_name in _JSON_TYPES.items():
        if isinstance(value, python):
            return json_name
    return type(value).__name__


#: ``date-time`` as the schemas' pattern accepts it (a 4-digit year, ``T``, an optional
#: fraction of any length, ``Z`` or a numeric offset), RFC 3339's lower-case and
#: space-separated forms too.
_TIMESTAMP: Final = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?"
    r"([Zz]|[+-][0-9]{2}:[0-9]{2})"
)


def parse_timestamp(text: str) -> datetime | None:
    """An aware ``datetime`` of an RFC 3339 timestamp, or None when it is not one.

    Written out rather than ``datetime.fromisoformat`` because Python 3.10's takes
    neither ``Z`` nor fractions of other than 3 or 6 digits; the fraction is cut to
    microseconds (what ``datetime`` holds), and a leap second (``:60``, which
    ``datetime`` cannot hold) reads as the second before it.
    """
    match = _TIMESTAMP.fullmatch(text)
    if match is None:
        return None
    date, hour, minute, second, fraction, offset = match.groups()
    second = min(second, "59")
    fraction = ((fraction or "") + "000000")[:6]
    offset = "+00:00" if offset in ("Z", "z") else offset
    try:
        return datetime.fromisoformat(f"{date}T{hour}:{minute}:{second}.{fraction}{offset}")
    except ValueError:  # a date that does not exist (2024-02-30), hour 24, ...
        return None
