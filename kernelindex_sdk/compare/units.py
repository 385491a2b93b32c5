"""Showing nanoseconds and bytes the way people read them.

Records hold whole base units (ns, bytes) so that nothing is lost; tables and axes
pick one readable unit per group or panel (all rows of a table in the same unit, so
the column can be compared by eye) and print about four significant digits.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from kernelindex_sdk.base.metrics import PEAK_MEMORY

#: (unit, size in ns), smallest first.
TIME_UNITS: Final = (("ns", 1.0), ("µs", 1e3), ("ms", 1e6), ("s", 1e9))
#: (unit, size in bytes), smallest first.
BYTE_UNITS: Final = (("B", 1.0), ("KiB", 1024.0), ("MiB", 1024.0**2), ("GiB", 1024.0**3))


def units_for(metric: str) -> tuple[tuple[str, float], ...]:
    return BYTE_UNITS if metric == PEAK_MEMORY else TIME_UNITS


def pick_unit(values: Iterable[float | None], metric: str) -> tuple[str, float]:
    """The largest unit in which the biggest value is still at least 1."""
    units = units_for(metric)
    present = [v for v in values if v is not None and v > 0]
    if not present:
        return units[0]
    top = max(present)
    chosen = units[0]
    for unit in units:
        if top >= unit[1]:
            chosen = unit
    return chosen


def number(value: float) -> str:
    """About four significant digits, never in exponent form."""
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:.0f}"
    if magnitude >= 100:
        return f"{value:.1f}"
    if magnitude >= 10:
        return f"{value:.2f}"
    if magnitude >= 1 or magnitude == 0:
        return f"{value:.3f}"
    return f"{value:.4g}"


def quantity(value: float, unit: tuple[str, float]) -> str:
    """``1.234 ms``."""
    return f"{number(value / unit[1])} {unit[0]}"


def spread(low: float | None, high: float | None, unit: tuple[str, float]) -> str:
    """``1.200–1.300 ms``, or ``—`` when the run has no p20/p80."""
    if low is None or high is None:
        return "—"
    return f"{number(low / unit[1])}–{number(high / unit[1])} {unit[0]}"


def times(ratio: float | None) -> str:
    """``1.25×``, or ``n/a``."""
    return "n/a" if ratio is None else f"{ratio:.2f}×"
