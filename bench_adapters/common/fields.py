"""Taking typed values out of a source's JSON, with the place of every mistake.

Source files are read by the SDK's strict reader (no duplicate keys, no NaN, no
integer beyond 2^53), but their *shape* is the source's: a member may be missing,
null, or of another type in another version of the format. These helpers take one
value and raise :class:`~bench_adapters.common.importing.EntryError` naming the JSON
Pointer and what was expected, so an odd entry is one precise line, never a traceback.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from bench_adapters.common import numbers
from bench_adapters.common.importing import EntryError
from kernelindex_sdk.base.pointers import pointer_of
from kernelindex_sdk.base.recordformat import json_type
from kernelindex_sdk.reading.intake import MAX_SAFE_INTEGER


def at(pointer: str, *keys: str | int) -> str:
    """``pointer`` extended by ``keys`` (RFC 6901 escaping)."""
    return pointer_of(keys, pointer)


def shown(value: Any) -> str:
    """A short rendering of a value for a message."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def obj(value: Any, pointer: str, what: str = "an object") -> Mapping[str, Any]:
    """A JSON object."""
    if not isinstance(value, dict):
        raise EntryError(f"expected {what}, got {json_type(value)}", pointer)
    return value


def array(value: Any, pointer: str) -> list[Any]:
    """A JSON array."""
    if not isinstance(value, list):
        raise EntryError(f"expected an array, got {json_type(value)}", pointer)
    return value


def text(value: Any, pointer: str) -> str:
    """A non-empty string."""
    if not isinstance(value, str) or not value:
        raise EntryError(f"expected a non-empty string, got {shown(value)}", pointer)
    return value


def integer(value: Any, pointer: str, *, minimum: int = 0) -> int:
    """A whole number in [minimum, 2^53 - 1]; a string of digits counts (nvbench writes int64
    values as strings), read by the one number grammar (:mod:`~bench_adapters.common.numbers`)."""
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str):
        number = numbers.integer(value)
    if number is None:
        raise EntryError(f"expected a whole number, got {shown(value)}", pointer)
    if number < minimum or number > MAX_SAFE_INTEGER:
        raise EntryError(
            f"{number} is out of range (a record holds {minimum} to 2**53 - 1)", pointer
        )
    return number


def real(value: Any, pointer: str) -> float:
    """A number; a numeric string counts, read by the one number grammar
    (:mod:`~bench_adapters.common.numbers`). Infinity and NaN as nvbench writes them
    (``"inf"``, ``"nan"``) are returned as they are: the caller decides what they mean."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        number = numbers.decimal(value, non_finite=True)
        if number is not None:
            return number
    raise EntryError(f"expected a number, got {shown(value)}", pointer)


def finite(value: float) -> bool:
    """Not infinite and not NaN."""
    return math.isfinite(value)


def holdable(value: float) -> bool:
    """A number a record can hold: finite and within ±(2^53 - 1)."""
    return math.isfinite(value) and abs(value) <= MAX_SAFE_INTEGER


def scaled(value: float, factor: int) -> int | None:
    """``value × factor`` rounded to a whole number (ms → ns, s → ns, MiB → bytes), or
    None when no record can hold it: beyond ±(2^53 − 1), as a finite but huge value
    (``1e308``) becomes — or infinite — once scaled. Every importer converts units here,
    so such a value is one refused entry (each says which in its own words), never an
    ``OverflowError`` from rounding an infinity."""
    product = value * factor
    return round(product) if holdable(product) else None
