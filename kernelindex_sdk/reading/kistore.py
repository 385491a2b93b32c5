"""The store file: what it is, how it is opened, and how its records are read back.

A *store* (``kernelindex store``, docs/store.md) is one DuckDB database file holding
every record ever added, append-only. This module is the one definition of its format
— the tables, the views, the marker that says a DuckDB file is a kernelindex store —
and the reading side: :func:`store_documents` turns a store back into the documents
it was given as, so that :mod:`kernelindex_sdk.reading.sources` reads a store named as a PATH
exactly as it reads files (validate, digest, ls, compare and export all go through
it).

DuckDB is optional (the ``[store]`` extra) and imported only when a store is really
opened, so nothing else pays for it and nothing breaks without it: a store named as
a PATH without DuckDB installed is one unreadable-file problem saying how to install
it.

Locking: DuckDB locks the file per process; while one process holds a read-write
connection, any other process fails to open it at all, even read-only. So every
connection here is held only as long as one statement batch needs it, and opening
retries (:func:`connect`) with a visible message after a second of waiting.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Final, NamedTuple

from orjson import loads as orjson_loads

from kernelindex_sdk.base.escaping import one_line
from kernelindex_sdk.base.installing import extra_hint
from kernelindex_sdk.errors import IntakeError, UnreadableFile
from kernelindex_sdk.reading import storerows
from kernelindex_sdk.reading.intake import Document, loads

__all__ = [
    "DEFAULT_STORE",
    "FACTS_CHUNK",
    "FORMAT",
    "INSTALL_HINT",
    "KIND_VIEWS",
    "READABLE_VERSIONS",
    "STORE_ENV",
    "VERSION",
    "CheckedDocument",
    "RunFacts",
    "RunShape",
    "StoreError",
    "StoreFacts",
    "StoreLocked",
    "checks_key",
    "connect",
    "default_store",
    "facts_snapshot",
    "is_store_file",
    "keep_open",
    "read_facts",
    "read_store",
    "require_duckdb",
    "store_documents",
]

#: The default store file (relative to the working directory).
DEFAULT_STORE: Final = "kernelindex.kistore"
#: The environment variable that names the store when ``--store`` is not given.
STORE_ENV: Final = "KERNELINDEX_STORE"
#: What the marker table says a kernelindex store is, and the format's version.
FORMAT: Final = "kernelindex-store"
VERSION: Final = "2"
#: Every format version this code reads. A store of an older version is read through
#: its records (checked or trusted, as any store), never through its facts (version 1
#: lacks ``stddev`` and ``title``); adding to one is refused (:func:`connect`).
READABLE_VERSIONS: Final = ("1", VERSION)
#: What to run when DuckDB is missing.
INSTALL_HINT: Final = extra_hint("store")
#: DuckDB's file magic: bytes 8-11 of every database file.
_MAGIC: Final = b"DUCK"
_MAGIC_AT: Final = 8
#: Every kind of record → the view that lists its records (spec as JSON).
KIND_VIEWS: Final = {
    "BenchmarkRun": "benchmark_runs",
    "Workload": "workloads",
    "Implementation": "implementations",
    "BenchmarkProtocol": "protocols",
    "ExecutionEnvironment": "environments",
}
#: Rows fetched per connection while reading (the lock is released in between).
READ_CHUNK: Final = 20_000
#: Seconds of waiting for another process's lock before saying so.
WAIT_NOTICE_S: Final = 1.0
#: Held while a connection of this process is open: DuckDB refuses a second connection
#: to a file in one process under another configuration (read-only beside read-write),
#: so threads that share a store (``kernelindex serve``) take turns, as processes do.
_IN_PROCESS: Final = threading.RLock()
#: Stores whose read-only database stays open between connections (:func:`keep_open`),
#: and the connection that keeps each open, with the settings it was opened with.
_KEEPING: Final[set[str]] = set()
_KEPT: Final[dict[str, tuple[tuple[Any, ...], Any]]] = {}

#: The schema of a new store, version 2 (docs/store.md describes every column).
SCHEMA: Final = (
    "CREATE TABLE kernelindex_store (key VARCHAR NOT NULL, value VARCHAR NOT NULL)",
    f"INSERT INTO kernelindex_store VALUES ('format', '{FORMAT}'), ('version', '{VERSION}')",
    """CREATE TABLE adds (
        add_id BIGINT NOT NULL, added_at TIMESTAMPTZ NOT NULL,
        stored BIGINT NOT NULL, present BIGINT NOT NULL, refused BIGINT NOT NULL)""",
    """CREATE TABLE records (
        seq BIGINT NOT NULL, digest VARCHAR NOT NULL, kind VARCHAR NOT NULL,
        api_version VARCHAR NOT NULL, name VARCHAR, record VARCHAR NOT NULL,
        standalone BOOLEAN NOT NULL, members VARCHAR,
        origin VARCHAR NOT NULL, origin_line BIGINT, add_id BIGINT NOT NULL)""",
    """CREATE TABLE run_facts (
        digest VARCHAR NOT NULL, kernel VARCHAR, pass VARCHAR, dtype VARCHAR,
        parameters VARCHAR, gpu VARCHAR, hardware VARCHAR, provider VARCHAR,
        implementation VARCHAR, version VARCHAR, status VARCHAR NOT NULL, reason VARCHAR,
        metric VARCHAR NOT NULL, statistic VARCHAR, value DOUBLE, p20 DOUBLE, p80 DOUBLE,
        samples BIGINT, observed_at VARCHAR NOT NULL, quality_flags VARCHAR[],
        source VARCHAR, workload_digest VARCHAR NOT NULL, protocol_digest VARCHAR NOT NULL,
        environment_digest VARCHAR NOT NULL, implementation_digest VARCHAR NOT NULL,
        stddev DOUBLE, title VARCHAR,
        origin VARCHAR NOT NULL, origin_line BIGINT, add_id BIGINT NOT NULL)""",
    """CREATE VIEW runs AS SELECT
        digest, kernel, pass, dtype, parameters::JSON AS parameters, gpu, hardware,
        provider, implementation, version, status, reason, metric, statistic, value,
        p20, p80, stddev, samples, observed_at::TIMESTAMPTZ AS observed_at, quality_flags,
        source, title, workload_digest, protocol_digest, environment_digest,
        implementation_digest, origin, origin_line, add_id
        FROM run_facts""",
    *(
        f"""CREATE VIEW {view} AS SELECT
        digest, name, api_version, json_extract(record, '$.spec') AS spec,
        record::JSON AS record, origin, origin_line, add_id
        FROM records WHERE kind = '{kind}'"""
        for kind, view in KIND_VIEWS.items()
    ),
)


class StoreError(Exception):
    """A store cannot be used: not a kernelindex store, corrupt, unreadable. One line."""


class StoreLocked(StoreError):
    """Another process kept the store locked for longer than we would wait."""


def default_store() -> str:
    """The store ``kernelindex store`` uses without ``--store``: ``$KERNELINDEX_STORE``,
    else :data:`DEFAULT_STORE` in the working directory."""
    return os.environ.get(STORE_ENV) or DEFAULT_STORE


def is_store_file(path: str) -> bool:
    """Whether a regular file starts like a DuckDB database (its magic at byte 8).

    Cheap (one read of 12 bytes) and needs no DuckDB; whether it is a *kernelindex*
    store is decided when it is opened (:func:`connect`).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        return False
    try:
        return os.pread(fd, _MAGIC_AT + len(_MAGIC), 0)[_MAGIC_AT:] == _MAGIC
    except OSError:
        return False
    finally:
        os.close(fd)


def require_duckdb() -> Any:
    """The ``duckdb`` module, or a :class:`StoreError` saying how to install it."""
    try:
        import duckdb
    except ImportError:
        raise StoreError(f"the store needs DuckDB: {INSTALL_HINT}") from None
    return duckdb


def _first(error: Exception) -> str:
    """The first line of a DuckDB message (the rest points into SQL), printable."""
    text = str(error).strip()
    return one_line(text.splitlines()[0] if text else repr(error))


def _is_lock_conflict(error: Exception) -> bool:
    text = str(error)
    return "Could not set lock" in text or "Conflicting lock" in text


@contextlib.contextmanager
def connect(
    path: str,
    *,
    read_only: bool,
    create: bool = False,
    wait_s: float = 600.0,
    on_wait: Callable[[str], None] | None = None,
    config: dict[str, Any] | None = None,
    appending: bool = False,
) -> Iterator[Any]:
    """A DuckDB connection to the kernelindex store at ``path``, closed on leaving.

    Another process holding the file's lock is waited for (retried every 50 ms), with
    one message through ``on_wait`` after :data:`WAIT_NOTICE_S`; after ``wait_s`` it
    is a :class:`StoreLocked`. ``config``: DuckDB settings for the connection.
    ``create``: a missing file becomes a new, empty store (in one transaction, so a
    killed creation leaves no half-made store). A file that is not a kernelindex
    store, or that DuckDB cannot read, is a :class:`StoreError`; so is, with
    ``appending`` (a connection for ``store add``), a store of an older format
    version, which this code reads but does not add to. On a read-only connection,
    a DuckDB error raised while it is in use (a block that does not check, a file cut
    short) is a :class:`StoreError` naming the file too: every reader of a store
    opens it here, so none of them ever sees a DuckDB exception.
    """
    duckdb = require_duckdb()
    if not _IN_PROCESS.acquire(timeout=wait_s):
        raise StoreLocked(f"{path}: still in use in this process after {wait_s:g} s; nothing done")
    try:
        with _connection(path, duckdb, read_only, create, wait_s, on_wait, config, appending) as c:
            yield c
    finally:
        _IN_PROCESS.release()


def keep_open(path: str) -> None:
    """Keep the store's database open in this process between read-only connections of
    one configuration, so each costs microseconds instead of opening the file: for a
    process that owns the store (``kernelindex serve``). It is closed whenever a
    connection of another configuration (a writer) opens, so that one sees, and
    makes, the current store; while it is open, other processes can read the store
    but not write it."""
    _KEEPING.add(os.path.abspath(path))


def _drop_kept(path: str, key: tuple[Any, ...]) -> None:
    kept = _KEPT.get(path)
    if kept is not None and kept[0] != key:
        del _KEPT[path]
        kept[1].close()


@contextlib.contextmanager
def _connection(
    path: str,
    duckdb: Any,
    read_only: bool,
    create: bool,
    wait_s: float,
    on_wait: Callable[[str], None] | None,
    config: dict[str, Any] | None,
    appending: bool,
) -> Iterator[Any]:
    """:func:`connect`'s connection, once this process's turn has come."""
    exists = os.path.exists(path)
    if not exists and not create:
        raise StoreError(f"{path}: no such store")
    if not exists:
        _create(path, duckdb)
    if not (_sniff(path) or (os.path.getsize(path) == 0 and not read_only)):
        # (an empty file, e.g. from mktemp, becomes a store when written)
        raise StoreError(f"{path}: not a kernelindex store (not a DuckDB database file)")
    where = os.path.abspath(path)
    key = (read_only, sorted((config or {}).items()))
    _drop_kept(where, key)
    # A database kept open was checked when it was opened, and nothing wrote it since.
    checked = where in _KEPT and not appending
    connection = _open(duckdb, path, read_only, config or {}, wait_s, on_wait)
    try:
        if not checked:
            _check_format(
                connection, path, duckdb, create=create and not read_only, appending=appending
            )
        if read_only and where in _KEEPING and where not in _KEPT:
            _KEPT[where] = (key, _open(duckdb, path, True, config or {}, wait_s, on_wait))
        yield connection
    except duckdb.Error as error:
        if not read_only:
            raise  # a writer's failure (a full disk, memory) is the writer's to say
        # A reading connection fails only on the file: a block that does not check,
        # a file cut short, an I/O error (a query's own refusal is caught inside).
        raise StoreError(f"{path}: not a readable kernelindex store: {_first(error)}") from None
    finally:
        connection.close()


def _open(
    duckdb: Any,
    path: str,
    read_only: bool,
    config: dict[str, Any],
    wait_s: float,
    on_wait: Callable[[str], None] | None,
) -> Any:
    """``duckdb.connect``, waiting for another process's lock (:func:`connect`)."""
    started = time.monotonic()
    told = False
    while True:
        try:
            return duckdb.connect(path, read_only=read_only, config=config)
        except duckdb.Error as error:
            if not _is_lock_conflict(error):
                raise StoreError(
                    f"{path}: not a readable kernelindex store: {_first(error)}"
                ) from None
            waited = time.monotonic() - started
            if waited >= wait_s:
                raise StoreLocked(
                    f"{path}: still locked by another process after {wait_s:g} s; nothing done"
                ) from None
            if not told and waited >= WAIT_NOTICE_S and on_wait is not None:
                on_wait(f"waiting for {path}: another kernelindex process is using it")
                told = True
            time.sleep(0.05)


def _sniff(path: str) -> bool:
    """Whether ``path`` is a regular file that starts like a DuckDB database, or a
    :class:`StoreError` saying why it cannot be read at all."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise StoreError(f"{path}: cannot read the store: {reason}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise StoreError(f"{path}: not a kernelindex store (not a regular file)")
        return os.pread(fd, _MAGIC_AT + len(_MAGIC), 0)[_MAGIC_AT:] == _MAGIC
    except OSError as error:
        raise StoreError(f"{path}: cannot read the store: {error.strerror or error}") from None
    finally:
        os.close(fd)


def _create(path: str, duckdb: Any) -> None:
    """Make a new, empty store at ``path`` whole or not at all: built under a temporary
    name beside it, then linked into place (if another process made one meanwhile,
    theirs stays). A killed creation leaves no half-made store at ``path``."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", dir=directory)
    os.close(fd)
    os.unlink(temporary)  # DuckDB makes the file itself
    try:
        connection = duckdb.connect(temporary)
        try:
            for statement in SCHEMA:
                connection.execute(statement)
            connection.execute("CHECKPOINT")
        finally:
            connection.close()
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
    except duckdb.Error as error:
        raise OSError(errno.EIO, _first(error), path) from None
    finally:
        for leftover in (temporary, temporary + ".wal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(leftover)


def _check_format(
    connection: Any, path: str, duckdb: Any, *, create: bool, appending: bool = False
) -> None:
    """Raise :class:`StoreError` unless the database is a kernelindex store of a
    version this code reads (``appending``: of the version it writes); ``create``
    makes an empty database one."""
    try:
        tables = {
            row[0]
            for row in connection.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
            ).fetchall()
        }
        if not tables and create:
            connection.execute("BEGIN TRANSACTION")
            for statement in SCHEMA:
                connection.execute(statement)
            connection.execute("COMMIT")
            return
        if "kernelindex_store" not in tables:
            raise StoreError(f"{path}: not a kernelindex store (a DuckDB database of other data)")
        marker = dict(connection.execute("SELECT key, value FROM kernelindex_store").fetchall())
    except duckdb.Error as error:
        raise StoreError(f"{path}: not a readable kernelindex store: {_first(error)}") from None
    if marker.get("format") != FORMAT:
        raise StoreError(f"{path}: not a kernelindex store (a DuckDB database of other data)")
    version = marker.get("version")
    if version not in READABLE_VERSIONS:
        raise StoreError(
            one_line(
                f"{path}: a kernelindex store of format version {version!r};"
                f" this kernelindex reads versions {', '.join(READABLE_VERSIONS)}"
            )
        )
    _check_layout(connection, path, duckdb)
    if appending and version != VERSION:
        raise StoreError(
            one_line(
                f"{path}: a kernelindex store of format version {version!r}, which this"
                f" kernelindex reads but adds only to version {VERSION}: export it"
                " (kernelindex store export --format jsonl) and add that to a new store"
            )
        )


#: The columns every reader relies on, and their types (versions 1 and 2 alike).
_LAYOUT: Final = {
    ("kernelindex_store", "key"): "VARCHAR",
    ("kernelindex_store", "value"): "VARCHAR",
    ("records", "seq"): "BIGINT",
    ("records", "digest"): "VARCHAR",
    ("records", "kind"): "VARCHAR",
    ("records", "name"): "VARCHAR",
    ("records", "record"): "VARCHAR",
    ("records", "standalone"): "BOOLEAN",
    ("records", "members"): "VARCHAR",
    ("records", "origin"): "VARCHAR",
    ("records", "origin_line"): "BIGINT",
    ("records", "add_id"): "BIGINT",
}


def _check_layout(connection: Any, path: str, duckdb: Any) -> None:
    """Raise :class:`StoreError` unless the tables hold the columns readers rely on,
    of their types: a table altered by hand (a column dropped, or of another type)
    is one line, not a reader failing on a value of the wrong type."""
    try:
        found = {
            (table, column): kind
            for table, column, kind in connection.execute(
                "SELECT table_name, column_name, data_type FROM information_schema.columns"
                " WHERE table_schema = 'main'"
                " AND table_name IN ('kernelindex_store', 'records')"
            ).fetchall()
        }
    except duckdb.Error as error:
        raise StoreError(f"{path}: not a readable kernelindex store: {_first(error)}") from None
    for (table, column), kind in _LAYOUT.items():
        if found.get((table, column)) != kind:
            what = f"is {found[(table, column)]}" if (table, column) in found else "is missing"
            raise StoreError(
                one_line(
                    f"{path}: not a kernelindex store this kernelindex reads: the column"
                    f" {table}.{column} {what}, not {kind} (a table altered by hand?)"
                )
            )


def store_documents(
    path: str, *, on_wait: Callable[[str], None] | None = None
) -> Iterator[Document | IntakeError]:
    """The documents of a store, in the order they were added, or why not.

    Each is given back in the shape it was added in: a run added in a bundle is that
    bundle again (its members are the records with the digests it embedded), a record
    added on its own is that record. A document's ``source`` and ``line`` are the place
    ``kernelindex store add`` read it from, so reports over a store name the same
    places as reports over the files it was made from. Records embedded in a bundle
    are not given again on their own.

    Reads a snapshot: the records stored when reading began, in chunks of
    :data:`READ_CHUNK` with the file's lock released in between (a concurrent ``add``
    waits at most one chunk). Problems are yielded (as
    :class:`~kernelindex_sdk.errors.UnreadableFile`), never raised.
    """
    for document in read_store(path, on_wait=on_wait):
        yield document.document if isinstance(document, CheckedDocument) else document


class CheckedDocument(NamedTuple):
    """A document of a store whose every add was checked under the fingerprint the
    reader runs (:func:`read_store`), with the digests ``add`` computed for it."""

    document: Document
    #: Digest of each record: by member name in a bundle (``run``, ``workload``...),
    #: under ``""`` for a record added on its own.
    digests: dict[str, str]


def read_store(
    path: str, *, on_wait: Callable[[str], None] | None = None, trusted_by: str | None = None
) -> Iterator[Document | CheckedDocument | IntakeError]:
    """:func:`store_documents`, and for a reader that may trust the store's checks:
    with ``trusted_by`` (the reader's own checks fingerprint,
    :func:`kernelindex_sdk.schema.fingerprint.checks_fingerprint`), when every add that
    stored a record of the snapshot wrote that very fingerprint, each document comes
    as a :class:`CheckedDocument` (docs/store.md, "Trusting a store's checks"); else,
    and for a store made before adds wrote one, as a plain :class:`Document`.

    A row that cannot be read (:mod:`kernelindex_sdk.reading.storerows`) is its problem, and
    the rows after it are read on; a store that cannot be read any further (a block
    that does not check, a file cut short) is one :class:`UnreadableFile` naming it.
    """
    try:
        with connect(path, read_only=True, on_wait=on_wait) as connection:
            row = connection.execute(
                "SELECT max(seq), count(*) FILTER (WHERE seq IS NULL) FROM records"
            ).fetchone()
            last = int(row[0]) if row and row[0] is not None else 0
            trusted = trusted_by is not None and _checked_by(connection, last) == {trusted_by}
        if row and row[1]:
            yield UnreadableFile(
                f"{row[1]} record(s) without a seq, which no reader reads (the table was"
                " altered by hand)",
                source=path,
                pointer="/records",
            )
        yield from _read_rows(path, last, trusted, on_wait)
    except StoreError as error:
        yield UnreadableFile(str(error).removeprefix(f"{path}: "), source=path)


def _read_rows(
    path: str, last: int, trusted: bool, on_wait: Callable[[str], None] | None
) -> Iterator[Document | CheckedDocument | IntakeError]:
    """The documents of the rows up to ``seq`` ``last``, :data:`READ_CHUNK` per
    connection (:func:`read_store`)."""
    #: Each member's text by digest, fetched for the bundles of a chunk and kept.
    members: dict[str, str] = {}
    #: Trusted: the bundles' members parsed once each (by digest), shared by the
    #: bundles that embed them (readers never change a document).
    parsed: dict[str, Any] = {}
    start = 0
    while start < last:
        with connect(path, read_only=True, on_wait=on_wait) as connection:
            # READ_CHUNK documents per connection (not a span of seq: an add's
            # seq has gaps where copies and bundle members were left out).
            rows = connection.execute(
                f"SELECT {storerows.COLUMNS} FROM records"
                " WHERE seq > ? AND seq <= ? AND (standalone OR kind = 'BenchmarkRun')"
                " ORDER BY seq LIMIT ?",
                [start, last, READ_CHUNK],
            ).fetchall()
            checked = [storerows.checked_row(row, path) for row in rows]
            wanted = _missing_members(checked, members)
            if wanted:
                if len(members) > 100_000:
                    members.clear()
                    parsed.clear()
                    wanted = _missing_members(checked, members)
                members.update(
                    connection.execute(
                        "SELECT digest, any_value(record) FROM records WHERE record IS NOT NULL"
                        " AND digest IN (SELECT unnest(?)) GROUP BY digest",
                        [sorted(wanted)],
                    ).fetchall()
                )
        if not rows:
            break
        for values, one in zip(rows, checked, strict=True):
            if isinstance(one, IntakeError):
                yield one
            elif trusted:
                yield _checked(values, *one, members, parsed, path)
            else:
                yield _document(values, *one, members, path)
        start = int(rows[-1][5])


class RunShape(NamedTuple):
    """What a run of a store shares with many others: where it was added from, its
    outcome and the records it references (``run_facts`` columns; the facts
    ``compare`` reads without the record, :class:`RunFacts`)."""

    source: str
    #: ``/run`` for a run added in a bundle, ``""`` for one added on its own: where
    #: it is in the document the store gives back.
    pointer: str
    status: str
    reason: str | None
    #: The result's metric, or at ``add`` the protocol's (or ``unknown``).
    metric: str
    statistic: str | None
    flags: tuple[str, ...]
    title: str | None
    workload_digest: str
    protocol_digest: str
    environment_digest: str
    implementation_digest: str


class RunFacts(NamedTuple):
    """A run of a store as ``compare`` reads it without its record: its own
    ``run_facts`` columns and place (what the records it references say is resolved
    by the reader). Shapes are fetched once each, not once per run."""

    digest: str
    line: int | None
    observed_at: str
    value: float | None
    p20: float | None
    p80: float | None
    stddev: float | None
    samples: int | None
    shape: RunShape


#: SQL of the fields of :class:`RunShape` and of :class:`RunFacts` but its shape,
#: over a run's stored copy ``r`` and its facts ``f``.
_SHAPE: Final = {
    "source": "r.origin",
    "pointer": "CASE WHEN r.members IS NULL THEN '' ELSE '/run' END",
    "status": "f.status",
    "reason": "f.reason",
    "metric": "f.metric",
    "statistic": "f.statistic",
    "flags": "f.quality_flags",
    "title": "f.title",
    "workload_digest": "f.workload_digest",
    "protocol_digest": "f.protocol_digest",
    "environment_digest": "f.environment_digest",
    "implementation_digest": "f.implementation_digest",
}
_OWN: Final = {
    "digest": "r.digest",
    "line": "r.origin_line",
    "observed_at": "f.observed_at",
    "value": "f.value",
    "p20": "f.p20",
    "p80": "f.p80",
    "stddev": "f.stddev",
    "samples": "f.samples",
}
_FLAGS: Final = list(_SHAPE).index("flags")
#: What a shape is keyed by while fetching: a 64-bit hash of its columns (two shapes
#: of one hash are noticed, and that span fetched whole).
_SHAPE_KEY = f"hash({', '.join(_SHAPE.values())})"
#: Facts rows fetched per connection (a row is a tenth of a record's text).
FACTS_CHUNK: Final = 100_000


class StoreFacts(NamedTuple):
    """A trusted store read through its facts (:func:`read_facts`)."""

    #: Every record that is not a run, parsed, in the order added: (digest, value).
    records: list[tuple[str, Any]]
    #: How many of them were added on their own (documents of their own).
    standalone: int
    #: The runs in the order added, in chunks; an :class:`IntakeError` (the store
    #: became unreadable between chunks) ends them.
    runs: Iterator[list[RunFacts] | IntakeError]


def read_facts(
    path: str, *, trusted_by: str, on_wait: Callable[[str], None] | None = None
) -> StoreFacts | None:
    """The records of a store as ``compare`` needs them, in bulk: its runs as their
    stored facts (:class:`RunFacts`, a few columns fetched per run instead of a record
    parsed), every other record parsed — or None where that cannot give what
    :func:`read_store` gives, and the caller must read the store that way.

    Only a store of this :data:`VERSION` (an older one lacks facts compare reads)
    whose every add in the snapshot wrote ``trusted_by`` (:func:`read_store`: its
    records passed the reader's own checks, and its facts were written by this very
    code), and in which every run has exactly one row of facts. A store that cannot be
    opened at all is None too: :func:`read_store` says why.
    """
    try:
        with connect(path, read_only=True, on_wait=on_wait) as connection:
            last = facts_snapshot(connection, trusted_by)
            if last is None:
                return None
            # The records runs reference are few: all of them at once. Bounds of the
            # chunks of runs: the seq of every FACTS_CHUNK-th run.
            stored = connection.execute(
                "SELECT digest, record, standalone FROM records"
                " WHERE kind <> 'BenchmarkRun' AND seq <= ? ORDER BY seq",
                [last],
            ).fetchall()
            bounds = [
                int(bound)
                for (bound,) in connection.execute(
                    "SELECT seq FROM (SELECT seq, row_number() OVER (ORDER BY seq) AS i"
                    " FROM records WHERE kind = 'BenchmarkRun' AND seq <= ?)"
                    " WHERE i % ? = 0 ORDER BY seq",
                    [last, FACTS_CHUNK],
                ).fetchall()
            ]
        if not all(isinstance(text, str) for _, text, _ in stored):
            return None  # read_store says which row
        records = [(digest, _stored_value(text, path)) for digest, text, _ in stored]
    except (StoreError, IntakeError):
        return None
    standalone = sum(1 for _, _, alone in stored if alone)
    del stored
    return StoreFacts(records, standalone, _fact_chunks(path, [*bounds, last], on_wait))


def facts_snapshot(connection: Any, trusted_by: str) -> int | None:
    """The last ``seq`` of a store whose runs may be read through their facts
    (``run_facts``) by a reader whose checks are ``trusted_by``; None where they may not
    (:func:`read_facts` says when). ``connection``: a read-only one (:func:`connect`)."""
    marker = dict(connection.execute("SELECT key, value FROM kernelindex_store").fetchall())
    row = connection.execute(
        "SELECT max(seq), count(*) FILTER (WHERE seq IS NULL) FROM records"
    ).fetchone()
    last = int(row[0]) if row and row[0] is not None else 0
    if marker.get("version") != VERSION or _checked_by(connection, last) != {trusted_by}:
        return None
    if row and row[1]:
        return None  # rows no reader reads: read_store says so
    # Every run of the snapshot has one row of facts, no run two (copies of a run share
    # them: add keeps one; anything else reads through records).
    counts = connection.execute(
        "SELECT count(*), count(f.digest), count(DISTINCT f.digest)"
        " FROM records r LEFT JOIN run_facts f ON f.digest = r.digest"
        " WHERE r.kind = 'BenchmarkRun' AND r.seq <= ?",
        [last],
    ).fetchone()
    if counts is None or len(set(counts)) != 1:
        return None
    return last


def _fact_chunks(
    path: str, bounds: list[int], on_wait: Callable[[str], None] | None
) -> Iterator[list[RunFacts] | IntakeError]:
    """The runs with seq in each span of ``bounds``, one connection per span (the lock
    is released in between, as :func:`read_store` does)."""
    joined = (
        " FROM records r JOIN run_facts f ON f.digest = r.digest"
        " WHERE r.kind = 'BenchmarkRun' AND r.seq > ? AND r.seq <= ?"
    )
    key = _SHAPE_KEY
    shape_sql = f"SELECT DISTINCT {key}, {', '.join(_SHAPE.values())}{joined}"
    own_sql = f"SELECT {key}, {', '.join(_OWN.values())}{joined} ORDER BY r.seq"
    whole_sql = f"SELECT {', '.join(_SHAPE.values())}, {', '.join(_OWN.values())}{joined}"
    start = 0
    for end in bounds:
        if end <= start:
            continue
        try:
            with connect(path, read_only=True, on_wait=on_wait) as connection:
                # Each distinct shape once (keyed by its hash), then each run's own
                # columns and its shape's hash: a few Python objects per run, not twenty.
                shapes: dict[int, RunShape] = {}
                for key_value, *shape in connection.execute(shape_sql, [start, end]).fetchall():
                    shape[_FLAGS] = tuple(shape[_FLAGS] or ())
                    if shapes.setdefault(key_value, RunShape._make(shape)) != tuple(shape):
                        break  # two shapes of one hash: every column of every run instead
                else:
                    rows = connection.execute(own_sql, [start, end]).fetchall()
                    make = RunFacts._make
                    yield [make((*row[1:], shapes[row[0]])) for row in rows]
                    start = end
                    continue
                rows = connection.execute(whole_sql + " ORDER BY r.seq", [start, end]).fetchall()
        except StoreError as error:
            yield UnreadableFile(str(error).removeprefix(f"{path}: "), source=path)
            return
        width = len(_SHAPE)
        yield [_run_facts(row, width) for row in rows]
        start = end


def _run_facts(row: tuple[Any, ...], width: int) -> RunFacts:
    """A run's facts from a row that starts with its shape (``width`` columns)."""
    shape = list(row[:width])
    shape[_FLAGS] = tuple(shape[_FLAGS] or ())
    return RunFacts._make((*row[width:], RunShape._make(shape)))


def _checked(
    values: tuple[Any, ...],
    row: storerows.StoredRow,
    shape: storerows.Members | None,
    members: dict[str, str],
    parsed: dict[str, Any],
    path: str,
) -> CheckedDocument | IntakeError:
    """A trusted document: the value :func:`_document` gives, built from the run's
    text and the members parsed once each, with the stored digests."""
    try:
        run = _stored_value(row.record, row.origin)
    except IntakeError as error:
        return storerows.relocated(path, values, "record", error)
    if shape is None:
        return CheckedDocument(Document(row.origin, row.line, run), {"": row.digest})
    value: dict[str, Any] = {"run": run}
    digests = {"run": row.digest}
    for index, (member, member_digest) in enumerate(shape):
        known = parsed.get(member_digest)
        if known is None:
            text = members.get(member_digest)
            if text is None:
                return _member_missing(path, values, index, member_digest)
            try:
                known = parsed[member_digest] = _stored_value(text, row.origin)
            except IntakeError as error:
                return _member_unreadable(path, values, index, member, member_digest, error)
        value[member] = known
        digests[member] = member_digest
    return CheckedDocument(Document(row.origin, row.line, value), digests)


def _member_missing(path: str, values: tuple[Any, ...], index: int, digest: str) -> IntakeError:
    return storerows.row_problem(
        path, values, "members", f"no record of digest {digest} in the store", at=(index, 1)
    )


def _member_unreadable(
    path: str, values: tuple[Any, ...], index: int, member: str, digest: str, error: IntakeError
) -> IntakeError:
    return storerows.relocated(
        path,
        values,
        "members",
        error,
        what=f"the stored text of its member {member!r} ({digest}): ",
        at=(index,),
    )


def _stored_value(text: str, origin: str) -> Any:
    """A trusted record's value. Its text is what ``add`` wrote from a value strict
    intake had parsed — orjson's, or the standard library's for an integer past 64
    bits — so orjson reads back that very value, without intake's checks for
    duplicate keys and odd numbers (there are none); what orjson cannot read (such an
    integer, or a text altered by hand) goes through intake, which says why."""
    try:
        return orjson_loads(text)
    except ValueError:
        return loads(text.encode(), source=origin)


def checks_key(add_id: int) -> str:
    """The key in ``kernelindex_store`` under which an add writes the fingerprint of
    the checks its records passed."""
    return f"checks:{add_id}"


def _checked_by(connection: Any, last: int) -> set[str | None]:
    """The checks fingerprints of the adds that stored the records up to ``seq`` ``last``
    (None for an add that wrote none)."""
    rows = connection.execute(
        "SELECT DISTINCT m.value FROM (SELECT DISTINCT add_id FROM records WHERE seq <= ?) a"
        " LEFT JOIN kernelindex_store m ON m.key = 'checks:' || a.add_id::VARCHAR",
        [last],
    ).fetchall()
    return {row[0] for row in rows}


def _missing_members(
    checked: list[tuple[storerows.StoredRow, storerows.Members | None] | IntakeError],
    known: dict[str, str],
) -> set[str]:
    wanted: set[str] = set()
    for one in checked:
        if not isinstance(one, IntakeError) and one[1] is not None:
            for _, digest in one[1]:
                if digest not in known:
                    wanted.add(digest)
    return wanted


def _document(
    values: tuple[Any, ...],
    row: storerows.StoredRow,
    shape: storerows.Members | None,
    members: dict[str, str],
    path: str,
) -> Document | IntakeError:
    if shape is None:
        try:
            return Document(row.origin, row.line, loads(row.record.encode(), source=row.origin))
        except IntakeError as error:
            return storerows.relocated(path, values, "record", error)
    # The bundle's text put together and parsed once: a fifth of the parsing of
    # each member on its own. Member names are JSON-quoted; the texts are JSON.
    parts = ['{"run":', row.record]
    texts = []
    for index, (member, digest) in enumerate(shape):
        text = members.get(digest)
        if text is None:
            return _member_missing(path, values, index, digest)
        parts += [",", json.dumps(member), ":", text]
        texts.append(text)
    parts.append("}")
    try:
        # Bytes, not text: intake's fast path (jiter) takes bytes only.
        return Document(row.origin, row.line, loads("".join(parts).encode(), source=row.origin))
    except IntakeError as error:
        return _which_text(path, values, row, shape, texts, error)


def _which_text(
    path: str,
    values: tuple[Any, ...],
    row: storerows.StoredRow,
    shape: storerows.Members,
    texts: list[str],
    error: IntakeError,
) -> IntakeError:
    """The stored text of a bundle that intake refuses — the run's or a member's —
    named as a problem of the bundle's row (the texts are parsed one by one only
    here, once the bundle put together has failed)."""
    try:
        loads(row.record.encode(), source=row.origin)
    except IntakeError as own:
        return storerows.relocated(path, values, "record", own)
    for index, ((member, digest), text) in enumerate(zip(shape, texts, strict=True)):
        try:
            loads(text.encode(), source=row.origin)
        except IntakeError as its:
            return _member_unreadable(path, values, index, member, digest, its)
    return storerows.relocated(path, values, "members", error)  # pragma: no cover
