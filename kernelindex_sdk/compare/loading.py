"""Loading what ``compare`` compares, in one call: one set of runs, or a candidate set
and a reference set (before/after).

Every path is read as ``validate`` reads it (:mod:`~kernelindex_sdk.compare.records`):
each side's paths are walked once (:func:`~kernelindex_sdk.reading.sources.expand`),
what that walk found is what is read, and a progress bar, if asked for, counts its
files' bytes as they are read (no total where standard input is among them). Runs
come back resolved (:mod:`~kernelindex_sdk.compare.runs`): their references looked
up, against the records of both sides for a before/after.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import attrs

from kernelindex_sdk.compare.records import LoadResult, ProblemSink, RecordIndex, load_walked
from kernelindex_sdk.compare.runs import ResolvedRun, Resolver, refresh_runs, resolve_runs
from kernelindex_sdk.errors import Problem

if TYPE_CHECKING:
    from kernelindex_sdk.base.progress import Progress
    from kernelindex_sdk.errors import IntakeError
    from kernelindex_sdk.reading.sources import FileSource, Source

#: Makes the progress bar of one side's loading, from the side (``candidate`` or
#: ``reference``) and the bytes it will read (None when that cannot be told).
ProgressFactory = Callable[[str, int | None], "Progress"]


@attrs.frozen
class Side:
    """One side, loaded: its runs (resolved against every record given, both sides'),
    the resolver that resolved them (the records they reference that were not given,
    the GPUs' names), and what was left out."""

    runs: list[ResolvedRun]
    resolver: Resolver
    #: Items (records or bundles) that failed validation and were skipped.
    invalid: int
    #: Paths and documents that could not be read.
    unreadable: int


@attrs.frozen
class Loaded:
    """What :func:`load` read."""

    candidate: Side
    #: None for a plain comparison (no reference set).
    reference: Side | None
    #: Every valid record given, both sides': what the runs reference.
    index: RecordIndex

    @property
    def invalid(self) -> int:
        return self.candidate.invalid + (self.reference.invalid if self.reference else 0)

    @property
    def unreadable(self) -> int:
        return self.candidate.unreadable + (self.reference.unreadable if self.reference else 0)


def load(
    candidate: Sequence[str],
    reference: Sequence[str] | None = None,
    *,
    on_problem: ProblemSink | None = None,
    progress: ProgressFactory | None = None,
) -> Loaded:
    """Read, validate and resolve the runs under ``candidate`` and, for a before/after,
    under ``reference`` (read first). Never raises for bad input: what cannot be read
    and what is invalid is counted, each problem passed to ``on_problem`` as it is
    found (with the side's progress bar, if any, paused around it).

    For a before/after each run is resolved as it is read and its parsed record let
    go at once: only the resolved runs (a fraction of the size) are held, never a
    side's records. Referenced records may come later, or with the other side (a
    workload file given once): once both sides are read, each run is resolved again
    from the digests it keeps, against every record given (:func:`refresh_runs`).
    """
    if reference is None:
        read = _read(candidate, "candidate", on_problem, progress)
        runs, resolver = resolve_runs(read.index)
        return Loaded(_side(runs, resolver, read), None, read.index)
    before_read, before_early = _read_resolving(reference, "reference", on_problem, progress)
    after_read, after_early = _read_resolving(candidate, "candidate", on_problem, progress)
    merged = RecordIndex(records={**after_read.index.records, **before_read.index.records})
    before, before_resolver = refresh_runs(before_early, merged)
    del before_early
    after, after_resolver = refresh_runs(after_early, merged)
    del after_early
    sides = _side(after, after_resolver, after_read), _side(before, before_resolver, before_read)
    return Loaded(*sides, merged)


def _side(runs: list[ResolvedRun], resolver: Resolver, read: LoadResult) -> Side:
    return Side(runs, resolver, read.invalid, read.unreadable)


def _read(
    paths: Sequence[str],
    side: str,
    on_problem: ProblemSink | None,
    progress: ProgressFactory | None,
    index: RecordIndex | None = None,
) -> LoadResult:
    """One side's records, from one walk of its paths, the bar (if any) counting the
    bytes the walk found."""
    from kernelindex_sdk.reading.sources import expand

    found = list(expand(paths))
    if progress is None:
        return load_walked(found, on_problem=on_problem, index=index, facts=True)
    bar = progress(side, _bytes(found))

    def said(problem: Problem) -> None:
        if on_problem is not None:
            with bar.paused():
                on_problem(problem)

    with bar:
        return load_walked(found, on_problem=said, on_read=bar.advance, index=index, facts=True)


def _read_resolving(
    paths: Sequence[str],
    side: str,
    on_problem: ProblemSink | None,
    progress: ProgressFactory | None,
) -> tuple[LoadResult, list[ResolvedRun]]:
    """:func:`_read`, each run resolved as it is read (against the records read so far)."""
    index = RecordIndex()
    resolver = Resolver(index)
    resolved: list[ResolvedRun] = []
    index.on_run = lambda stored: resolved.append(resolver.resolve(stored))
    read = _read(paths, side, on_problem, progress, index)
    index.on_run, index.streamed = None, set()  # repeats are counted: let go of the digests
    return read, resolved


def _bytes(found: Sequence[Source | IntakeError]) -> int | None:
    """The bytes of the files a walk found; None with standard input among them."""
    from kernelindex_sdk.reading.sources import FileSource, StdinSource

    if any(isinstance(source, StdinSource) for source in found):
        return None
    return sum(_size(source) for source in found if isinstance(source, FileSource))


def _size(source: FileSource) -> int:
    """A file's size as the walk saw it, or as it is now (0 if it cannot be told)."""
    if source.size is not None:
        return source.size
    with contextlib.suppress(OSError):
        return os.stat(source.path).st_size
    return 0
