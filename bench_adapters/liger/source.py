"""Reading Liger-Kernel benchmark CSVs into typed rows, with every defect located.

Liger's harness (``benchmark/scripts/utils.py``) writes one row per x value with the
columns of :data:`LIGER_HEADER`. This module is the only place that touches CSV text:
it checks the header, splits records, and parses each cell (numbers, the config JSON,
the timestamp) into a :class:`LigerRow`. A row that cannot be parsed becomes a
:class:`~kernelindex_sdk.errors.Problem` naming the file, the line the record starts
on, the column and what is wrong; reading goes on with the next row, and the caller
decides whether to stop. A file that cannot be read at all raises the SDK's intake
errors.

Input is read as a stream, one record at a time, so memory stays bounded whatever the
file holds: a record longer than :data:`MAX_ROW_BYTES` is reported and its bytes are
skipped, never held (from a stream that is not a file, reading stops there: see
:func:`~kernelindex_sdk.reading.sources.bounded_lines`). The config cell goes through the SDK's
strict JSON intake — the one parser of the project — so it is refused for exactly what
a record would be.

Every row also keeps what it said, as written (:class:`SourceText`), so the export can
give the row back byte for byte. Columns are found by name, not position, so a CSV
with its columns in another order (or with extra columns) still reads.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
from collections.abc import Iterator, Mapping
from typing import Any, BinaryIO

import attrs

from bench_adapters.common.numbers import DECIMAL, INTEGER, decimal
from bench_adapters.liger.names import timestamp_slug
from kernelindex_sdk.errors import (
    DocumentTooLarge,
    IntakeError,
    InvalidEncoding,
    Problem,
    UnreadableFile,
)
from kernelindex_sdk.reading.intake import loads
from kernelindex_sdk.reading.intake.jsonl import OverlongLine
from kernelindex_sdk.reading.sources import STDIN, bounded_lines, open_regular

#: Liger's header, in Liger's order: what its harness writes and what the export writes.
LIGER_HEADER = (
    "kernel_name",
    "kernel_provider",
    "kernel_operation_mode",
    "metric_name",
    "metric_unit",
    "x_name",
    "x_label",
    "x_value",
    "y_value_50",
    "y_value_20",
    "y_value_80",
    "extra_benchmark_config_str",
    "gpu_name",
    "timestamp",
    "liger_version",
)
#: The columns the importer reads. ``x_label`` is Liger's axis label, kept only as text.
COLUMNS = tuple(name for name in LIGER_HEADER if name != "x_label")
#: Columns that may be empty: a row without config or release still imports.
OPTIONAL_CELLS = frozenset({"extra_benchmark_config_str", "liger_version"})
#: Cells that become part of a record's ids, titles or labels, and their longest length
#: (a label holds 1024 characters; ids and titles 4096, with several cells in them).
NAME_CELLS = frozenset(name for name in COLUMNS if not name.startswith(("y_", "x_value"))) - {
    "extra_benchmark_config_str",
    "timestamp",
}
MAX_NAME_CELL = 1024
#: Largest integer every JSON reader (and RFC 8785) represents exactly.
MAX_SAFE_INTEGER = 2**53 - 1
#: The longest CSV record (one row, all its lines) read, in bytes. Liger's rows are a
#: few hundred bytes; this bounds the memory one row can take, whatever the input.
MAX_ROW_BYTES = 64 << 10
#: The code of a header that is JSON: the file is not a CSV at all.
NOT_A_CSV = "not-a-csv"
#: The name standard input has in problems.
STDIN_NAME = "<stdin>"

#: More digits than this cannot be a safe integer (and are not parsed at all).
_MAX_DIGITS = 16
_TIMESTAMP = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})[ T]([0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.([0-9]+))?(Z|[+-]00:?00)?"
)
_POINTER_LIMIT = 60
#: ``sources`` does not export its byte formatter; rows are capped in KiB.
_KIB = 1024

Scalar = int | float | str


@attrs.frozen
class SourceText:
    """What a row said, as written: for giving it back unchanged (the export)."""

    #: Every cell of :data:`LIGER_HEADER`, unstripped ("" for a column the file lacks).
    cells: tuple[str, ...]
    #: The record's text without its line ending, when the file's header is exactly
    #: :data:`LIGER_HEADER` (so the line can stand under it); else None.
    line: str | None


@attrs.frozen
class LigerRow:
    """One parsed CSV row: everything the mapping needs, already typed."""

    source: str
    line: int
    kernel: str
    provider: str
    mode: str
    metric: str
    unit: str
    x_name: str
    x_value: Scalar
    y50: float
    y20: float
    y80: float
    #: The parsed config object (shared between rows with the same text: never mutate).
    config: Mapping[str, Any]
    #: The config cell as written, a cheap cache key for everything derived from it.
    config_text: str
    gpu: str
    #: ``YYYY-MM-DDTHH:MM:SS.mmmZ``
    observed_at: str
    #: ``YYYY-MM-DD-HH-MM-SS``
    time_slug: str
    liger_version: str
    text: SourceText = SourceText(cells=(), line=None)


class RowError(Exception):
    """A cell that cannot be parsed, or a row that cannot be mapped: the row's Problem."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


class _TooLong(Exception):
    """A record grew past :data:`MAX_ROW_BYTES` (its size so far, and whether its end is known)."""

    def __init__(self, size: int, inside_quotes: bool) -> None:
        super().__init__(size)
        self.size = size
        self.inside_quotes = inside_quotes


def open_csv(path: str | os.PathLike[str], stdin: BinaryIO | None = None) -> BinaryIO:
    """A binary stream of the CSV at ``path`` (``-``: standard input); intake errors if not."""
    source = os.fspath(path)
    if source == STDIN:
        if stdin is not None:
            return stdin
        import sys

        return sys.stdin.buffer
    fd, _ = open_regular(source)
    return open(fd, "rb")


class _Lines:
    """The physical lines of a stream as text, counted; what ``csv.reader`` is fed.

    Lines are decoded one by one (UTF-8, a leading BOM dropped) and the lines of the
    record being read are remembered, so the record's own text is known when it ends.
    A record growing past :data:`MAX_ROW_BYTES` raises :class:`_TooLong` at once.
    """

    def __init__(self, stream: BinaryIO, source: str) -> None:
        self._raw = bounded_lines(stream, MAX_ROW_BYTES)
        self.source = source
        #: Physical lines consumed so far (the number of the last one).
        self.number = 0
        #: Bytes read so far (for progress).
        self.bytes = 0
        self.taken: list[str] = []
        self._size = 0
        self._quotes = 0

    def __iter__(self) -> _Lines:
        return self

    def start_record(self) -> None:
        self.taken, self._size, self._quotes = [], 0, 0

    def __next__(self) -> str:
        try:
            raw = next(self._raw)
        except OSError as error:
            raise UnreadableFile(
                f"read failed here: {error.strerror or error}", source=self.source,
                line=self.number + 1,
            ) from None  # fmt: skip
        self.number += 1
        if isinstance(raw, OverlongLine):
            self.bytes += raw.size
            self._stop_if_stopped(raw)
            raise _TooLong(self._size + raw.size, inside_quotes=False)
        self.bytes += len(raw)
        if self.number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise InvalidEncoding(
                f"not UTF-8: byte 0x{raw[error.start]:02x} cannot be decoded",
                source=self.source,
                line=self.number,
            ) from None
        self._size += len(raw)
        self._quotes += text.count('"')
        if self._size > MAX_ROW_BYTES:
            raise _TooLong(self._size, inside_quotes=self._quotes % 2 == 1)
        self.taken.append(text)
        return text

    def skip_quoted(self) -> int:
        """After a too-long record left inside quotes: skip to the line that closes them."""
        skipped = 0
        quotes = 1
        for raw in self._raw:
            self.number += 1
            if isinstance(raw, OverlongLine):
                self._stop_if_stopped(raw)
            size = raw.size if isinstance(raw, OverlongLine) else len(raw)
            self.bytes += size
            skipped += size
            if isinstance(raw, bytes):
                quotes += raw.count(b'"')
                if quotes % 2 == 0:
                    break
        return skipped

    def _stop_if_stopped(self, raw: OverlongLine) -> None:
        """A stream (not a file) read no further than the limit: nothing after this
        line can be read, so the input is unreadable, not one bad row."""
        if raw.stopped:
            raise DocumentTooLarge(
                f"row longer than {MAX_ROW_BYTES // _KIB} KiB, the limit for one row: not"
                " read; a stream is read no further than that, so nothing after it either",
                source=self.source,
                line=self.number,
            )

    def record_text(self) -> str:
        """The text of the record just read, without its line ending."""
        text = "".join(self.taken)
        if text.endswith("\r\n"):
            return text[:-2]
        return text[:-1] if text.endswith(("\n", "\r")) else text


class LigerCsv:
    """One CSV's rows, read as a stream and parsed lazily, each a :class:`LigerRow` or a Problem.

    ``data`` is a binary stream, or the CSV's text or bytes (for small inputs and tests).
    """

    def __init__(self, source: str, data: BinaryIO | str | bytes) -> None:
        self.source = source
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogatepass")
        stream = io.BytesIO(data) if isinstance(data, bytes) else data
        self._lines = _Lines(stream, source)
        self._reader = csv.reader(self._lines, strict=False)
        self._configs: dict[str, Mapping[str, Any]] = {}
        self._times: dict[str, tuple[str, str]] = {}
        self._header_done = False
        self._header: list[str] | None = None
        self._index: dict[str, int] = {}
        self._liger_header = False
        self._header_problem: Problem | None = None

    @property
    def bytes_read(self) -> int:
        """How many bytes of the input have been read (for progress)."""
        return self._lines.bytes

    def header_problem(self) -> Problem | None:
        """What is wrong with the header (no header, a column missing or twice), if anything."""
        self._read_header()
        return self._header_problem

    def data_rows(self) -> int:
        """How many data records follow (what a bad header makes unreadable); reads them."""
        return sum(1 for _ in self._records())

    def rows(self) -> Iterator[LigerRow | Problem]:
        """Every data row in order, parsed or as its Problem; nothing if the header is bad."""
        self._read_header()
        if self._header_problem is not None or self._header is None:
            return
        header, index = self._header, self._index
        for line, record in self._records():
            if isinstance(record, Problem):
                yield record
                continue
            if len(record) != len(header):
                kind = "short" if len(record) < len(header) else "long"
                yield self._problem(
                    line,
                    f"{kind} row: {len(record)} fields, the header has {len(header)}",
                    f"{kind}-row",
                )
                continue
            try:
                yield self._parse(record, index, line)
            except RowError as error:
                yield self._problem(line, str(error), error.code)

    def _records(self) -> Iterator[tuple[int, list[str] | Problem]]:
        """(first line, fields) of every non-blank record; a Problem in place of fields."""
        lines = self._lines
        while True:
            lines.start_record()
            line = lines.number + 1
            try:
                record = next(self._reader)
            except StopIteration:
                return
            except csv.Error as error:
                yield line, self._problem(line, f"malformed CSV: {error}", "malformed-csv")
                continue
            except _TooLong as error:
                size = error.size + (lines.skip_quoted() if error.inside_quotes else 0)
                yield (
                    line,
                    self._problem(
                        line,
                        f"row longer than {MAX_ROW_BYTES // _KIB} KiB, the limit for one row "
                        f"({size / _KIB:.1f} KiB or more): not read",
                        "row-too-long",
                    ),
                )
                continue
            if not record or (len(record) == 1 and not record[0].strip()):
                continue
            yield line, record

    def record_text(self) -> str:
        """The text of the record read last (for the round trip)."""
        return self._lines.record_text()

    def _read_header(self) -> None:
        if self._header_done:
            return
        self._header_done = True
        for line, record in self._records():
            if isinstance(record, Problem):
                self._header_problem = self._problem(
                    line, f"unreadable CSV header: {record.message}", record.code or "bad-header"
                )
                return
            header = [name.strip() for name in record]
            self._header_problem = self._check_header(header, line)
            if self._header_problem is None:
                self._header = header
                self._index = {name: header.index(name) for name in LIGER_HEADER if name in header}
                self._liger_header = tuple(record) == LIGER_HEADER
            return
        self._header_problem = self._problem(1, "empty file: no header row", "empty-file")

    def _problem(self, line: int, message: str, code: str) -> Problem:
        return Problem(message, code=code, source=self.source, line=line)

    def _check_header(self, header: list[str], line: int) -> Problem | None:
        if header and header[0].lstrip("\ufeff").startswith(("{", "[")):
            return self._problem(
                line,
                "is JSON, not a CSV: import liger reads Liger's benchmark CSV"
                " (all_benchmark_data.csv); records are read by validate, compare and ls",
                NOT_A_CSV,
            )
        duplicates = sorted({name for name in header if header.count(name) > 1 and name})
        if duplicates:
            return self._problem(
                line, f"duplicate column {', '.join(duplicates)} in the header", "duplicate-column"
            )
        missing = [name for name in COLUMNS if name not in header]
        if missing:
            plural = "s" if len(missing) > 1 else ""
            return self._problem(
                line, f"missing column{plural} {', '.join(missing)} in the header", "missing-column"
            )
        return None

    def _parse(self, record: list[str], index: Mapping[str, int], line: int) -> LigerRow:
        cells = {name: record[position].strip() for name, position in index.items()}
        for name in COLUMNS:
            if not cells[name] and name not in OPTIONAL_CELLS:
                raise RowError(f"{name}: empty", "empty-cell")
            if len(cells[name]) > MAX_NAME_CELL and name in NAME_CELLS:
                raise RowError(
                    f"{name}: {len(cells[name])} characters, more than the {MAX_NAME_CELL} "
                    "that the ids, titles and labels it becomes part of can hold",
                    "cell-too-long",
                )
        config_text = cells["extra_benchmark_config_str"]
        config = self._configs.get(config_text)
        if config is None:
            config = parse_config(config_text, self.source, line)
            self._configs[config_text] = config
        times = self._times.get(cells["timestamp"])
        if times is None:
            times = parse_timestamp(cells["timestamp"])
            self._times[cells["timestamp"]] = times
        as_written = SourceText(
            cells=tuple(record[index[name]] if name in index else "" for name in LIGER_HEADER),
            line=self.record_text() if self._liger_header else None,
        )
        return LigerRow(
            source=self.source,
            line=line,
            kernel=cells["kernel_name"],
            provider=cells["kernel_provider"],
            mode=cells["kernel_operation_mode"],
            metric=cells["metric_name"],
            unit=cells["metric_unit"],
            x_name=cells["x_name"],
            x_value=parse_x(cells["x_value"]),
            y50=parse_measurement("y_value_50", cells["y_value_50"]),
            y20=parse_measurement("y_value_20", cells["y_value_20"]),
            y80=parse_measurement("y_value_80", cells["y_value_80"]),
            config=config,
            config_text=config_text,
            gpu=normalized_gpu(cells["gpu_name"]),
            observed_at=times[0],
            time_slug=times[1],
            liger_version=cells["liger_version"],
            text=as_written,
        )


def normalized_gpu(cell: str) -> str:
    """The GPU a ``gpu_name`` cell names: its words, one space apart."""
    return " ".join(cell.split())


def _abbreviated(text: str) -> str:
    return text if len(text) <= _POINTER_LIMIT else text[: _POINTER_LIMIT - 1] + "…"


def parse_measurement(column: str, text: str) -> float:
    """A y value: a finite, non-negative decimal number."""
    value = decimal(text)
    if value is None:
        raise RowError(f"{column}: not a number: {_abbreviated(text)!r}", "bad-number")
    if not math.isfinite(value):
        raise RowError(f"{column}: not a finite number: {_abbreviated(text)!r}", "bad-number")
    if value < 0:
        raise RowError(f"{column}: negative: {_abbreviated(text)!r}", "bad-number")
    return value


def parse_x(text: str) -> Scalar:
    """The x value: an integer, a decimal number, or else a string (``llama_3_8b``).

    Integral decimals (``4096.0``) become integers, so the same shape always gets the
    same workload whichever way the CSV spelled it. A number must lie within
    ±(2**53 - 1), as every number in a record must.
    """
    if INTEGER.fullmatch(text):
        digits = text.lstrip("+-").lstrip("0")
        if len(digits) > _MAX_DIGITS or abs(int(text)) > MAX_SAFE_INTEGER:
            raise RowError(
                f"x_value: number out of range: {_abbreviated(text)!r} "
                f"(a record holds numbers within ±(2**53 - 1))",
                "bad-number",
            )
        return int(text)
    if DECIMAL.fullmatch(text):
        value = float(text)
        if not math.isfinite(value):
            raise RowError(f"x_value: not a finite number: {_abbreviated(text)!r}", "bad-number")
        if abs(value) > MAX_SAFE_INTEGER:
            raise RowError(
                f"x_value: number out of range: {_abbreviated(text)!r} "
                f"(a record holds numbers within ±(2**53 - 1))",
                "bad-number",
            )
        return int(value) if value.is_integer() else value
    return text


def parse_config(text: str, source: str = "<csv>", line: int = 1) -> Mapping[str, Any]:
    """``extra_benchmark_config_str``: a JSON object (empty or ``null`` means none).

    Parsed by the SDK's strict intake: duplicate keys, NaN, unsafe numbers, lone
    surrogates and deep nesting are refused as they are in any record.
    """
    if not text:
        return {}
    try:
        value = loads(text, source=source, first_line=line)
    except IntakeError as error:
        problem = error.problem
        where = f" at character {problem.column}" if problem.column is not None else ""
        pointer = f" ({_abbreviated(problem.pointer)})" if problem.pointer else ""
        raise RowError(
            f"extra_benchmark_config_str: invalid JSON{where}{pointer}: {problem.message}",
            "bad-config",
        ) from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RowError(
            f"extra_benchmark_config_str: expected a JSON object, got {type(value).__name__}",
            "bad-config",
        )
    return value


def parse_timestamp(text: str) -> tuple[str, str]:
    """Liger's local ``YYYY-MM-DD HH:MM:SS`` read as UTC -> (observedAt, timestamp slug)."""
    match = _TIMESTAMP.fullmatch(text)
    if match is None:
        raise RowError(
            f"timestamp: not a 'YYYY-MM-DD HH:MM:SS' time: {_abbreviated(text)!r}", "bad-timestamp"
        )
    date, time, fraction, _zone = match.groups()
    year, month, day = (int(part) for part in date.split("-"))
    hour, minute, second = (int(part) for part in time.split(":"))
    if not (
        year >= 1
        and 1 <= month <= 12
        and 1 <= day <= _days_in_month(year, month)
        and hour < 24
        and minute < 60
        and second < 60
    ):
        raise RowError(f"timestamp: no such time: {text!r}", "bad-timestamp")
    millis = (fraction or "").ljust(3, "0")[:3]
    observed = f"{date}T{time}.{millis}Z"
    return observed, timestamp_slug(date, time, millis if millis != "000" else None)


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        return 29 if leap else 28
    return 30 if month in (4, 6, 9, 11) else 31
