"""Writing imported records to a directory: one bundle per run, or one JSON Lines stream.

Every importer writes through this module (the last step of the shared import path,
map → check → write); only the stream's file name differs (``liger.jsonl``,
``nvbench.jsonl``, ``kernelbench.jsonl``).

Both layouts are deterministic — the same records give the same bytes, whatever order
the rows came in — and all files are written as one batch by the SDK's
``atomic_write_many``, under the directory's writer lock: each file is whole or
absent, never torn; the batch is staged and committed before anything is renamed
into place (a killed write is finished or removed by the next writer); and a file
that would not change is not touched, so importing again into the same directory
modifies nothing. Existing data is never lost:

* ``bundles``: ``DIR/<run name>-<first 16 hex digits of the run digest>.json``, the
  seeds' bundle shape (run, protocol, environment) plus workload and implementation,
  pretty-printed with a trailing newline. Run names are cut at 100 characters and so
  are not unique; the digest prefix makes the file name unique and stable. A file of
  that name with other content (a hand-edited bundle) is never replaced without
  ``force``: the whole write is refused (:class:`ExistingOutput`).
* ``jsonl``: ``DIR/<source>.jsonl``, one compact record per line: protocols, workloads,
  environments, implementations (each sorted by name, then digest), then the runs
  (likewise), so every record a run references comes before it. A stream already
  there is **merged**: every line of it is kept (:class:`ExistingStream`: two lines
  holding one digest with other metadata are two records, both kept), a new record
  whose digest is already there is not added (the copy there stands for it), and
  the rest are added, in the same order. A stream that
  cannot be merged — unreadable, or failing ``validate --strict-refs`` — is refused
  (:class:`ExistingOutput`), or with ``force`` replaced. No records at all write no
  stream: an empty file is not one ``validate`` reads.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, Protocol

import attrs

from kernelindex_sdk.base import recordformat
from kernelindex_sdk.base.fileio import ExistingFiles, atomic_write_many, directory_lock
from kernelindex_sdk.base.fileio import write_steps as fileio_write_steps
from kernelindex_sdk.base.prettyjson import pretty
from kernelindex_sdk.base.recordformat import CURRENT_API_VERSION
from kernelindex_sdk.checks import bundle_members
from kernelindex_sdk.errors import KernelIndexError, Problem
from kernelindex_sdk.validating.pipeline import Pipeline

Layout = Literal["bundles", "jsonl"]
LAYOUTS: tuple[Layout, ...] = ("bundles", "jsonl")
#: Kinds in the order a stream lists them: referenced records before runs.
STREAM_ORDER = ("BenchmarkProtocol", "Workload", "ExecutionEnvironment", "Implementation")
DIGEST_PREFIX_LENGTH = 16


class WrittenRun(Protocol):
    """What the writer needs of a mapped run: the run, its digest, the digests it references."""

    @property
    def run(self) -> dict[str, Any]: ...

    @property
    def digest(self) -> str: ...

    @property
    def refs(self) -> tuple[str, str, str, str]: ...


class OutputError(KernelIndexError):
    """A file could not be written (permissions, disk full, DIR is a file)."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: cannot write: {reason}")


class ExistingOutput(OutputError):
    """Data already in the output would be replaced or lost: nothing was written.

    ``problems``: one line each, naming the file (and line) and why.
    """

    def __init__(self, path: str, reason: str, problems: Sequence[Problem] = ()) -> None:
        super().__init__(path, reason)
        self.problems = list(problems)


@attrs.frozen
class ExistingStream:
    """The stream already in the output, to merge into: every line's record, in order.

    A digest leaves metadata out, so two lines can hold records of one digest — a copy
    with another name or title (added by hand, or by another tool) is another line —
    and a merge must keep both: ``lines`` has each line as (digest, record).
    ``first`` maps each digest to its first copy, the one a new run referencing that
    digest is checked and spelled against.
    """

    lines: tuple[tuple[str, dict[str, Any]], ...]
    first: Mapping[str, dict[str, Any]]


@attrs.define
class WriteResult:
    """What a write did: files whose content changed, and files already identical."""

    written: list[Path] = attrs.field(factory=list)
    unchanged: list[Path] = attrs.field(factory=list)


def bundle_file_name(run: Mapping[str, Any], run_digest: str) -> str:
    """``<run metadata.name>-<16 hex>.json``: unique (digest) and readable (name)."""
    hex_digits = run_digest.partition(":")[2][:DIGEST_PREFIX_LENGTH]
    return f"{run['metadata']['name']}-{hex_digits}.json"


@contextmanager
def output_lock(out_dir: str | os.PathLike[str]) -> Iterator[Path]:
    """Hold ``out_dir``'s writer lock (creating it): no other import writes meanwhile.

    Taking it also finishes or removes what a killed import left there. Raises
    :class:`OutputError` when the directory cannot be created or locked.
    """
    try:
        with directory_lock(out_dir) as directory:
            yield directory
    except OSError as error:
        raise OutputError(str(error.filename or out_dir), error.strerror or str(error)) from None


def read_stream(out_dir: str | os.PathLike[str], jsonl_name: str) -> ExistingStream | None:
    """Every record of ``DIR/<jsonl_name>``, line by line (None if there is none), to merge.

    Read and checked as ``kernelindex validate --strict-refs`` reads it; anything it
    would not pass (an unreadable line, an invalid record, a bundle, a dangling
    reference) raises :class:`ExistingOutput`, because merging would lose or spread it.
    """
    path = Path(out_dir) / jsonl_name
    if not os.path.lexists(path):
        return None
    lines: list[tuple[str, dict[str, Any]]] = []
    first: dict[str, dict[str, Any]] = {}
    problems: list[Problem] = []
    check = Pipeline([str(path)], strict_refs=True, keep_values=True)
    for item in check:
        problems.extend(item.problems)
        if item.problems or item.unreadable:
            continue
        if len(item.records) != 1 or item.pointer:
            problems.append(
                Problem(
                    "not a record: this stream holds one record per line",
                    code="not-a-record",
                    source=item.source,
                    line=item.line,
                )
            )
            continue
        value = item.records[0].digest
        if value is not None:
            lines.append((value, item.value))
            first.setdefault(value, item.value)
    problems.extend(check.late)
    if problems:
        raise ExistingOutput(
            str(path),
            "the stream already there cannot be merged (it would not pass "
            "validate --strict-refs); fix it, or replace it with --force",
            problems,
        )
    return ExistingStream(lines=tuple(lines), first=first)


def write_records(
    runs: Iterable[WrittenRun],
    records: Mapping[str, dict[str, Any]],
    out_dir: str | os.PathLike[str],
    layout: Layout,
    *,
    jsonl_name: str,
    advance: Callable[[int], None] | None = None,
    force: bool = False,
    existing: ExistingStream | None = None,
) -> WriteResult:
    """Write ``runs`` (and the ``records`` they reference, by digest) under ``out_dir``.

    ``existing``: for ``jsonl``, the stream already there (see :func:`read_stream`),
    every line kept. ``force``: replace bundle files that hold other
    content (else :class:`ExistingOutput`, and nothing is written).
    """
    directory = Path(out_dir)
    tick = advance if advance is not None else _no_progress
    if layout == "bundles":
        files = _bundle_files(runs, records, tick)
    elif layout == "jsonl":
        stream = _stream(runs, records, existing, tick)
        # No record at all: no stream. An empty file is not a stream `validate` reads,
        # and would refuse every later import into the folder until --force.
        files = [(jsonl_name, stream)] if stream else []
    else:
        raise ValueError(f"unknown layout {layout!r} (known: {', '.join(LAYOUTS)})")
    result = WriteResult()
    paths = [directory / name for name, _ in files]
    try:
        # One batch: all files or none, and one disk sync rather than one per file.
        changes = atomic_write_many(
            zip(paths, (data for _, data in files), strict=True),
            replace=force or layout == "jsonl",
            advance=tick,
        )
    except ExistingFiles as error:
        problems = [
            Problem(
                "exists with other content: not replaced (use --force to replace it)",
                code="exists",
                source=str(path),
            )
            for path in error.paths
        ]
        raise ExistingOutput(
            str(error.paths[0]),
            f"{len(error.paths)} file(s) of the same name hold other content; nothing "
            "written (use --force to replace them)",
            problems,
        ) from None
    except OSError as error:
        raise OutputError(str(error.filename or directory), error.strerror or str(error)) from None
    for path, changed in zip(paths, changes, strict=True):
        (result.written if changed else result.unchanged).append(path)
    return result


def write_steps(runs: int, layout: Layout) -> int:
    """How many steps :func:`write_records` counts through ``advance`` for ``runs`` runs:
    each run rendered, then each file compared with what is there and staged
    (:func:`~kernelindex_sdk.base.fileio.write_steps`) — so a bar moves through all three,
    not only once everything is on disk."""
    files = runs if layout == "bundles" else 1
    return runs + fileio_write_steps(files)


def _no_progress(n: int) -> None:
    """The ``advance`` of a write nobody watches."""


def _bundle_files(
    runs: Iterable[WrittenRun],
    records: Mapping[str, dict[str, Any]],
    tick: Callable[[int], None] = _no_progress,
) -> list[tuple[str, bytes]]:
    # A few hundred referenced records recur across thousands of bundles: render each
    # once, at the bundle's member depth, and splice it in.
    rendered: dict[str, str] = {}
    files = []
    for mapped in runs:
        members = []
        for member, value in zip(_REF_MEMBERS, mapped.refs, strict=True):
            text = rendered.get(value)
            if text is None:
                text = rendered[value] = pretty(records[value], _MEMBER_INDENT)
            members.append(f'{_MEMBER_INDENT}"{member}": {text}')
        run = f'{_MEMBER_INDENT}"run": {pretty(mapped.run, _MEMBER_INDENT)}'
        text = "{\n" + ",\n".join([run, *members]) + "\n}\n"
        files.append((bundle_file_name(mapped.run, mapped.digest), text.encode("utf-8")))
        tick(1)
    files.sort(key=lambda item: item[0])
    return files


_REF_MEMBERS = bundle_members(CURRENT_API_VERSION)[1:]  # the run's references, in order
_MEMBER_INDENT = "  "


def _stream(
    runs: Iterable[WrittenRun],
    records: Mapping[str, dict[str, Any]],
    existing: ExistingStream | None,
    tick: Callable[[int], None] = _no_progress,
) -> bytes:
    # Every line already there is kept; a new record is added unless its digest is
    # already there (the copy there stands for it, and the runs were checked against it).
    every = list(existing.lines) if existing is not None else []
    held = set(existing.first) if existing is not None else set()
    added = [*records.items(), *((mapped.digest, mapped.run) for mapped in runs)]
    for value, record in added:
        if value not in held:
            held.add(value)
            every.append((value, record))
    by_kind: dict[str, list[tuple[str, str, str]]] = {kind: [] for kind in STREAM_ORDER}
    by_kind["BenchmarkRun"] = []
    for value, record in every:
        # Name, then digest, then the line itself: two copies of one digest (other
        # metadata) still have one order, so the same records give the same bytes.
        line = (record[recordformat.METADATA_KEY][recordformat.NAME_KEY], value, _compact(record))
        by_kind.setdefault(record[recordformat.KIND_KEY], []).append(line)
        if record[recordformat.KIND_KEY] == "BenchmarkRun":
            tick(1)  # a run rendered (the bar's count is capped at its total)
    runs_last = [kind for kind in by_kind if kind != "BenchmarkRun"] + ["BenchmarkRun"]
    lines = [line for kind in runs_last for *_, line in sorted(by_kind[kind])]
    return "".join(line + "\n" for line in lines).encode("utf-8")


def _compact(record: Mapping[str, Any]) -> str:
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False)
