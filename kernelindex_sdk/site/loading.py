"""Loading what a report shows: the runs with their records, one side or two.

A report shows each record's JSON, so unlike ``compare`` it keeps every run's record
(a store is read as its documents, not as its runs' facts), for the reference side
too: a before/after page links both runs of each pair. Paths are read as
``validate`` reads them (:func:`~kernelindex_sdk.compare.records.load_walked`), each
walked once; the runs of both sides are resolved against every record given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from kernelindex_sdk.compare.records import LoadResult, ProblemSink, RecordIndex, load_walked
from kernelindex_sdk.compare.runs import ResolvedRun, resolve_runs

#: Told, per side, the bytes it will read (None: cannot tell); returns what each
#: read's byte count is passed to (a progress bar's ``advance``), or None.
ByteCounter = Callable[[str, "int | None"], "Callable[[int], None] | None"]


@attrs.frozen
class ReportInput:
    """The runs to show, the reference runs (a before/after), and every record."""

    runs: list[ResolvedRun]
    #: None without a reference set.
    reference: list[ResolvedRun] | None
    #: Every valid record of both sides, runs included.
    index: RecordIndex
    invalid: int
    unreadable: int
    #: Record files found (0: the paths named none).
    found: int
    #: Kind → runs that reference a record of it that was not given.
    missing: dict[str, int]
    #: Hardware identity → the other names its GPU goes by (for ``--gpu``).
    gpu_names: dict[str, list[str]] = attrs.field(factory=dict)


def load_report(
    paths: Sequence[str],
    against: Sequence[str] | None = None,
    *,
    on_problem: ProblemSink | None = None,
    on_bytes: ByteCounter | None = None,
) -> ReportInput:
    """Read, validate and resolve ``paths`` (and the reference ``against``). Never
    raises for bad input: problems go to ``on_problem``, and are counted."""
    candidate, found = _read(paths, "candidate", on_problem, on_bytes)
    reference = None
    if against is not None:
        reference, more = _read(against, "reference", on_problem, on_bytes)
        found += more
    merged = RecordIndex(records=dict(candidate.index.records))
    runs_index = RecordIndex(runs=candidate.index.runs, records=merged.records)
    missing: dict[str, int] = {}
    names: dict[str, list[str]] = {}
    before = None
    if reference is not None:
        for digest, record in reference.index.records.items():
            merged.records.setdefault(digest, record)
        before_index = RecordIndex(runs=reference.index.runs, records=merged.records)
        before, resolver = resolve_runs(before_index)
        _add(missing, resolver.missing)
        names.update(resolver.gpu_names())
        merged.runs.update(reference.index.runs)
    runs, resolver = resolve_runs(runs_index)
    _add(missing, resolver.missing)
    for identity, also in resolver.gpu_names().items():
        known = names.setdefault(identity, [])
        known.extend(name for name in also if name not in known)
    merged.runs.update(candidate.index.runs)
    sides = [candidate] + ([reference] if reference is not None else [])
    return ReportInput(
        runs,
        before,
        merged,
        sum(side.invalid for side in sides),
        sum(side.unreadable for side in sides),
        found,
        missing,
        names,
    )


def _add(total: dict[str, int], more: dict[str, int]) -> None:
    for kind, count in more.items():
        total[kind] = total.get(kind, 0) + count


def _read(
    paths: Sequence[str], side: str, on_problem: ProblemSink | None, on_bytes: ByteCounter | None
) -> tuple[LoadResult, int]:
    """One side's records (each with its record), and how many sources its walk found."""
    from kernelindex_sdk.reading.sources import FileSource, StdinSource, StoreSource, expand

    walked = list(expand(paths))
    found = sum(isinstance(s, (FileSource, StdinSource, StoreSource)) for s in walked)
    total: int | None = None
    if not any(isinstance(s, StdinSource) for s in walked):
        total = sum(s.size or 0 for s in walked if isinstance(s, FileSource))
    advance = on_bytes(side, total) if on_bytes is not None else None
    return load_walked(walked, on_problem=on_problem, on_read=advance), found
