"""Reading Liger-Kernel benchmark CSVs into typed rows, with every defect located.

Liger's harness (``benchmark/scripts/utils.py``) writes one row per x value with the
columns in :data:`COLUMNS`. This module is the only place that touches CSV text: it
checks the header, splits records, and parses each cell (numbers, the config JSON,
the timestamp) into a :class:`LigerRow`. A row that cannot be parsed becomes a
:class:`~kernelindex_sdk.errors.Problem` naming the file, the line the record starts
on and what is wrong; reading goes on with the next row, and the caller decides
whether to stop. A file that cannot be read at all raises the SDK's intake errors.

Columns are found by name, not position, so a CSV with its columns in another order
(or with extra columns) still reads.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from bench_adapters.liger.names import timestamp_slug
from kernelindex_sdk.errors import InvalidEncoding, Problem, UnreadableFile

#: The columns the importer reads. ``x_label`` is Liger's axis label, not needed.
COLUMNS = (
    "kernel_name",
    "kernel_provider",
    "kernel_operation_mode",
    "metric_name",
    "metric_unit",
    "x_name",
    "x_value",
    "y_value_50",
    "y_value_20",
    "y_value_80",
    "extra_benchmark_config_str",
    "gpu_name",
    "timestamp",
    "liger_version",
)
#: Columns that may be empty: a row without config or release still imports.
OPTIONAL_CELLS = frozenset({"extra_benchmark_config_str", "liger_version"})
#: Largest integer every JSON reader (and RFC 8785) represents exactly.
MAX_SAFE_INTEGER = 2**53 - 1

_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_TIMESTAMP = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})[ T]([0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.([0-9]+))?(Z|[+-]00:?00)?"
)

Scalar = int | float | str


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


class RowError(Exception):
    """A cell that cannot be parsed; becomes the row's Problem."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


def read_text(path: str | os.PathLike[str]) -> str:
    """The file's text (UTF-8, an optional BOM dropped); intake errors if unreadable."""
    source = os.fspath(path)
    try:
        with open(source, "rb") as handle:
            data = handle.read()
    except OSError as error:
        reason = error.strerror or str(error)
        raise UnreadableFile(f"cannot read: {reason}", source=source) from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise InvalidEncoding(
            f"not UTF-8: byte 0x{data[error.start]:02x} cannot be decoded", source=source, line=line
        ) from None


class LigerCsv:
    """One CSV file's rows, parsed lazily, each a :class:`LigerRow` or a Problem."""

    def __init__(self, source: str, text: str) -> None:
        self.source = source
        self._text = text
        self._configs: dict[str, Mapping[str, Any]] = {}
        self._times: dict[str, tuple[str, str]] = {}
        self._header_done = False
        self._header: list[str] | None = None
        self._index: dict[str, int] = {}
        self._header_problem: Problem | None = None

    def estimated_rows(self) -> int:
        """About how many data rows there are (lines, less the header): for progress."""
        lines = self._text.count("\n") + (0 if self._text.endswith("\n") else 1)
        return max(0, lines - 1)

    def header_problem(self) -> Problem | None:
        """What is wrong with the header (no header, a column missing or twice), if anything."""
        self._read_header()
        return self._header_problem

    def data_rows(self) -> int:
        """How many data records follow the header (what a bad header makes unreadable)."""
        return sum(1 for _ in self._records(skip_header=True))

    def rows(self) -> Iterator[LigerRow | Problem]:
        """Every data row in order, parsed or as its Problem; nothing if the header is bad."""
        self._read_header()
        if self._header_problem is not None or self._header is None:
            return
        header, index = self._header, self._index
        for line, record in self._records(skip_header=True):
            if isinstance(record, csv.Error):
                yield self._problem(line, f"malformed CSV: {record}", "malformed-csv")
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

    def _records(self, *, skip_header: bool) -> Iterator[tuple[int, list[str] | csv.Error]]:
        """(first line, fields) of every non-blank record; a csv.Error in place of fields."""
        reader = csv.reader(io.StringIO(self._text, newline=""), strict=False)
        seen_header = not skip_header
        while True:
            line = reader.line_num + 1
            try:
                record = next(reader)
            except StopIteration:
                return
            except csv.Error as error:
                if seen_header:
                    yield line, error
                continue
            if not record or (len(record) == 1 and not record[0].strip()):
                continue
            if not seen_header:
                seen_header = True
                continue
            yield line, record

    def _read_header(self) -> None:
        if self._header_done:
            return
        self._header_done = True
        for line, record in self._records(skip_header=False):
            if isinstance(record, csv.Error):
                self._header_problem = self._problem(
                    line, f"malformed CSV header: {record}", "malformed-csv"
                )
                return
            header = [name.strip() for name in record]
            self._header_problem = self._check_header(header, line)
            if self._header_problem is None:
                self._header = header
                self._index = {name: header.index(name) for name in COLUMNS}
            return
        self._header_problem = self._problem(1, "empty file: no header row", "empty-file")

    def _problem(self, line: int, message: str, code: str) -> Problem:
        return Problem(message, code=code, source=self.source, line=line)

    def _check_header(self, header: list[str], line: int) -> Problem | None:
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
        for name, value in cells.items():
            if not value and name not in OPTIONAL_CELLS:
                raise RowError(f"{name}: empty", "empty-cell")
        config_text = cells["extra_benchmark_config_str"]
        config = self._configs.get(config_text)
        if config is None:
            config = parse_config(config_text)
            self._configs[config_text] = config
        times = self._times.get(cells["timestamp"])
        if times is None:
            times = parse_timestamp(cells["timestamp"])
            self._times[cells["timestamp"]] = times
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
            gpu=" ".join(cells["gpu_name"].split()),
            observed_at=times[0],
            time_slug=times[1],
            liger_version=cells["liger_version"],
        )


def parse_measurement(column: str, text: str) -> float:
    """A y value: a finite, non-negative decimal number."""
    if not _DECIMAL.fullmatch(text):
        raise RowError(f"{column}: not a number: {text!r}", "bad-number")
    value = float(text)
    if not math.isfinite(value):
        raise RowError(f"{column}: not a finite number: {text!r}", "bad-number")
    if value < 0:
        raise RowError(f"{column}: negative: {text!r}", "bad-number")
    return value


def parse_x(text: str) -> Scalar:
    """The x value: an integer, a decimal number, or else a string (``llama_3_8b``).

    Integral decimals (``4096.0``) become integers, so the same shape always gets the
    same workload whichever way the CSV spelled it.
    """
    if _INTEGER.fullmatch(text):
        number = int(text)
        if abs(number) > MAX_SAFE_INTEGER:
            raise RowError(f"x_value: number out of range: {text!r}", "bad-number")
        return number
    if _DECIMAL.fullmatch(text):
        value = float(text)
        if not math.isfinite(value):
            raise RowError(f"x_value: not a finite number: {text!r}", "bad-number")
        if value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
            return int(value)
        return value
    return text


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r}")
        result[key] = value
    return result


def _check_numbers(value: Any) -> None:
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise ValueError(f"number out of range: {value}")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"not a finite number: {value}")
    elif isinstance(value, dict):
        for item in value.values():
            _check_numbers(item)
    elif isinstance(value, list):
        for item in value:
            _check_numbers(item)


def parse_config(text: str) -> Mapping[str, Any]:
    """``extra_benchmark_config_str``: a JSON object (empty or ``null`` means none)."""
    if not text:
        return {}
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
        _check_numbers(value)
    except json.JSONDecodeError as error:
        raise RowError(
            f"extra_benchmark_config_str: invalid JSON: {error.msg} (column {error.colno})",
            "bad-config",
        ) from None
    except (ValueError, RecursionError) as error:
        raise RowError(f"extra_benchmark_config_str: invalid JSON: {error}", "bad-config") from None
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
        raise RowError(f"timestamp: not a 'YYYY-MM-DD HH:MM:SS' time: {text!r}", "bad-timestamp")
    date, time, fraction, _zone = match.groups()
    year, month, day = (int(part) for part in date.split("-"))
    hour, minute, second = (int(part) for part in time.split(":"))
    if not (
        1 <= month <= 12
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
