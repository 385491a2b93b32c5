"""Records back to Liger's CSV: the way back, so Liger's own tools read kernelindex runs.

``kernelindex export liger RECORDS... --out FILE|-`` reads records exactly as
``kernelindex validate --strict-refs`` reads them (files, folders, JSON Lines, ``-``;
through the SDK's :class:`~kernelindex_sdk.validating.pipeline.Pipeline`), and writes one row per
``BenchmarkRun`` of speed or memory under Liger's current header
(:data:`~bench_adapters.liger.source.LIGER_HEADER`), as Liger's harness writes it
(minimal quoting, ``\\r\\n``). So Liger-Kernel's ``benchmarks_visualizer.py`` reads it as
it reads its own file.

* A run the importer made (``sourceNative.source`` is the importer's) gives back its
  source row byte for byte (:mod:`~bench_adapters.liger.spelling`): the rows of an
  import are exactly the distinct rows of the CSV it came from. The row is checked
  against the run first: a part the run no longer says (its timing, time, kernel,
  mode, provider, GPU or workload edited after the import) is written from the run's own
  values instead, with a warning — never data the record does not hold.
* Any other run (``kernelindex bench liger`` writes such) gets the row computed from
  its structured fields (:mod:`~bench_adapters.liger.structured`).

A run's references are looked up in its own bundle first, then in its own file, then
anywhere in the input: an import's runs are read with the copies they were written
with. Runs that did not pass (failed, oom, skipped) have no Liger row: they are left
out and counted. Invalid or unresolvable input is reported as ``validate`` reports it
and left out; a run no row can express is reported with the reason. Rows are sorted
by timestamp, kernel, metric, mode, provider and x, and written once each.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, BinaryIO

import attrs

from bench_adapters.common.numbers import decimal
from bench_adapters.liger.catalog import Catalog, load_catalog
from bench_adapters.liger.checking import MEMBERS
from bench_adapters.liger.source import LIGER_HEADER
from bench_adapters.liger.spelling import LINE_END, Referenced, Speller, encode_line
from bench_adapters.liger.structured import NotExpressible, RowComputer, Sweep
from kernelindex_sdk.base import recordformat
from kernelindex_sdk.errors import Problem
from kernelindex_sdk.validating.pipeline import Pipeline
from kernelindex_sdk.validating.validation import is_bundle

#: The run spec fields of the references, in :data:`MEMBERS` order.
REFERENCE_FIELDS = tuple(f"{member}Digest" for member in MEMBERS)

Record = dict[str, Any]


@attrs.define
class ExportSummary:
    """What an export read, wrote and left out."""

    rows: int = 0
    runs: int = 0
    #: Runs that did not pass, by status: they have no Liger row.
    left_out: dict[str, int] = attrs.field(factory=dict)
    #: Runs no Liger row can express (each also in ``problems``).
    not_expressible: int = 0
    #: Those runs' problems, by the reason they share (:attr:`NotExpressible.reason`).
    unexpressed: dict[str, list[Problem]] = attrs.field(factory=dict)
    #: Input ``validate`` rejects (left out), and runs no row can express.
    problems: list[Problem] = attrs.field(factory=list)
    #: Imported runs whose source row no longer says what the run holds (edited after
    #: the import): written from the run's own values, each also in ``warnings``.
    stale: int = 0
    warnings: list[Problem] = attrs.field(factory=list)
    #: Paths and documents that could not be read (then nothing is written).
    unreadable: int = 0
    files: int = 0

    def exit_status(self) -> int:
        """2: something could not be read, or nothing was given; 1: something was left
        out for a problem; else 0 (runs that did not pass are no problem)."""
        if self.unreadable or not self.files:
            return 2
        return 1 if self.problems else 0

    def lines(self) -> list[str]:
        """The human summary, one fact per line."""
        left = ", ".join(f"{count} {status}" for status, count in sorted(self.left_out.items()))
        facts = [
            ("runs read", str(self.runs)),
            ("rows written", str(self.rows)),
            ("left out, not passed", left or "0"),
            ("left out, not expressible", str(self.not_expressible)),
            ("stale source rows", str(self.stale)),
            ("input problems", str(len(self.problems) - self.not_expressible)),
        ]
        width = max(len(label) for label, _ in facts)
        return [f"{label.ljust(width)}  {value}" for label, value in facts]


@attrs.frozen
class _Found:
    """A run and where it was found: its file, line, pointer and bundle (if in one)."""

    run: Record
    digest: str
    source: str
    line: int | None
    pointer: str
    bundle: Mapping[str, Record] | None


class Exporter:
    """Turns valid records into Liger rows; collect with :meth:`read`, then :meth:`rows`."""

    def __init__(
        self, catalog: Catalog | None = None, sweeps: Mapping[str, Sweep] | None = None
    ) -> None:
        self.catalog = catalog or load_catalog()
        self.speller = Speller(self.catalog)
        self.computer = RowComputer(self.catalog, self.speller, sweeps)
        self.summary = ExportSummary()
        self._runs: dict[str, _Found] = {}
        self._by_source: dict[str, dict[str, Record]] = {}
        self._anywhere: dict[str, Record] = {}

    def read(
        self,
        paths: Sequence[str],
        *,
        stdin: BinaryIO | None = None,
        on_problem: Callable[[Problem], None] | None = None,
    ) -> None:
        """Read and check ``paths`` as ``validate --strict-refs`` does; keep the valid records."""
        check = Pipeline(paths, strict_refs=True, keep_values=True, stdin=stdin)
        for item in check:
            if item.unreadable:
                self.summary.unreadable += 1
            if item.problems:
                self._report(item.problems, on_problem)
                continue
            self._keep(item.value, item.records, item.source, item.line, item.pointer)
        self._report(check.late, on_problem)
        self.summary.files = check.tally.files

    def _report(
        self, problems: Iterable[Problem], on_problem: Callable[[Problem], None] | None
    ) -> None:
        for problem in problems:
            self.summary.problems.append(problem)
            if on_problem is not None:
                on_problem(problem)

    def _keep(
        self, value: Any, refs: Sequence[Any], source: str, line: int | None, pointer: str
    ) -> None:
        bundle: dict[str, Record] | None = None
        if is_bundle(value):
            bundle = {ref.digest: value[ref.pointer.rsplit("/", 1)[-1]] for ref in refs}
        local = self._by_source.setdefault(source, {})
        for ref in refs:
            record = bundle[ref.digest] if bundle is not None else value
            if ref.digest is None:
                continue
            if ref.kind == "BenchmarkRun":
                if ref.digest not in self._runs:
                    self._runs[ref.digest] = _Found(
                        record, ref.digest, source, line, pointer, bundle
                    )
                continue
            local.setdefault(ref.digest, record)
            self._anywhere.setdefault(ref.digest, record)

    def rows(
        self,
        on_problem: Callable[[Problem], None] | None = None,
        on_warning: Callable[[Problem], None] | None = None,
    ) -> list[str]:
        """Every row (without its line ending), sorted, each once; ``on_warning`` hears
        each imported run whose source row is stale (written from the run's values)."""
        keyed: dict[str, tuple[Any, ...]] = {}
        for found in self._runs.values():
            self.summary.runs += 1
            status = found.run[recordformat.SPEC_KEY][recordformat.STATUS_KEY]
            if status != "passed":
                self.summary.left_out[status] = self.summary.left_out.get(status, 0) + 1
                continue
            try:
                line, cells = self._row(found, on_warning)
            except NotExpressible as error:
                self.summary.not_expressible += 1
                problem = Problem(
                    f"not exported: {error}",
                    code="not-expressible",
                    pointer=found.pointer,
                    source=found.source,
                    line=found.line,
                )
                self.summary.unexpressed.setdefault(error.reason, []).append(problem)
                self._report([problem], on_problem)
                continue
            keyed.setdefault(line, _sort_key(cells, line))
        ordered = sorted(keyed, key=keyed.__getitem__)
        self.summary.rows = len(ordered)
        return ordered

    def _row(
        self, found: _Found, on_warning: Callable[[Problem], None] | None = None
    ) -> tuple[str, Mapping[str, str]]:
        referenced = self._referenced(found)
        run = found.run
        native = run[recordformat.SPEC_KEY].get(recordformat.SOURCE_NATIVE_KEY) or {}
        if native.get(recordformat.SOURCE_KEY) == self.catalog.source:
            cells = self.speller.cells(run, referenced)
            spelled = {c: cell for c, cell in cells.items() if cell is not None}
            whole = len(spelled) == len(cells)
            if not whole:
                # Imported without spelling labels (an older import): compute what is missing.
                spelled = {**self.computer.cells(run, referenced), **spelled}
            complete, stale = self.computer.record_cells(run, referenced, spelled)
            if stale:
                self._warn(found, stale, on_warning)
            elif whole:
                line = self.speller.line(run, referenced, cells)
                return (line or encode_line([complete[c] for c in LIGER_HEADER])), complete
        else:
            complete = self.computer.cells(run, referenced)
        return encode_line([complete[column] for column in LIGER_HEADER]), complete

    def _warn(
        self, found: _Found, stale: Sequence[str], on_warning: Callable[[Problem], None] | None
    ) -> None:
        """Say that a run's source row (``sourceNative``, its spelling) is out of date."""
        self.summary.stale += 1
        warning = Problem(
            f"warning: the run's {', '.join(stale)} no longer match its source row "
            "(sourceNative and liger-csv/ labels, edited since the import?): the row is "
            "written from the run's own values",
            code="stale-source-row",
            pointer=found.pointer,
            source=found.source,
            line=found.line,
        )
        self.summary.warnings.append(warning)
        if on_warning is not None:
            on_warning(warning)

    def _referenced(self, found: _Found) -> Referenced:
        """The run's four records: from its bundle, else its file, else anywhere."""
        spec = found.run[recordformat.SPEC_KEY]
        local = self._by_source.get(found.source, {})
        records = []
        for member, field in zip(MEMBERS, REFERENCE_FIELDS, strict=True):
            value = spec[field]
            record = (found.bundle or {}).get(value) or local.get(value)
            record = record or self._anywhere.get(value)
            if record is None:  # reported by the reader (strict references)
                raise NotExpressible(f"its {member} {value} is not in the input")
            records.append(record)
        return records[0], records[1], records[2], records[3]


def _sort_key(cells: Mapping[str, str], line: str) -> tuple[Any, ...]:
    x = cells["x_value"]
    number = decimal(x)
    return (
        cells["timestamp"],
        cells["kernel_name"],
        cells["metric_name"],
        cells["kernel_operation_mode"],
        cells["kernel_provider"],
        cells["x_name"],
        (0, number, "") if number is not None else (1, 0.0, x),
        line,
    )


def csv_bytes(rows: Sequence[str]) -> bytes:
    """Liger's header and ``rows``, each ended as Liger's harness ends them."""
    buffer = io.StringIO()
    buffer.write(encode_line(LIGER_HEADER) + LINE_END)
    for row in rows:
        buffer.write(row + LINE_END)
    return buffer.getvalue().encode("utf-8")
