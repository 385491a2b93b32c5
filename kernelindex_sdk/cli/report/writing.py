"""What every text format's reporters write with: a line, aligned columns, a Markdown
table, CSV rows, indented JSON, and figures as machines read them.

Each writer applies its format's escaping (:mod:`kernelindex_sdk.base.escaping`) to every
cell it is given, so a reporter cannot forget it: a cell of aligned text is one
printable line (:func:`~kernelindex_sdk.base.escaping.one_line`), a Markdown cell is
shown as the text it holds (:func:`~kernelindex_sdk.base.escaping.markdown_cell`), a CSV
row is one line, and JSON is ASCII only (valid under any output encoding). The CI
formats (GitHub annotations, JUnit XML) are :mod:`~kernelindex_sdk.cli.report.ci`'s.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Sequence
from typing import IO, Any

from kernelindex_sdk.base.escaping import markdown_cell, one_line


def put_line(out: IO[str], text: str) -> None:
    """Write ``text`` as exactly one line, whatever the records put in it."""
    out.write(one_line(text) + "\n")


def aligned(
    rows: Sequence[Sequence[str]], numeric: Sequence[bool] | None = None, indent: str = ""
) -> list[str]:
    """Rows of cells as text columns two spaces apart, each cell one printable line:
    the ``numeric`` columns right-aligned, the others left-aligned, every line after
    ``indent`` and without trailing spaces."""
    cells = [[one_line(cell) for cell in row] for row in rows]
    if not cells:
        return []
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    right = numeric if numeric is not None else [False] * len(widths)
    return [
        (
            indent
            + "  ".join(
                f"{cell:>{width}}" if numbers else f"{cell:<{width}}"
                for cell, width, numbers in zip(row, widths, right, strict=True)
            )
        ).rstrip()
        for row in cells
    ]


def write_aligned(
    out: IO[str],
    rows: Sequence[Sequence[str]],
    numeric: Sequence[bool] | None = None,
    indent: str = "",
) -> None:
    """:func:`aligned`, each line written."""
    for line in aligned(rows, numeric, indent):
        out.write(line + "\n")


def markdown_row(cells: Iterable[str]) -> str:
    """``| a | b |`` of cells that are Markdown already."""
    return "| " + " | ".join(cells) + " |"


def markdown_rule(numeric: Sequence[bool]) -> str:
    """The line under a table's header: ``---:`` (right-aligned) for the numeric columns."""
    return "|" + "|".join("---:" if right else "---" for right in numeric) + "|"


def write_markdown_table(
    out: IO[str],
    header: Sequence[str],
    rows: Iterable[Sequence[str]],
    numeric: Sequence[bool],
) -> None:
    """A GitHub-flavoured table, every cell through
    :func:`~kernelindex_sdk.base.escaping.markdown_cell` (shown as the text it is, never
    read as Markdown or HTML), then a blank line."""
    out.write(markdown_row(markdown_cell(cell) for cell in header) + "\n")
    out.write(markdown_rule(numeric) + "\n")
    for row in rows:
        out.write(markdown_row(markdown_cell(cell) for cell in row) + "\n")
    out.write("\n")


def write_csv(
    out: IO[str],
    header: Sequence[str],
    rows: Iterable[Sequence[object]],
    *,
    printable: bool = True,
) -> None:
    """CSV with a header row and ``\\n`` line ends, rows written as they come. With
    ``printable``, every text cell is one printable line, so a row is always one line;
    without, cells are written as they are (CSV quotes what needs it)."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow([one_line(c) if printable and isinstance(c, str) else c for c in row])


def write_json(out: IO[str], value: Any, *, ascii_only: bool = True) -> None:
    """``value`` as JSON indented by two, and a newline, in one write (``json.dump``
    would write every token on its own); ASCII only unless ``ascii_only`` is false."""
    out.write(json.dumps(value, ensure_ascii=ascii_only, indent=2) + "\n")


def json_number(value: float | None) -> float | int | None:
    """A figure for JSON: whole nanoseconds and bytes as integers, as the records hold
    them; any other as it is."""
    if value is not None and float(value).is_integer():
        return int(value)
    return value


def csv_number(value: float | None) -> str:
    """A figure for CSV: as :func:`json_number` writes it, or empty for none."""
    return "" if value is None else repr(json_number(value))


def csv_ratio(value: float | None) -> str:
    """A ratio or share for CSV with every digit (``repr``), or empty for none."""
    return "" if value is None else repr(value)
