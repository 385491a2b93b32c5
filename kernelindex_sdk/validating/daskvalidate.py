"""Validating JSON Lines on a Dask cluster: past one machine, the same verdicts.

:func:`validate_bag` takes a ``dask.bag`` of JSON Lines text — one element per line,
plain strings or the ``(line, path)`` pairs of ``dask.bag.read_text(...,
include_path=True)`` — and returns the problems and the tally that ``kernelindex
validate`` gives for the same lines: the same :class:`~kernelindex_sdk.errors.Problem`
values (file, line, pointer, message), in the same order, and the same counts.

It is the parallel pipeline's design (:mod:`kernelindex_sdk.validating.pipeline`) on Dask's
scheduler instead of forked workers:

1. a first pass counts each partition's lines per file, so each partition knows the
   line its first element has in its file (lines are numbered as ``validate`` numbers
   them, from 1 in each file);
2. each partition is checked by its own
   :class:`~kernelindex_sdk.validating.validation.ValidationSession` on a worker, which sends
   back only the items with problems, its counts, and — with ``strict_refs`` — the
   digests it saw and the references it could not resolve;
3. the caller's session merges those in partition order and resolves the references
   once, at the end, exactly as ``validate --strict-refs`` does.

Dask is the optional ``[dask]`` extra and is imported only when this runs. What a
bag cannot carry, this cannot report: a file with no line at all is no element (so
not the "empty document" ``validate`` reports for it), and bytes that are not UTF-8
fail in Dask's own text decoding before they get here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple, cast

from kernelindex_sdk.errors import IntakeError, Problem
from kernelindex_sdk.reading.intake.jsonl import jsonl_records
from kernelindex_sdk.validating.pipeline import Tally
from kernelindex_sdk.validating.validation import Item, ValidationSession, unreadable_item

__all__ = ["DaskValidation", "validate_bag"]


@dataclass(slots=True)
class DaskValidation:
    """What :func:`validate_bag` found: as ``kernelindex validate`` reports it."""

    #: Items with problems, in input order (each problem is on its item).
    items: list[Item] = field(default_factory=list)
    #: References resolved only at the end (``strict_refs``).
    late: list[Problem] = field(default_factory=list)
    tally: Tally = field(default_factory=Tally)

    @property
    def problems(self) -> list[Problem]:
        """Every problem, in the order ``validate`` prints them."""
        return [p for item in self.items for p in item.problems] + self.late


class _PartResult(NamedTuple):
    items: tuple[Item, ...]
    tally: Tally
    known: tuple[tuple[str, str], ...]
    pending: tuple[Any, ...]


def _split(element: Any, default_source: str) -> tuple[str, str]:
    """(line, path) of one bag element."""
    if isinstance(element, tuple):
        return str(element[0]), str(element[1])
    return str(element), default_source


def _count_lines(
    partition: Iterable[Any], default_source: str
) -> list[tuple[tuple[str, int], ...]]:
    """One element: (path, lines) in the order the partition holds them."""
    counts: dict[str, int] = {}
    for element in partition:
        _, path = _split(element, default_source)
        counts[path] = counts.get(path, 0) + 1
    return [tuple(counts.items())]


def _check_partition(
    partition: Iterable[Any],
    first_lines: dict[str, int],
    default_source: str,
    strict_refs: bool,
    strict_numbers: bool,
) -> _PartResult:
    """Check one partition on a worker: its items with problems, its counts, and the
    references for the caller to resolve."""
    session = ValidationSession(strict_refs=strict_refs, strict_json=True)
    tally = Tally()
    kept: list[Item] = []
    next_line = dict(first_lines)
    run: list[bytes] = []
    run_source: str | None = None

    def flush() -> None:
        if run_source is None or not run:
            return
        start = next_line[run_source]
        for document in jsonl_records(run, run_source, start, True, strict_numbers):
            if isinstance(document, IntakeError):
                found = [unreadable_item(document)]
            else:
                found = session.check_document(
                    document.value, source=document.source, line=document.line
                )
            for item in found:
                tally.count(item)
                if item.problems:
                    kept.append(item)
        next_line[run_source] = start + len(run)
        run.clear()

    for element in partition:
        line, path = _split(element, default_source)
        if path != run_source:
            flush()
            run_source = path
        run.append(line.encode("utf-8"))
    flush()
    known, pending = session.take_references()
    return _PartResult(tuple(kept), tally, tuple(known), tuple(pending))


def validate_bag(
    bag: Any,
    *,
    strict_refs: bool = False,
    strict_numbers: bool = False,
    source: str = "<bag>",
) -> DaskValidation:
    """Validate the JSON Lines in ``bag`` on the current Dask scheduler.

    ``bag``: a ``dask.bag.Bag`` of lines (strings, ending in ``\\n`` or not) or of
    ``(line, path)`` pairs; plain strings are all of one file named ``source``. Runs
    on whatever scheduler is current (a ``dask.distributed.Client``'s cluster, or
    Dask's default). ``strict_refs`` and ``strict_numbers`` are ``validate``'s options
    of the same names. See the module docstring for what is reported.
    """
    import dask
    from dask.delayed import delayed

    counts = bag.map_partitions(_count_lines, source).compute()
    parts = bag.to_delayed()
    if len(counts) != len(parts):  # pragma: no cover - one count per partition, by construction
        raise RuntimeError("dask returned a line count per partition that does not match")
    seen: dict[str, int] = {}
    tasks = []
    for part, part_counts in zip(parts, counts, strict=True):
        first_lines = {path: seen.get(path, 0) + 1 for path, _ in part_counts}
        for path, lines in part_counts:
            seen[path] = seen.get(path, 0) + lines
        tasks.append(
            delayed(_check_partition)(part, first_lines, source, strict_refs, strict_numbers)
        )
    # dask ships no types for compute(): typed here by what _check_partition returns.
    results: tuple[_PartResult, ...] = cast(Any, dask).compute(*tasks)
    session = ValidationSession(strict_refs=strict_refs, strict_json=True)
    found = DaskValidation()
    tally = found.tally
    tally.files = len(seen)
    for result in results:
        tally.valid += result.tally.valid
        tally.invalid += result.tally.invalid
        tally.unreadable += result.tally.unreadable
        found.items.extend(result.items)
        session.add_references(result.known, result.pending)
    found.late = session.finish()
    tally.invalid += session.invalidated
    tally.valid -= session.invalidated
    return found
