"""``kernelindex store add``: check every record as ``validate --strict-refs`` does,
then append the valid ones to the store in one transaction.

Two phases, so the store's lock is held only for the second:

1. **Check and stage.** The document pipeline runs with a
   :class:`~kernelindex_sdk.validation.ValidationSession` in ``strict_refs`` mode —
   the checks of ``validate --strict-refs``, reported the same way. References not
   resolved by the records given are looked up in the store (a short read) before the
   session decides, so a run may reference a workload added last week. Each record of
   each valid item is written to a staging file (JSON Lines, in the temporary
   directory): its text as given (compact, key order kept: what reading the store
   gives back, so reports are byte for byte those over the files) and its canonical
   text (RFC 8785), digest, kind, the shape it came in and
   where it was read; each run also gets its row of facts
   (:mod:`kernelindex_sdk.store.facts`). Memory stays bounded by what the session
   itself keeps for references.
2. **Commit.** One DuckDB transaction inserts the staged records not refused and not
   already present (same digest: counted, not stored twice; the first occurrence in
   input order wins), their facts, a row in ``adds``, and the fingerprint of the
   checks they passed (:mod:`kernelindex_sdk.fingerprint`) in ``kernelindex_store``.
   Killed at any moment, the store has all of the add or none of it (DuckDB's
   write-ahead log); nothing already stored is ever updated.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import IO, Any, NamedTuple

from kernelindex_sdk.canonical import canonicalize
from kernelindex_sdk.compare.records import RecordIndex, StoredRun
from kernelindex_sdk.compare.runs import Resolver
from kernelindex_sdk.errors import Problem
from kernelindex_sdk.fingerprint import checks_fingerprint
from kernelindex_sdk.intake import loads
from kernelindex_sdk.pipeline import Pipeline
from kernelindex_sdk.store.facts import referenced_digests, run_facts
from kernelindex_sdk.storefile import checks_key, connect
from kernelindex_sdk.validation import Item, ValidationSession, is_bundle, records_of

__all__ = ["AddResult", "add"]

_RUN = "BenchmarkRun"
#: DuckDB's memory limit and threads while an add commits (it spills to disk past the
#: limit; each thread of its JSON reader holds buffers of its own).
COMMIT_MEMORY = "768MB"
COMMIT_THREADS = 4
#: Staged columns, in the order of the staging file's objects.
_RECORD_COLUMNS = {
    "n": "BIGINT",
    "digest": "VARCHAR",
    "kind": "VARCHAR",
    "api_version": "VARCHAR",
    "name": "VARCHAR",
    "record": "VARCHAR",
    "canonical": "VARCHAR",
    "standalone": "BOOLEAN",
    "members": "VARCHAR",
    "origin": "VARCHAR",
    "origin_line": "BIGINT",
    "item_pointer": "VARCHAR",
}


@dataclass(slots=True)
class AddResult:
    """What one ``add`` did, in records (a bundle is several) and items."""

    #: Records newly stored.
    stored: int = 0
    #: Records given whose digest the store (or this add, earlier) already held.
    present: int = 0
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
        return (
            f"{self.stored} stored, {self.present} already present,"
            f" {self.refused} refused{unreadable} in {self.files} files"
        )

    def exit_status(self) -> int:
        """2: something unreadable or nothing found; 1: something refused; else 0."""
        if self.unreadable or not self.files:
            return 2
        return 1 if self.refused else 0


class _Staged(NamedTuple):
    """What staging one valid item made, sent back in place of its value (from a
    worker, where the item was checked: the parent only writes bytes)."""

    #: Rows of the staging file of records, each a JSON object without its ``n``.
    records: tuple[bytes, ...]
    #: Rows of the staging file of facts.
    facts: tuple[bytes, ...]
    #: Runs whose referenced records the stager had not all seen: resolved at the end.
    deferred: tuple[tuple[StoredRun, tuple[str, int | None, str]], ...]
    #: Records runs reference, the first time this stager saw each: (digest, record).
    references: tuple[tuple[str, Mapping[str, Any]], ...]


class _StoreAwareChecker:
    """A pipeline checker: the session's checks, with references the records given do
    not resolve looked up in the store before the session reports them; each valid
    item is staged where it is checked, its value replaced by its :class:`_Staged`."""

    def __init__(self, inner: ValidationSession, store: str, on_wait: Callable[[str], None]):
        self.inner = inner
        self.store = store
        self.on_wait = on_wait
        self.invalidated = 0
        self.stager = _Stager()
        #: Records of the store that resolved a reference: digest → record.
        self.from_store: dict[str, Mapping[str, Any]] = {}
        #: The items (source, line, pointer) refused only at the end.
        self.refused_late: set[tuple[str, int | None, str]] = set()

    def prepare(self) -> None:
        self.inner.prepare()

    def check_document(
        self, value: Any, *, source: str = "<input>", line: int | None = None
    ) -> list[Item]:
        items = self.inner.check_document(value, source=source, line=line)
        return [
            item if item.problems else replace(item, value=self.stager.stage(item))
            for item in items
        ]

    def passes(self, value: Any) -> bool:
        return False  # every item is kept whole (its records are stored)

    def take_references(self) -> tuple[list[tuple[str, str]], list[Any]]:
        return self.inner.take_references()

    def add_references(self, known: Iterable[tuple[str, str]], pending: Iterable[Any]) -> None:
        self.inner.add_references(known, pending)

    def finish(self) -> list[Problem]:
        known, pending = self.inner.take_references()
        seen = {digest for digest, _ in known}
        missing = sorted({p.digest for p in pending if p.digest not in seen})
        found: list[tuple[str, str]] = []
        if missing and os.path.exists(self.store):
            with connect(self.store, read_only=True, on_wait=self.on_wait) as connection:
                rows = connection.execute(
                    "SELECT digest, kind, any_value(record) FROM records"
                    " WHERE digest IN (SELECT unnest(?)) GROUP BY digest, kind",
                    [missing],
                ).fetchall()
            for digest, kind, text in rows:
                found.append((digest, kind))
                self.from_store[digest] = loads(text.encode())
        pending = list(pending)
        self.inner.add_references([*known, *found], pending)
        late = self.inner.finish()
        self.invalidated = self.inner.invalidated
        at = {(p.source, p.line, p.pointer) for p in late}
        for entry in pending:
            where = entry.problem_at
            if (where.source, where.line, where.pointer) in at:
                self.refused_late.add(entry.item)
        return late


class _Stager:
    """Turns each valid item into its staging rows: every record's texts, digest and
    place, and each run's facts (:mod:`kernelindex_sdk.store.facts`)."""

    def __init__(self) -> None:
        from orjson import dumps

        self._dumps = dumps
        self.index = RecordIndex()
        self.resolver = Resolver(self.index)
        #: Texts of the (few, repeated) records runs reference, by digest.
        self._texts: dict[str, tuple[str, str]] = {}

    def stage(self, item: Item) -> _Staged:
        value = item.value
        bundle = is_bundle(value)
        members = records_of(value, item.pointer)
        shape: str | None = None
        if bundle:
            prefix = len(item.pointer) + 1
            shape = self._dumps(
                [
                    [at[prefix:], ref.digest]
                    for (at, _), ref in zip(members, item.records, strict=True)
                    if ref.kind != _RUN
                ]
            ).decode()
        key = (item.source, item.line, item.pointer)
        runs: list[StoredRun] = []
        rows: list[bytes] = []
        new: list[tuple[str, Mapping[str, Any]]] = []
        for (at, record), ref in zip(members, item.records, strict=True):
            digest = ref.digest
            assert digest is not None  # a valid record has one
            run = ref.kind == _RUN
            if run:
                texts = self._texts_of(record)
                runs.append(StoredRun(digest, record, item.source, item.line, at))
            else:
                texts = self._texts.get(digest) or self._remember(digest, record)
                if digest not in self.index.records:
                    self.index.records[digest] = record
                    new.append((digest, record))
            row = {
                "digest": digest,
                "kind": ref.kind,
                "api_version": record["apiVersion"],
                "name": ref.name,
                "record": texts[0],
                "canonical": texts[1],
                "standalone": not bundle,
                "members": shape if run else None,
                "origin": item.source,
                # No origin_line: a worker numbers the lines of its range from 1;
                # the writer adds the item's line once the pipeline made it absolute.
                "item_pointer": item.pointer,
            }
            rows.append(self._dumps(row))
        facts: list[bytes] = []
        deferred: list[tuple[StoredRun, tuple[str, int | None, str]]] = []
        for stored in runs:
            if all(d in self.index.records for d in referenced_digests(stored.record)):
                facts.append(self.facts(stored, key))
            else:
                deferred.append((stored, key))
        return _Staged(tuple(rows), tuple(facts), tuple(deferred), tuple(new))

    def _texts_of(self, record: Mapping[str, Any]) -> tuple[str, str]:
        """The record as given (compact, its key order kept: what is read back) and its
        canonical form (RFC 8785, what any tool can hash or compare byte for byte)."""
        try:
            given = self._dumps(record).decode()
        except TypeError:  # an integer past 64 bits: the standard library writes it
            given = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        return given, canonicalize(record).decode()

    def _remember(self, digest: str, record: Mapping[str, Any]) -> tuple[str, str]:
        if len(self._texts) >= 65_536:
            self._texts.clear()
        texts = self._texts[digest] = self._texts_of(record)
        return texts

    def facts(self, stored: StoredRun, key: tuple[str, int | None, str]) -> bytes:
        row = run_facts(self.resolver.resolve(stored), stored.record)
        row["item_pointer"] = key[2]
        return self._dumps(row)


class _Writer:
    """Writes staged items to the staging files, numbering records in input order."""

    def __init__(self, records: IO[bytes], facts: IO[bytes]) -> None:
        self.records = records
        self.facts = facts
        self.n = 0
        self.index = RecordIndex()
        self.deferred: list[tuple[StoredRun, tuple[str, int | None, str]]] = []

    def item(self, staged: _Staged, line: int | None) -> None:
        """Write one staged item; ``line``: where the pipeline says it was read (in a
        range of a JSON Lines file, staged by a worker, only the pipeline knows)."""
        where = b"null" if line is None else b"%d" % line
        for row in staged.records:
            self.n += 1
            self.records.write(b'{"n":%d,"origin_line":%s,' % (self.n, where) + row[1:] + b"\n")
        for row in staged.facts:
            self.facts.write(row + b"\n")
        self.deferred.extend(staged.deferred)
        for digest, record in staged.references:
            self.index.records.setdefault(digest, record)

    def finish(self, from_store: Mapping[str, Mapping[str, Any]]) -> None:
        """Facts of the runs whose references were resolved late (or by the store)."""
        if not self.deferred:
            return
        for digest, record in from_store.items():
            self.index.records.setdefault(digest, record)
        stager = _Stager()
        stager.index = self.index
        stager.resolver = Resolver(self.index)
        for stored, key in self.deferred:
            self.facts.write(stager.facts(stored, key) + b"\n")
        self.deferred.clear()


def add(
    paths: Sequence[str],
    store: str,
    *,
    jobs: int | None = None,
    on_problem: Callable[[Problem], None] | None = None,
    on_wait: Callable[[str], None] | None = None,
    wait_s: float = 600.0,
) -> AddResult:
    """Check every record under ``paths`` and add the valid ones to ``store``.

    ``on_problem`` gets each problem as found (a refused item, an unreadable path).
    ``on_wait`` gets one message when another process holds the store for over a
    second. Raises :class:`~kernelindex_sdk.storefile.StoreError` when the store
    cannot be used (foreign, corrupt, locked past ``wait_s``) and ``OSError`` when a
    disk fills or a file cannot be written; in either case nothing was added.
    """
    report = on_problem or (lambda problem: None)
    waited = on_wait or (lambda message: None)
    if os.path.exists(store):  # a foreign or corrupt store is said at once, not after checks
        with connect(store, read_only=True, on_wait=waited, wait_s=wait_s, appending=True):
            pass
    result = AddResult()
    session = ValidationSession(strict_refs=True, strict_json=True, keep_values=True)
    checker = _StoreAwareChecker(session, store, waited)
    with tempfile.TemporaryDirectory(prefix="kernelindex-add-") as staging:
        records_path = os.path.join(staging, "records.jsonl")
        facts_path = os.path.join(staging, "facts.jsonl")
        refused_path = os.path.join(staging, "refused.jsonl")
        with _named(staging), open(records_path, "wb") as records, open(facts_path, "wb") as facts:
            writer = _Writer(records, facts)
            pipeline = Pipeline(paths, checker=checker, jobs=jobs, report="all")
            for item in pipeline:
                if item.unreadable:
                    result.unreadable += 1
                elif item.problems:
                    result.refused += 1
                else:
                    writer.item(item.value, item.line)
                    continue
                for problem in item.problems:
                    result.problems.append(problem)
                    report(problem)
            for problem in pipeline.late:
                result.problems.append(problem)
                report(problem)
            result.refused += pipeline.checker.invalidated
            result.files = pipeline.tally.files
            writer.finish(checker.from_store)
        with open(refused_path, "wb") as refused:
            from orjson import dumps

            for source, line, pointer in sorted(checker.refused_late, key=str):
                refused.write(
                    dumps({"origin": source, "origin_line": line, "item_pointer": pointer}) + b"\n"
                )
        if writer.n:
            _commit(store, records_path, facts_path, refused_path, result, waited, wait_s)
    return result


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
    records_path: str,
    facts_path: str,
    refused_path: str,
    result: AddResult,
    on_wait: Callable[[str], None],
    wait_s: float,
) -> None:
    """The one transaction of an add (module docstring)."""
    from kernelindex_sdk.store.facts import FACT_COLUMNS, FROM_STORED_COPY

    staged = _json_reader(records_path, _RECORD_COLUMNS)
    refused = _json_reader(
        refused_path, {"origin": "VARCHAR", "origin_line": "BIGINT", "item_pointer": "VARCHAR"}
    )
    facts = _json_reader(facts_path, {**FACT_COLUMNS, "item_pointer": "VARCHAR"})
    kept = (
        f"SELECT s.* FROM {staged} s ANTI JOIN {refused} f ON s.origin = f.origin"
        " AND s.origin_line IS NOT DISTINCT FROM f.origin_line"
        " AND s.item_pointer = f.item_pointer"
    )
    fact_names = [name for name in FACT_COLUMNS if name not in FROM_STORED_COPY]
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
            row = con.execute("SELECT coalesce(max(add_id), 0) + 1 FROM adds").fetchone()
            add_id = int(row[0]) if row else 1
            row = con.execute("SELECT coalesce(max(seq), 0) FROM records").fetchone()
            base = int(row[0]) if row else 0
            row = con.execute(f"SELECT count(*) FROM ({kept})").fetchone()
            given = int(row[0]) if row else 0
            con.execute(
                # Out-of-core throughout (no window function): a record's seq is its
                # staging number after the store's last (gaps where copies were
                # dropped; only the order matters), and the first copy of a digest in
                # this add is found by a hash aggregate.
                f"""INSERT INTO records
                SELECT {base} + k.n, k.digest, k.kind, k.api_version, k.name, k.record,
                       k.canonical, k.standalone, k.members, k.origin, k.origin_line, {add_id}
                FROM ({kept}) k
                SEMI JOIN (SELECT min(n) AS n FROM ({kept}) GROUP BY digest) f ON f.n = k.n
                WHERE NOT EXISTS (SELECT 1 FROM records r WHERE r.digest = k.digest)"""
            )
            row = con.execute("SELECT count(*) FROM records WHERE add_id = ?", [add_id]).fetchone()
            stored = int(row[0]) if row else 0
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
            con.execute(
                "INSERT INTO adds VALUES (?, now(), ?, ?, ?)",
                [add_id, stored, given - stored, result.refused],
            )
            # What checked this add's records: a reader running the same checks may
            # trust them instead of checking them again (docs/store.md).
            con.execute(
                "INSERT INTO kernelindex_store VALUES (?, ?)",
                [checks_key(add_id), checks_fingerprint()],
            )
            con.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(Exception):
                con.execute("ROLLBACK")
            raise
    result.stored, result.present, result.add_id = stored, given - stored, add_id
