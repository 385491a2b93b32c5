"""``kernelindex store add``: check every record as ``validate --strict-refs`` does,
then append the valid ones to the store in one transaction.

Two phases, so the store's lock is held only for the second:

1. **Check and stage.** The document pipeline runs with a
   :class:`~kernelindex_sdk.validating.validation.ValidationSession` in ``strict_refs`` mode —
   the checks of ``validate --strict-refs``, reported the same way. References not
   resolved by the records given are looked up in the store (a short read) before the
   session decides, so a run may reference a workload added last week. Each valid
   item is staged in the process that checked it (a worker, usually) as rows of
   staging files (JSON Lines, in the temporary directory): each record's text as
   given (compact, key order kept: what reading the store gives back, so reports are
   byte for byte those over the files; its RFC 8785 form is not stored, as
   ``kernelindex canonicalize`` recomputes it from that text), digest, kind, the
   shape it came in and where it was read; a small row of keys (number, digest,
   item) per record; each run's row of facts
   (:mod:`kernelindex_sdk.store.facts`). A worker hands over one payload per task
   (bytes the parent writes as they are); only items with problems travel as items.
   Memory stays bounded: references are resolved as soon as what they name has been
   seen, and only those still open are kept (:class:`_StoreAwareChecker`).
2. **Commit.** One DuckDB transaction inserts the staged records not refused and not
   already present (same digest: counted, not stored twice; the first occurrence in
   input order wins, chosen over the keys, so the large staging file is read once),
   their facts, a row in ``adds``, and the fingerprint of the
   checks they passed (:mod:`kernelindex_sdk.schema.fingerprint`) in ``kernelindex_store``.
   Killed at any moment, the store has all of the add or none of it (DuckDB's
   write-ahead log); nothing already stored is ever updated.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from kernelindex_sdk.base.wording import counted
from kernelindex_sdk.canonical import DIGEST_PREFIX
from kernelindex_sdk.compare.records import RecordIndex, StoredRun
from kernelindex_sdk.compare.runs import Resolver
from kernelindex_sdk.errors import IntakeError, Problem
from kernelindex_sdk.reading.intake import loads
from kernelindex_sdk.reading.kistore import StoreError, checks_key, connect
from kernelindex_sdk.schema.fingerprint import checks_fingerprint
from kernelindex_sdk.store.facts import referenced_digests, run_facts
from kernelindex_sdk.validating.pipeline import Pipeline
from kernelindex_sdk.validating.validation import (
    Item,
    ValidationSession,
    is_bundle,
    records_of,
    resolve_references,
)

__all__ = ["AddResult", "add"]

_RUN = "BenchmarkRun"
#: DuckDB's memory limit and threads while an add commits. It spills to disk past the
#: limit, except for what an uncommitted insert holds: each inserting thread fills a
#: row group (122,880 rows) before writing it out. With 4 threads an insert of 300,000
#: runs ran out of 512 MB; with 2 a real add of 10^6 bundles did too (488 MiB used).
#: One thread within 768 MB commits 10^6 bundles, the add peaking at 894 MiB RSS (wait4)
#: (docs/store.md, "Scale"): under 1 GiB, the issue's bound.
COMMIT_MEMORY = "768MB"
COMMIT_THREADS = 1
#: Columns of a row of the staging file of records. A worker numbers its rows
#: (``t``, from 1) and their lines (``line``) within its task; the parent, taking the
#: tasks in order, fills in where the task's rows and lines start (``b``, ``o``), so
#: that a record's number is ``b + t`` and its line ``line + o``.
_RECORD_COLUMNS = {
    "b": "BIGINT",
    "o": "BIGINT",
    "t": "BIGINT",
    "line": "BIGINT",
    "digest": "VARCHAR",
    "kind": "VARCHAR",
    "api_version": "VARCHAR",
    "name": "VARCHAR",
    "record": "VARCHAR",
    "standalone": "BOOLEAN",
    "members": "VARCHAR",
    "origin": "VARCHAR",
    "item_pointer": "VARCHAR",
}
#: Columns of the staging file of keys: each staged record's number, digest and item.
_KEY_COLUMNS = {
    "b": "BIGINT",
    "o": "BIGINT",
    "t": "BIGINT",
    "line": "BIGINT",
    "digest": "VARCHAR",
    "origin": "VARCHAR",
    "item_pointer": "VARCHAR",
}
#: How every staged row starts in a worker; the parent puts ``b`` and ``o`` in its
#: place (one ``bytes.replace`` per task: ``{"b":`` cannot occur inside a JSON string).
_UNPLACED = b'{"b":__________,"o":__________,'
#: In process, staged rows go to the staging files in batches of this many bytes.
_BATCH_BYTES = 4 << 20
#: References still open held in memory; beyond, in the staging folder (_Held).
HELD_IN_MEMORY = 65_536
#: Bytes of a raw SHA-256 digest.
_RAW = 32


@dataclass(slots=True)
class AddResult:
    """What one ``add`` did, in records (a bundle is several) and items."""

    #: Records newly stored.
    stored: int = 0
    #: Records given whose digest the store held before this add.
    present: int = 0
    #: Further copies of a record this add was given more than once (each digest is
    #: stored, or found present, once; its other copies are counted here).
    repeated: int = 0
    #: Items (records or bundles) refused: invalid, or referencing what is nowhere.
    refused: int = 0
    #: Paths and documents that could not be read.
    unreadable: int = 0
    #: Files (and stores) read.
    files: int = 0
    #: The id of this add in the store's ``adds`` table (0: nothing was committed).
    add_id: int = 0
    problems: list[Problem] = field(default_factory=list)

    def summary(self) -> str:
        unreadable = f", {self.unreadable} unreadable" if self.unreadable else ""
        repeated = f", {self.repeated} repeated in the input" if self.repeated else ""
        return (
            f"{self.stored} stored, {self.present} already present{repeated},"
            f" {self.refused} refused{unreadable} in {counted(self.files, 'file')}"
        )

    def exit_status(self) -> int:
        """2: something unreadable or nothing found; 1: something refused; else 0."""
        if self.unreadable or not self.files:
            return 2
        return 1 if self.refused else 0


class _Batch:
    """What staging a task's valid items made, in the process that checked them:
    rows of the staging files, numbered within the task (:data:`_UNPLACED`), handed
    to the parent in one piece (:meth:`_StoreAwareChecker.take_payload`)."""

    __slots__ = ("deferred", "facts", "keys", "records", "references", "rows", "skipped")

    def __init__(self) -> None:
        self.records = bytearray()
        self.keys = bytearray()
        self.facts = bytearray()
        #: Rows staged (records and keys alike).
        self.rows = 0
        #: Copies of records counted, not staged (see :meth:`_Stager.stage`).
        self.skipped = 0
        #: Runs whose referenced records the stager had not all seen: their facts are
        #: made at the end.
        self.deferred: list[tuple[StoredRun, tuple[str, int | None, str]]] = []
        #: Records runs reference, the first time this process saw each.
        self.references: list[tuple[str, Mapping[str, Any]]] = []

    def payload(self) -> tuple[Any, ...]:
        return (
            bytes(self.records),
            bytes(self.keys),
            bytes(self.facts),
            self.rows,
            self.skipped,
            self.deferred,
            self.references,
        )


class _Held:
    """References not resolved when they were merged, in order: kept until every
    record has been seen, in memory up to :data:`HELD_IN_MEMORY` of them and in a
    file of the staging folder beyond (an add of runs that all reference stored
    records holds one per reference; its memory must not grow with them)."""

    def __init__(self, folder: str) -> None:
        self.path = os.path.join(folder, "held.pickle")
        self.entries: list[Any] = []
        self.spilled = 0
        #: The digests they reference, once each.
        self.digests: set[str] = set()

    def add(self, entry: Any) -> None:
        self.entries.append(entry)
        self.digests.add(entry.digest)
        if len(self.entries) >= HELD_IN_MEMORY:
            with open(self.path, "ab") as spill:
                pickle.dump(self.entries, spill, protocol=pickle.HIGHEST_PROTOCOL)
            self.entries = []
            self.spilled += 1

    def __iter__(self) -> Iterator[Any]:
        if self.spilled:
            with open(self.path, "rb") as spill:
                for _ in range(self.spilled):
                    yield from pickle.load(spill)  # our own file, written above
        yield from self.entries


class _StoreAwareChecker:
    """A pipeline checker: the session's checks, with references the records given do
    not resolve looked up in the store before they are reported; each valid item is
    staged where it is checked (:class:`_Batch`; from a worker, one payload a task:
    the parent only writes bytes).

    ``--strict-refs`` as a :class:`ValidationSession` does it keeps every run's
    references until the end (~2 KB a run). Here each is resolved as soon as the
    record it names has been seen — in a bundle, at once, in the process that checked
    it — and only those still open are kept (:class:`_Held`); of the records seen, the
    kinds of those that are not runs are kept by digest (runs reference them, a few
    distinct ones), and the runs' digests as 32 raw bytes each (a run can only be
    named by mistake: they serve the message saying so). The problems are those of
    the session (:func:`~kernelindex_sdk.validating.validation.resolve_references`), in its order.
    """

    def __init__(
        self,
        inner: ValidationSession,
        store: str,
        on_wait: Callable[[str], None],
        staging: str,
        writer: _Writer,
    ) -> None:
        self.inner = inner
        self.store = store
        #: DuckDB settings of its read-only connections (``add``'s ``read_config``).
        self.read_config: dict[str, Any] | None = None
        self.on_wait = on_wait
        self.writer = writer
        self.invalidated = 0
        self.stager = _Stager()
        #: Records of the store that resolved a reference: digest → record.
        self.from_store: dict[str, Mapping[str, Any]] = {}
        #: The items (source, line, pointer) refused only at the end.
        self.refused_late: set[tuple[str, int | None, str]] = set()
        #: The process that made this checker (the parent); workers are forks.
        self._home = os.getpid()
        #: Digest → kind of every record seen that is not a run (in a worker: by it).
        self._kinds: dict[str, str] = {}
        #: Every run digest seen, 32 raw bytes each (the parent's).
        self._runs = bytearray()
        self._held = _Held(staging)
        #: A worker's, until :meth:`take_references` hands them over.
        self._known_out: list[tuple[str, str]] = []
        self._runs_out: list[str] = []
        self._pending_out: list[Any] = []
        self._batch = _Batch()

    def prepare(self) -> None:
        self.inner.prepare()

    def check_document(
        self, value: Any, *, source: str = "<input>", line: int | None = None
    ) -> list[Item]:
        items = self.inner.check_document(value, source=source, line=line)
        at_risk = self._gather(*self.inner.take_references())
        batch = self._batch
        for item in items:
            if not item.problems:
                key = (item.source, item.line, item.pointer)
                self.stager.stage(item, key in at_risk, batch)
        if self._home == os.getpid() and len(batch.records) >= _BATCH_BYTES:
            self.writer.batch(self.take_payload(), 0)  # in process: lines are whole-file
        return items

    def passes(self, value: Any, written: bytes | None = None) -> bool:
        return False  # every item is staged

    def take_payload(self) -> tuple[Any, ...]:
        """What this process staged since the last call (:meth:`_Writer.batch`)."""
        payload = self._batch.payload()
        self._batch = _Batch()
        return payload

    def add_payload(self, payload: tuple[Any, ...], offset: int) -> None:
        self.writer.batch(payload, offset)

    def _gather(
        self, known: Iterable[tuple[str, str]], pending: Iterable[Any]
    ) -> set[tuple[str, int | None, str]]:
        """One document's references, resolved where they can be already; the items
        with one still open."""
        kinds = self._kinds
        runs: list[str] = []
        for digest, kind in known:
            if kind == _RUN:
                runs.append(digest)
            elif digest not in kinds:
                kinds[digest] = kind
                self._known_out.append((digest, kind))
        open_ = [entry for entry in pending if kinds.get(entry.digest) != entry.kind]
        if os.getpid() == self._home:  # in process: this is the parent
            self._known_out.clear()
            self._add_runs(runs)
            self._hold(open_)
        else:
            self._runs_out.extend(runs)
            self._pending_out.extend(open_)
        return {entry.item for entry in open_}

    def take_references(self) -> tuple[list[tuple[str, str]], list[Any]]:
        """A worker's batch for the parent: the records not runs it saw first, its run
        digests in one string (under the kind ``BenchmarkRun``), its open references."""
        known, pending = self._known_out, self._pending_out
        if self._runs_out:
            known.append(("".join(self._runs_out), _RUN))
        self._known_out, self._runs_out, self._pending_out = [], [], []
        return known, pending

    def add_references(self, known: Iterable[tuple[str, str]], pending: Iterable[Any]) -> None:
        kinds = self._kinds
        for digest, kind in known:
            if kind == _RUN:
                self._add_runs([digest])
            else:
                kinds.setdefault(digest, kind)
        self._hold(pending)

    def _add_runs(self, digests: list[str]) -> None:
        """Run digests (``sha256:`` and 64 hex digits each, as computed), joined or not."""
        if digests:
            self._runs += bytes.fromhex("".join(digests).replace(DIGEST_PREFIX, ""))

    def _hold(self, pending: Iterable[Any]) -> None:
        kinds, held = self._kinds, self._held
        for entry in pending:
            if kinds.get(entry.digest) != entry.kind:
                held.add(entry)

    def finish(self) -> list[Problem]:
        if self._home == os.getpid():
            self.writer.batch(self.take_payload(), 0)  # in process: the last rows
        kinds = self._kinds
        missing = {digest for digest in self._held.digests if digest not in kinds}
        for digest in self._runs_among(missing):
            kinds[digest] = _RUN
            missing.discard(digest)
        if missing and os.path.exists(self.store):
            with connect(
                self.store, read_only=True, on_wait=self.on_wait, config=self.read_config
            ) as connection:
                rows = connection.execute(
                    "SELECT digest, kind, any_value(record) FROM records"
                    " WHERE digest IN (SELECT unnest(?)) GROUP BY digest, kind",
                    [sorted(missing)],
                ).fetchall()
            for digest, kind, text in rows:
                kinds.setdefault(digest, kind)
                self.from_store[digest] = _stored(self.store, digest, text)
        late, self.refused_late = resolve_references(self._held, kinds.get)
        self.invalidated = len(self.refused_late)
        return late

    def _runs_among(self, digests: set[str]) -> list[str]:
        """Those of ``digests`` that are digests of runs seen."""
        raw: dict[bytes, str] = {}
        for digest in digests:
            if digest.startswith(DIGEST_PREFIX):
                with contextlib.suppress(ValueError):
                    key = bytes.fromhex(digest[len(DIGEST_PREFIX) :])
                    if len(key) == _RAW:
                        raw[key] = digest
        if not raw or not self._runs:
            return []
        found = []
        runs = memoryview(self._runs)
        for at in range(0, len(runs), _RAW):
            named = raw.get(runs[at : at + _RAW].tobytes())
            if named is not None:
                found.append(named)
        return found


class _Stager:
    """Turns each valid item into its staging rows: every record's texts, digest and
    place, and each run's facts (:mod:`kernelindex_sdk.store.facts`)."""

    def __init__(self) -> None:
        from orjson import dumps

        self._dumps = dumps
        self.index = RecordIndex()
        self.resolver = Resolver(self.index)
        #: The (few, repeated) records runs reference, by digest: the record and its
        #: static part of a staging row (texts, kind, name), for a copy equal to it.
        self._rows: dict[str, tuple[Mapping[str, Any], bytes]] = {}
        #: Digests of records (not runs) this process staged from an item that cannot
        #: be refused any more (no reference of its is open).
        self._safe: set[str] = set()

    def stage(self, item: Item, at_risk: bool, batch: _Batch) -> None:
        """Stage one valid item; ``at_risk``: a reference of its is still open, so it
        may yet be refused.

        A copy of a record that is not a run, of which this process has staged a copy
        from an earlier item that cannot be refused, is only counted
        (:attr:`_Batch.skipped`): that copy, or one before it, is stored (or the store
        holds it), and this one would be "already present" either way. (Runs are
        rarely repeated; their copies are left to the commit.)
        """
        value = item.value
        bundle = is_bundle(value)
        members = records_of(value, item.pointer)
        shape = self._shape(item, members) if bundle else None
        key = (item.source, item.line, item.pointer)
        place = self._dumps({"origin": item.source, "item_pointer": item.pointer})[1:-1]
        standalone = b"false" if bundle else b"true"
        line = b"null" if item.line is None else b"%d" % item.line
        records, keys, safe = batch.records, batch.keys, self._safe
        runs: list[StoredRun] = []
        for (at, record), ref in zip(members, item.records, strict=True):
            digest = ref.digest
            assert digest is not None  # a valid record has one
            if ref.kind == _RUN:
                runs.append(StoredRun(digest, record, item.source, item.line, at))
                head = self._head(digest, ref.kind, ref.name, record)
                members_json = self._dumps(shape)
            else:
                if digest in safe and not at_risk:
                    batch.skipped += 1
                    continue
                if not at_risk:
                    safe.add(digest)
                cached = self._rows.get(digest)
                if cached is None or (cached[0] is not record and cached[0] != record):
                    if len(self._rows) >= 65_536:
                        self._rows.clear()
                    head = self._head(digest, ref.kind, ref.name, record)
                    cached = self._rows[digest] = (record, head)
                head = cached[1]
                members_json = b"null"
                if digest not in self.index.records:
                    self.index.records[digest] = record
                    batch.references.append((digest, record))
            batch.rows += 1
            start = _UNPLACED + b'"t":%d,"line":%s,' % (batch.rows, line)
            records += b'%s%s,"standalone":%s,"members":%s,%s}\n' % (
                start,
                head[1:-1],
                standalone,
                members_json,
                place,
            )
            keys += b'%s"digest":"%s",%s}\n' % (start, digest.encode(), place)
        for stored in runs:
            if all(d in self.index.records for d in referenced_digests(stored.record)):
                batch.facts += self.facts(stored, key) + b"\n"
            else:
                batch.deferred.append((stored, key))

    def _shape(self, item: Item, members: list[tuple[str, Mapping[str, Any]]]) -> str:
        """A bundle's members other than runs, as ``[[pointer, digest], ...]`` (pointers
        within the bundle): the ``members`` its run's row holds."""
        prefix = len(item.pointer) + 1
        return self._dumps(
            [
                [at[prefix:], ref.digest]
                for (at, _), ref in zip(members, item.records, strict=True)
                if ref.kind != _RUN
            ]
        ).decode()

    def _head(self, digest: str, kind: str, name: str | None, record: Mapping[str, Any]) -> bytes:
        """The static part of a record's row: a JSON object of its digest, kind, name,
        its text as given (compact, its key order kept: what is read back). Not its
        canonical form: recomputable from that text, and storing it would cost a second
        canonicalization per record and double what the commit compresses."""
        try:
            given = self._dumps(record).decode()
        except TypeError:  # an integer past 64 bits: the standard library writes it
            given = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        return self._dumps(
            {
                "digest": digest,
                "kind": kind,
                "api_version": record["apiVersion"],
                "name": name,
                "record": given,
            }
        )

    def facts(self, stored: StoredRun, key: tuple[str, int | None, str]) -> bytes:
        row = run_facts(self.resolver.resolve(stored), stored.record)
        row["item_pointer"] = key[2]
        return self._dumps(row)


class _Writer:
    """Writes the staged payloads to the staging files, in input order."""

    def __init__(
        self, records: IO[bytes], keys: IO[bytes], facts: IO[bytes], deferred: IO[bytes]
    ) -> None:
        self.records = records
        self.keys = keys
        self.facts = facts
        self.deferred_file = deferred
        self.deferred = 0
        #: Rows staged so far (the next task's rows are numbered after them).
        self.n = 0
        self.skipped = 0
        self.index = RecordIndex()

    def batch(self, payload: tuple[Any, ...], offset: int) -> None:
        """Write one task's payload (:meth:`_Batch.payload`); ``offset``: the lines of
        its file before its range (a worker numbers its lines from its range's start)."""
        records, keys, facts, rows, skipped, deferred, references = payload
        if rows:
            placed = b'{"b":%d,"o":%d,' % (self.n, offset)
            self.records.write(records.replace(_UNPLACED, placed))
            self.keys.write(keys.replace(_UNPLACED, placed))
            self.n += rows
        self.skipped += skipped
        self.facts.write(facts)
        for entry in deferred:
            pickle.dump(entry, self.deferred_file, protocol=pickle.HIGHEST_PROTOCOL)
            self.deferred += 1
        for digest, record in references:
            self.index.records.setdefault(digest, record)

    def finish(self, from_store: Mapping[str, Mapping[str, Any]], deferred_path: str) -> None:
        """Facts of the runs whose references were resolved late (or by the store)."""
        if not self.deferred:
            return
        for digest, record in from_store.items():
            self.index.records.setdefault(digest, record)
        stager = _Stager()
        stager.index = self.index
        stager.resolver = Resolver(self.index)
        self.deferred_file.flush()
        with open(deferred_path, "rb") as deferred:
            for _ in range(self.deferred):
                stored, key = pickle.load(deferred)  # our own file, written above
                self.facts.write(stager.facts(stored, key) + b"\n")
        self.deferred = 0


def add(
    paths: Sequence[str],
    store: str,
    *,
    jobs: int | None = None,
    on_problem: Callable[[Problem], None] | None = None,
    on_wait: Callable[[str], None] | None = None,
    wait_s: float = 600.0,
    all_or_nothing: bool = False,
    origins: Mapping[str, str] | None = None,
    before_commit: Callable[[], None] | None = None,
    read_config: dict[str, Any] | None = None,
) -> AddResult:
    """Check every record under ``paths`` and add the valid ones to ``store``.

    ``on_problem`` gets each problem as found (a refused item, an unreadable path).
    ``on_wait`` gets one message when another process holds the store for over a
    second. Raises :class:`~kernelindex_sdk.reading.kistore.StoreError` when the store
    cannot be used (foreign, corrupt, locked past ``wait_s``) and ``OSError`` when a
    disk fills or a file cannot be written; in either case nothing was added.

    ``all_or_nothing``: anything refused or unreadable, and nothing is added (a
    submission to ``kernelindex serve`` is one request). ``origins``: the place to
    store for records read from a path (path → name; the path itself otherwise).
    ``before_commit`` runs just before the store is opened for the commit; whatever
    it raises stops the add there, with nothing added (a deadline). ``read_config``:
    DuckDB settings of the add's read-only connections (a server's own, so that the
    database it keeps open serves them: :func:`~kernelindex_sdk.reading.kistore.keep_open`).
    """
    report = on_problem or (lambda problem: None)
    waited = on_wait or (lambda message: None)
    if os.path.exists(store):  # a foreign or corrupt store is said at once, not after checks
        with connect(
            store, read_only=True, on_wait=waited, wait_s=wait_s, appending=True, config=read_config
        ):
            pass
    result = AddResult()
    with tempfile.TemporaryDirectory(prefix="kernelindex-add-") as staging:
        paths_of = {
            name: os.path.join(staging, f"{name}.jsonl")
            for name in ("records", "keys", "facts", "refused")
        }
        checker, writer = _check_and_stage(
            paths, store, jobs, staging, paths_of, result, report, waited, read_config
        )
        _write_refused(paths_of["refused"], staging, checker.refused_late)
        if all_or_nothing and (result.problems or result.refused or result.unreadable):
            return result
        if writer.n:
            if before_commit is not None:
                before_commit()
            _commit(
                store,
                paths_of,
                writer.skipped,
                bool(checker.refused_late),
                result,
                waited,
                wait_s,
                origins or {},
            )
    return result


def _write_refused(path: str, staging: str, refused_late: set[tuple[str, int | None, str]]) -> None:
    """The items refused only at the end, for the commit to leave out."""
    from orjson import dumps

    with _named(staging), open(path, "wb") as refused:
        for source, line, pointer in sorted(refused_late, key=str):
            refused.write(
                dumps({"origin": source, "origin_line": line, "item_pointer": pointer}) + b"\n"
            )


def _check_and_stage(
    paths: Sequence[str],
    store: str,
    jobs: int | None,
    staging: str,
    paths_of: Mapping[str, str],
    result: AddResult,
    report: Callable[[Problem], None],
    waited: Callable[[str], None],
    read_config: dict[str, Any] | None = None,
) -> tuple[_StoreAwareChecker, _Writer]:
    """Check every record as ``validate --strict-refs`` does, references resolving
    into the store too, and stage the valid ones in ``staging``; what was refused or
    could not be read counted in ``result`` and reported."""
    session = ValidationSession(strict_refs=True, strict_json=True, keep_values=True)
    deferred_path = os.path.join(staging, "deferred.pickle")
    with (
        _named(staging),
        open(paths_of["records"], "wb") as records,
        open(paths_of["keys"], "wb") as keys,
        open(paths_of["facts"], "wb") as facts,
        open(deferred_path, "wb") as deferred,
    ):
        writer = _Writer(records, keys, facts, deferred)
        checker = _StoreAwareChecker(session, store, waited, staging, writer)
        checker.read_config = read_config
        # Only items with problems come back: the valid ones are staged where
        # they are checked, and arrive as their tasks' payloads.
        pipeline = Pipeline(paths, checker=checker, jobs=jobs, report="problems")
        for item in pipeline:
            if item.unreadable:
                result.unreadable += 1
            else:
                result.refused += 1
            for problem in item.problems:
                result.problems.append(problem)
                report(problem)
        for problem in pipeline.late:
            result.problems.append(problem)
            report(problem)
        result.refused += pipeline.checker.invalidated
        result.files = pipeline.tally.files
        writer.finish(checker.from_store, deferred_path)
    return checker, writer


def _stored(store: str, digest: str, text: Any) -> Any:
    """A stored record a new one references, parsed; a text that is not one (a table
    edited by hand) is the store's problem: nothing is added."""
    try:
        if not isinstance(text, str):
            raise IntakeError("no text stored")
        return loads(text.encode())
    except IntakeError as error:
        raise StoreError(
            f"{store}: the stored record {digest} cannot be read: {error.problem.message};"
            " nothing added"
        ) from None


@contextlib.contextmanager
def _named(staging: str) -> Iterator[None]:
    """An ``OSError`` while staging (a full temporary disk) names the staging folder."""
    try:
        yield
    except OSError as error:
        if error.filename is None:
            raise OSError(error.errno, error.strerror, staging) from None
        raise


def _json_reader(path: str, columns: Mapping[str, str]) -> str:
    """A ``read_json`` of a staging file with its columns typed (nothing inferred)."""
    spec = ", ".join(f"'{name}': '{kind}'" for name, kind in columns.items())
    quoted = path.replace("'", "''")
    return f"read_json('{quoted}', format = 'newline_delimited', columns = {{{spec}}})"


def _commit(
    store: str,
    paths: Mapping[str, str],
    skipped: int,
    any_refused: bool,
    result: AddResult,
    on_wait: Callable[[str], None],
    wait_s: float,
    origins: Mapping[str, str],
) -> None:
    """The one transaction of an add (module docstring).

    The staging file of records (the large one) is read once; which of its rows are
    stored — the first copy of each digest not refused and not already in the store —
    is decided over the small staging file of keys.
    """
    staged, keys, facts = _staging_readers(paths, any_refused)
    with connect(
        store, read_only=False, create=True, on_wait=on_wait, wait_s=wait_s, appending=True
    ) as con:
        # The commit reads the staging files with bounded memory (spilling beside the
        # store when it must): an add's peak stays flat however large the add is.
        con.execute(f"SET memory_limit = '{COMMIT_MEMORY}'")
        con.execute(f"SET threads = {COMMIT_THREADS}")
        con.execute("SET preserve_insertion_order = false")
        try:
            con.execute("BEGIN TRANSACTION")
            add_id, stored, given, distinct = _insert(
                con, staged, keys, facts, skipped, result.refused, origins
            )
            con.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(Exception):
                con.execute("ROLLBACK")
            raise
    result.stored, result.add_id = stored, add_id
    result.present, result.repeated = distinct - stored, given - distinct


def _staging_readers(paths: Mapping[str, str], any_refused: bool) -> tuple[str, str, str]:
    """The staged records, their keys (less the refused items'), and the runs' facts,
    each as a ``read_json`` of its staging file."""
    from kernelindex_sdk.store.facts import FACT_COLUMNS

    staged = _json_reader(paths["records"], _RECORD_COLUMNS)
    keys = _json_reader(paths["keys"], _KEY_COLUMNS)
    if any_refused:
        refused = _json_reader(
            paths["refused"],
            {"origin": "VARCHAR", "origin_line": "BIGINT", "item_pointer": "VARCHAR"},
        )
        keys = (
            f"(SELECT k.* FROM {keys} k ANTI JOIN {refused} f ON k.origin = f.origin"
            " AND k.line + k.o IS NOT DISTINCT FROM f.origin_line"
            " AND k.item_pointer = f.item_pointer)"
        )
    facts = _json_reader(paths["facts"], {**FACT_COLUMNS, "item_pointer": "VARCHAR"})
    return staged, keys, facts


def _insert(
    con: Any,
    staged: str,
    keys: str,
    facts: str,
    skipped: int,
    refused: int,
    origins: Mapping[str, str],
) -> tuple[int, int, int, int]:
    """Inside the transaction: the records and their runs' facts, and the add's row;
    its number, the records stored, the records given and the distinct digests given
    (``origins``: the place to store for a read path, e.g. a posted body's name)."""
    origin = "k.origin"
    for path, name in origins.items():
        origin = f"CASE WHEN k.origin = {_literal(path)} THEN {_literal(name)} ELSE {origin} END"
    row = con.execute("SELECT coalesce(max(add_id), 0) + 1 FROM adds").fetchone()
    add_id = int(row[0]) if row else 1
    row = con.execute("SELECT coalesce(max(seq), 0) FROM records").fetchone()
    base = int(row[0]) if row else 0
    con.execute(
        f"CREATE TEMP TABLE first_copies AS SELECT min(b + t) AS n, count(*) AS copies"
        f" FROM {keys} GROUP BY digest"
    )
    row = con.execute("SELECT coalesce(sum(copies), 0), count(*) FROM first_copies").fetchone()
    given = (int(row[0]) if row else 0) + skipped
    distinct = int(row[1]) if row else 0
    con.execute(
        # Out-of-core throughout (no window function): a record's seq is its
        # staging number after the store's last (gaps where copies were
        # dropped; only the order matters), and the first copy of a digest in
        # this add is found by a hash aggregate over the keys.
        f"""INSERT INTO records
        SELECT {base} + k.b + k.t, k.digest, k.kind, k.api_version, k.name,
               k.record, k.standalone, k.members, {origin},
               k.line + k.o, {add_id}
        FROM {staged} k
        SEMI JOIN first_copies f ON f.n = k.b + k.t
        WHERE NOT EXISTS (SELECT 1 FROM records r WHERE r.digest = k.digest)"""
    )
    con.execute("DROP TABLE first_copies")
    row = con.execute("SELECT count(*) FROM records WHERE add_id = ?", [add_id]).fetchone()
    stored = int(row[0]) if row else 0
    _insert_facts(con, facts, add_id)
    con.execute(
        "INSERT INTO adds VALUES (?, now(), ?, ?, ?)", [add_id, stored, given - stored, refused]
    )
    # What checked this add's records: a reader running the same checks may
    # trust them instead of checking them again (docs/store.md).
    con.execute(
        "INSERT INTO kernelindex_store VALUES (?, ?)", [checks_key(add_id), checks_fingerprint()]
    )
    return add_id, stored, given, distinct


def _literal(text: str) -> str:
    """A SQL string literal of ``text``."""
    return "'" + text.replace("'", "''") + "'"


def _insert_facts(con: Any, facts: str, add_id: int) -> None:
    """The staged facts of the runs this add stored."""
    from kernelindex_sdk.store.facts import FACT_COLUMNS, FROM_STORED_COPY

    fact_names = [name for name in FACT_COLUMNS if name not in FROM_STORED_COPY]
    names = ", ".join([*(f"x.{name}" for name in fact_names), *FROM_STORED_COPY.values()])
    columns = ", ".join([*fact_names, *FROM_STORED_COPY])
    con.execute(
        # Copies of one run have equal staged facts: DISTINCT keeps one (their
        # place and title are the stored copy's).
        f"""INSERT INTO run_facts ({columns}, add_id)
        SELECT DISTINCT {names}, {add_id}
        FROM {facts} x
        JOIN records r ON r.digest = x.digest AND r.add_id = {add_id}"""
    )
