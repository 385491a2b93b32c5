"""``kernelindex store query``'s results as aligned columns, JSON, or CSV.

Every cell of the text output is one printable line
(:func:`~kernelindex_sdk.base.escaping.one_line`), so a record's name with a newline
cannot forge a row. JSON and CSV carry the values as they are: JSON with its own
escapes (non-ASCII text as it is), CSV quoted where it needs to be.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import IO, Any

from kernelindex_sdk.cli.report import writing


def _plain(value: Any) -> Any:
    """A DuckDB value as JSON can hold it."""
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def _text(value: Any) -> str:
    """A cell as text: empty for NULL, a string as it is, anything else as JSON."""
    if value is None:
        return ""
    plain = _plain(value)
    return plain if isinstance(plain, str) else json.dumps(plain, ensure_ascii=False)


def write_text(out: IO[str], columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Aligned columns under their names, then the row count."""
    writing.write_aligned(out, [list(columns), *([_text(v) for v in row] for row in rows)])
    out.write(f"({len(rows)} row{'s' * (len(rows) != 1)})\n")


def write_json(out: IO[str], columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """A JSON array of one object per row."""
    objects = [{c: _plain(v) for c, v in zip(columns, row, strict=True)} for row in rows]
    writing.write_json(out, objects, ascii_only=False)


def write_csv(out: IO[str], columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """CSV with the column names as its header."""
    writing.write_csv(out, columns, ([_text(v) for v in row] for row in rows), printable=False)


#: What ``store query``'s reporters are: functions that write the columns and rows.
Writer = Callable[[IO[str], Sequence[str], Sequence[Sequence[Any]]], None]
