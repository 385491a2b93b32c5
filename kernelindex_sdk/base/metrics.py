"""The two metrics a run can measure, and every name they go by (one definition).

Records say ``latency`` or ``peak_memory`` (the measurement schema's words); reports
say ``latency`` and ``peak memory``; Liger's benchmark CSV and people at a prompt say
``speed`` and ``memory``. Each of these names is defined here once, and everything
else — the runs' metric, table headings, the ratio's name, the base unit in
machine-readable output, what ``--metric`` accepts — reads it from here. A module of
the lowest layer, importing nothing, so that a command's options can name the metrics
without loading the compare machinery at start-up.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

#: The two things a run can measure, as the measurement schema names them.
LATENCY: Final = "latency"
PEAK_MEMORY: Final = "peak_memory"
#: The metric of a run that did not pass and whose protocol does not tell.
UNKNOWN: Final = "unknown"

#: How reports name each metric (headings, differences).
METRIC_NAMES: Final[Mapping[str, str]] = {
    LATENCY: "latency",
    PEAK_MEMORY: "peak memory",
    UNKNOWN: "unknown",
}

#: Words a user may give for a metric (``--metric``) → the metric. ``speed`` and
#: ``memory`` are Liger's words, ``latency`` the reports' (and the schema's), and
#: ``peak_memory`` the schema's.
METRIC_ALIASES: Final[Mapping[str, str]] = {
    "speed": LATENCY,
    "latency": LATENCY,
    "memory": PEAK_MEMORY,
    "peak_memory": PEAK_MEMORY,
}

#: What the ratio ``baseline / implementation`` is called, per metric (bigger is
#: better for both: fewer nanoseconds, fewer bytes).
RATIO_NAMES: Final[Mapping[str, str]] = {LATENCY: "speed-up", PEAK_MEMORY: "memory saving"}
#: Machine names of the ratio, per metric.
RATIO_KINDS: Final[Mapping[str, str]] = {LATENCY: "speedup", PEAK_MEMORY: "memory_saving"}
#: Base unit per metric, as machine-readable output states it.
BASE_UNITS: Final[Mapping[str, str]] = {LATENCY: "ns", PEAK_MEMORY: "bytes"}
