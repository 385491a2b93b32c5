"""Query results as text: aligned columns, JSON, or CSV (``kernelindex store query``).

Every cell is one printable line (:func:`~kernelindex_sdk.base.escaping.one_line`) in
text output, so a record's name with a newline cannot forge a row.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import IO, Any

from kernelindex_sdk.base.escaping import one_line

__all__ = ["WRITERS"]


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


def _cell(value: Any) -> str:
    if value is None:
        return ""
    plain = _plain(value)
    text = plain if isinstance(plain, str) else json.dumps(plain, ensure_ascii=False)
    return one_line(text)


def write_text(out: IO[str], columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    cells = [[one_line(c) for c in columns], *([_cell(v) for v in row] for row in rows)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    for row in cells:
        out.write("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() + "\n")
    out.write(f"({len(rows)} row{'s' * (len(rows) != 1)})\n")


def write_json(out: IO[str], columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    objects = [{c: _plain(v) for c, v in zip(columns, row, strict=True)} for row in rows]
    out.write(json.dumps(objects, indent=2, ensure_ascii=False) + "\n")


def write_csv(out: IO[str], columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(_csv_cell(v) for v in row)


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    plain = _plain(value)
    return plain if isinstance(plain, str) else json.dumps(plain, ensure_ascii=False)


WRITERS: dict[str, Callable[[IO[str], Sequence[str], Sequence[Sequence[Any]]], None]] = {
    "text": write_text,
    "json": write_json,
    "csv": write_csv,
}
