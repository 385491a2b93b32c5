"""A damaged store named as a PATH, through every reader, in real processes.

Two kinds of damage:

* the file — a block overwritten, the file cut short, empty, not DuckDB at all, a
  store of a newer format, unreadable: every reader says so in one line naming it,
  exit 2, no traceback (as ``store query`` and ``store export`` always did);
* its tables edited by hand — after the remedy docs/store.md gives (the ``checks:``
  rows deleted), a row whose members or text is not JSON, has the wrong shape or
  lacks a value: one problem naming the store, the row (``/records/SEQ/...``) and
  the record; exit 2 where it could not be read, 1 where it was read but is invalid,
  as for files.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

duckdb = pytest.importorskip("duckdb")

from profiles import examples  # noqa: E402

from tests.store_helpers import COMPLETE, kernelindex, write_corpus  # noqa: E402
from tests.test_store_faults import DROP_DAC  # noqa: E402

#: Every command that reads a store named as a PATH (``{store}``: the damaged store,
#: ``{good}``: an intact one, ``{out}``: a file to write).
READERS = {
    "validate": ["validate", "{store}"],
    "validate-strict-refs-jobs": ["validate", "--strict-refs", "-j", "2", "{store}"],
    "ls": ["ls", "{store}"],
    "ls-json": ["ls", "--format", "json", "{store}"],
    "compare": ["compare", "{store}"],
    "compare-json": ["compare", "--format", "json", "{store}"],
    "compare-summary": ["compare", "--summary", "{store}"],
    "compare-against-candidate": ["compare", "--against", "{good}", "{store}"],
    "compare-against-reference": ["compare", "--against", "{store}", "{good}"],
    "compare-against-summary": ["compare", "--summary", "--against", "{good}", "{store}"],
    "digest": ["digest", "{store}"],
    "export-liger": ["export", "liger", "{store}", "--out", "{out}"],
}


def _run(reader: str, store: Path, good: Path, tmp_path: Path, **kwargs: Any) -> Any:
    out = tmp_path / "out.csv"
    args = [a.format(store=store, good=good, out=out) for a in READERS[reader]]
    done = kernelindex(*args, **kwargs)
    assert "Traceback" not in done.stderr, done.stderr
    if reader == "export-liger" and done.returncode == 2:
        assert not out.exists(), "nothing written from unreadable input"
    return done


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of the examples and 1,000 bundles (a few MB: blocks of data to damage)."""
    folder = tmp_path_factory.mktemp("good")
    corpus = write_corpus(folder / "bundles.jsonl", 1000)
    store = folder / "good.kistore"
    added = kernelindex("store", "add", *COMPLETE, corpus, "--store", store)
    assert added.returncode == 0, added.stdout + added.stderr
    return store


def _reads_whole(store: Path) -> bool:
    """Whether DuckDB itself reads every record of ``store`` (in this process)."""
    try:
        with duckdb.connect(str(store), read_only=True) as connection:
            connection.execute("SELECT sum(length(record)), count(members) FROM records").fetchall()
    except duckdb.Error:
        return False
    return True


def _overwritten(good: Path, copy: Path) -> Path:
    """``good`` with 8 KiB overwritten in a block that holds records: the file opens,
    the records cannot be read (the first such place from the middle on)."""
    size = good.stat().st_size
    for offset in range(size // 2, size, 64 << 10):
        shutil.copyfile(good, copy)
        with copy.open("r+b") as handle:
            handle.seek(offset)
            handle.write(b"\x5a" * 8192)
        if not _reads_whole(copy):
            with duckdb.connect(str(copy), read_only=True):
                pass  # opens: the damage is met only while reading
            return copy
    raise AssertionError("no block of records found to damage")


def _cut(good: Path, copy: Path) -> Path:
    """``good`` cut short where its records are (it opens, its records are not whole)."""
    data = good.read_bytes()
    for keep in range(len(data) // 2, len(data), 64 << 10):
        copy.write_bytes(data[:keep])
        if not _reads_whole(copy):
            return copy
    raise AssertionError("no cut found that loses records")


def _newer(good: Path, copy: Path) -> Path:
    shutil.copyfile(good, copy)
    with duckdb.connect(str(copy)) as connection:
        connection.execute("UPDATE kernelindex_store SET value = '3' WHERE key = 'version'")
    return copy


def _written(data: bytes) -> Any:
    def make(good: Path, copy: Path) -> Path:
        copy.write_bytes(data)
        return copy

    return make


DAMAGES = {
    "block-overwritten": _overwritten,
    "cut-short": _cut,
    "empty": _written(b""),
    "json-named-kistore": _written(b'{"run": 1}\n'),
    "random-bytes": _written(os.urandom(5000)),
    "newer-version": _newer,
}


@pytest.fixture(scope="module")
def damaged(tmp_path_factory: pytest.TempPathFactory, good: Path) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("damaged")
    return {name: make(good, folder / f"{name}.kistore") for name, make in DAMAGES.items()}


def _matrix(
    rows: list[str],
    readers: list[str],
    quick_rows: list[str] | None = None,
    quick_readers: list[str] | None = None,
) -> list[Any]:
    """Every row through every reader: in the quick run each of ``quick_rows`` once and
    each of ``quick_readers`` at least once (every row and reader by default; rows and
    readers in turn); the rest of the product marked slow."""
    chosen = rows if quick_rows is None else quick_rows
    by = readers if quick_readers is None else quick_readers
    quick = {(chosen[i % len(chosen)], by[i % len(by)]) for i in range(max(len(chosen), len(by)))}
    return [
        pytest.param(row, reader, marks=() if (row, reader) in quick else pytest.mark.slow)
        for row in rows
        for reader in readers
    ]


#: The readers of the quick run: one of each way a command opens a store (validate,
#: checked and forked; a listing; a comparison; the reference of a before/after;
#: digests; an export); the others print the same runs another way.
QUICK_READERS = [
    "validate-strict-refs-jobs",
    "ls",
    "compare",
    "compare-against-reference",
    "digest",
    "export-liger",
]


@pytest.mark.parametrize(
    ("damage", "reader"), _matrix(sorted(DAMAGES), sorted(READERS), quick_readers=QUICK_READERS)
)
def test_a_damaged_store_is_one_line_naming_it_exit_2(
    reader: str, damage: str, damaged: dict[str, Path], good: Path, tmp_path: Path
) -> None:
    store = damaged[damage]
    before = store.read_bytes()
    done = _run(reader, store, good, tmp_path)
    assert done.returncode == 2, (done.stdout[-2000:], done.stderr)
    lines = (done.stdout + done.stderr).splitlines()
    naming = [line for line in lines if line.startswith(f"{store}: ")]
    assert len(naming) == 1, lines
    assert store.read_bytes() == before, "a reader never touches the store"


def test_an_unreadable_store_is_one_line_naming_it(good: Path, tmp_path: Path) -> None:
    """Without the right to read it (root's override dropped): every reader, exit 2."""
    store = tmp_path / "locked.kistore"
    shutil.copyfile(good, store)
    store.chmod(0)
    try:
        for reader in ("validate", "ls", "compare-summary", "digest", "export-liger"):
            done = _run(reader, store, good, tmp_path, prefix=DROP_DAC)
            assert done.returncode == 2, (reader, done.stdout[-2000:], done.stderr)
            lines = (done.stdout + done.stderr).splitlines()
            assert [line for line in lines if line.startswith(f"{store}: ")] == [
                f"{store}: cannot read the store: Permission denied"
            ], lines
    finally:
        store.chmod(0o644)


# ------------------------------------------------------------- tables edited by hand


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The examples alone: loose records, runs added on their own and in bundles."""
    store = tmp_path_factory.mktemp("small") / "small.kistore"
    added = kernelindex("store", "add", *COMPLETE, "--store", store)
    assert added.returncode == 0, added.stdout + added.stderr
    return store


def _bundle_seq(connection: Any) -> int:
    row = connection.execute("SELECT min(seq) FROM records WHERE members IS NOT NULL").fetchone()
    return int(row[0])


def _alone_run_seq(connection: Any) -> int:
    row = connection.execute(
        "SELECT min(seq) FROM records WHERE kind = 'BenchmarkRun' AND members IS NULL"
    ).fetchone()
    return int(row[0])


def _edited(small: Path, copy: Path, statements: list[str], *, trusted: bool = False) -> int:
    """A copy of ``small`` with its ``checks:`` rows deleted (docs/store.md's remedy;
    kept with ``trusted``) and ``statements`` run, ``{bundle}``/``{alone}`` standing for
    the seq of its first bundle / first run added on its own; returns the seq edited."""
    shutil.copyfile(small, copy)
    with duckdb.connect(str(copy)) as connection:
        if not trusted:
            connection.execute("DELETE FROM kernelindex_store WHERE key LIKE 'checks:%'")
        seqs = {"bundle": _bundle_seq(connection), "alone": _alone_run_seq(connection)}
        for statement in statements:
            connection.execute(statement.format(**seqs))
    return seqs["alone"] if any("{alone}" in s for s in statements) else seqs["bundle"]


def _drop_not_null(column: str) -> str:
    return f"ALTER TABLE records ALTER COLUMN {column} DROP NOT NULL"


#: (statements, the pointer the one problem names, the exit status): a row that cannot
#: be read is 2, a record read but invalid is 1.
EDITS: dict[str, tuple[list[str], str, int]] = {
    "members-not-json": (["UPDATE records SET members = 'x' WHERE seq = {bundle}"], "members", 2),
    "members-an-object": (
        ["""UPDATE records SET members = '{{"workload": 1}}' WHERE seq = {bundle}"""],
        "members",
        2,
    ),
    "members-empty-list": (
        ["UPDATE records SET members = '[]' WHERE seq = {bundle}"],
        "members",
        2,
    ),
    "members-pair-too-short": (
        ["""UPDATE records SET members = '[["workload"]]' WHERE seq = {bundle}"""],
        "members/0",
        2,
    ),
    "members-name-a-number": (
        ["""UPDATE records SET members = '[[1, "sha256:00"]]' WHERE seq = {bundle}"""],
        "members/0/0",
        2,
    ),
    "members-name-run": (
        ["""UPDATE records SET members = '[["run", "sha256:00"]]' WHERE seq = {bundle}"""],
        "members/0/0",
        2,
    ),
    "members-digest-null": (
        ["""UPDATE records SET members = '[["workload", null]]' WHERE seq = {bundle}"""],
        "members/0/1",
        2,
    ),
    "members-digest-not-stored": (
        ["""UPDATE records SET members = '[["workload", "sha256:00"]]' WHERE seq = {bundle}"""],
        "members/0/1",
        2,
    ),
    "member-text-not-json": (
        [
            "UPDATE records SET record = '{{' WHERE digest = (SELECT json_extract_string("
            "members, '$[0][1]') FROM records WHERE seq = {bundle})"
        ],
        "members/0",
        2,
    ),
    "record-not-json": (["UPDATE records SET record = 'x' WHERE seq = {alone}"], "record", 2),
    "record-duplicate-key": (
        ["""UPDATE records SET record = '{{"a": 1, "a": 2}}' WHERE seq = {alone}"""],
        "record",
        2,
    ),
    "record-null": (
        [_drop_not_null("record"), "UPDATE records SET record = NULL WHERE seq = {alone}"],
        "record",
        2,
    ),
    "origin-null": (
        [_drop_not_null("origin"), "UPDATE records SET origin = NULL WHERE seq = {alone}"],
        "origin",
        2,
    ),
    "digest-null": (
        [_drop_not_null("digest"), "UPDATE records SET digest = NULL WHERE seq = {alone}"],
        "digest",
        2,
    ),
    "line-not-positive": (
        ["UPDATE records SET origin_line = -3 WHERE seq = {alone}"],
        "origin_line",
        2,
    ),
    "seq-null": (
        [_drop_not_null("seq"), "UPDATE records SET seq = NULL WHERE seq = {alone}"],
        "",
        2,
    ),
    "record-a-list": (["UPDATE records SET record = '[1]' WHERE seq = {alone}"], "", 1),
    "record-wrong-type": (
        [
            'UPDATE records SET record = replace(record, \'"status":"passed"\','
            " '\"status\":5') WHERE seq = {alone}"
        ],
        "",
        1,
    ),
}
#: The readers the edits go through (every reader reads rows alike: one of each kind).
ROW_READERS = ["validate", "ls", "compare", "compare-summary", "digest", "export-liger"]


def _places(text: str, *files: Path) -> str:
    """Output with the places of documents left out (a store's documents carry the
    place they were added from, an export's file its own)."""
    for file in files:
        text = text.replace(str(file), "<file>")
    return re.sub(r"<file>:\d+", "<file>", re.sub(r"/[^ :]+\.jsonl?(:\d+)?", "<file>", text))


#: The edits of the quick run: one of each place a row is read from (the member list,
#: its pairs' names and digests, a member's text, the record, its origin and line) and
#: a record read but invalid; every edit runs under slow.
QUICK_EDITS = [
    "members-not-json",
    "members-pair-too-short",
    "members-name-run",
    "members-digest-not-stored",
    "member-text-not-json",
    "record-duplicate-key",
    "origin-null",
    "line-not-positive",
    "record-wrong-type",
]


@pytest.mark.parametrize(("edit", "reader"), _matrix(sorted(EDITS), ROW_READERS, QUICK_EDITS))
def test_a_hand_edited_row_is_one_problem_naming_the_store_and_row(
    edit: str, reader: str, small: Path, tmp_path: Path
) -> None:
    statements, column, status = EDITS[edit]
    store = tmp_path / "edited.kistore"
    seq = _edited(small, store, statements)
    if status == 1:  # read, and invalid: exactly as the same documents in a file
        exported = kernelindex(
            "store", "export", "--format", "jsonl", "--out", tmp_path / "x", "--store", store
        )
        assert exported.returncode == 0, exported.stderr
        files = tmp_path / "x" / "records.jsonl"
    done = _run(reader, store, store, tmp_path)
    lines = (done.stdout + done.stderr).splitlines()
    if status == 2:
        assert done.returncode == 2, lines
        pointer = f"/records/{seq}/{column}" if column else "/records"
        naming = [line for line in lines if line.startswith(f"{store}: {pointer}")]
        assert len(naming) == 1, lines
        return
    (tmp_path / "out.csv").unlink(missing_ok=True)
    over_file = _run(reader, files, files, tmp_path)
    assert done.returncode == over_file.returncode != 2, lines
    assert _places(done.stdout + done.stderr) == _places(over_file.stdout + over_file.stderr)


def test_a_trusted_store_edited_by_hand_does_not_crash_its_readers(
    small: Path, tmp_path: Path
) -> None:
    """Edits that keep the ``checks:`` rows are outside the trust rule, but still no
    traceback: the row is one problem."""
    store = tmp_path / "trusted.kistore"
    seq = _edited(
        small, store, ["UPDATE records SET members = 'x' WHERE seq = {bundle}"], trusted=True
    )
    for reader in ("ls", "compare", "compare-summary", "export-liger"):
        done = _run(reader, store, store, tmp_path)
        lines = (done.stdout + done.stderr).splitlines()
        if reader.startswith("compare"):  # trusted facts: compare never reads members
            assert done.returncode == 0, (reader, lines)
            continue
        assert done.returncode == 2, (reader, lines)
        assert [line for line in lines if line.startswith(f"{store}: /records/{seq}/members")]


@pytest.mark.parametrize(
    "alter",
    [
        "ALTER TABLE records ALTER COLUMN origin_line TYPE VARCHAR",
        "ALTER TABLE records DROP COLUMN members",
    ],
)
def test_a_table_altered_by_hand_is_one_line(alter: str, small: Path, tmp_path: Path) -> None:
    store = tmp_path / "altered.kistore"
    _edited(small, store, [alter])
    for reader in ("validate", "compare", "digest"):
        done = _run(reader, store, store, tmp_path)
        assert done.returncode == 2, (reader, done.stdout, done.stderr)
        lines = (done.stdout + done.stderr).splitlines()
        naming = [line for line in lines if line.startswith(f"{store}: ")]
        assert len(naming) == 1 and "this kernelindex reads" in naming[0], lines


@settings(
    max_examples=examples(100),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    column=st.sampled_from(["members", "record"]),
    text=st.one_of(
        st.text(max_size=30),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=8),
            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
            max_leaves=6,
        ).map(json.dumps),
    ),
)
def test_any_text_in_a_row_is_read_or_one_problem(
    small: Path, tmp_path: Path, column: str, text: str
) -> None:
    """The law behind the matrix, in process: whatever a bundle's members or a run's
    text holds, reading the store gives documents and problems — never an exception —
    and every other row is still read."""
    from kernelindex_sdk.errors import IntakeError
    from kernelindex_sdk.reading.kistore import store_documents

    store = tmp_path / "any.kistore"
    with duckdb.connect(str(small), read_only=True) as connection:
        documents = connection.execute(
            "SELECT count(*) FROM records WHERE standalone OR kind = 'BenchmarkRun'"
        ).fetchone()[0]
    store.unlink(missing_ok=True)
    shutil.copyfile(small, store)
    with duckdb.connect(str(store)) as connection:
        connection.execute("DELETE FROM kernelindex_store WHERE key LIKE 'checks:%'")
        seq = (_bundle_seq if column == "members" else _alone_run_seq)(connection)
        connection.execute(f"UPDATE records SET {column} = ? WHERE seq = ?", [text, seq])
    read = list(store_documents(str(store)))
    assert len(read) == documents
    problems = [d for d in read if isinstance(d, IntakeError)]
    assert len(problems) <= 1
    for problem in problems:
        assert problem.problem.source == str(store)
        assert problem.problem.pointer.startswith(f"/records/{seq}/")


def test_adding_beside_a_row_that_cannot_be_read_is_one_line(small: Path, tmp_path: Path) -> None:
    """``store add`` reads the stored records new ones reference: one of them edited by
    hand is one line naming the store and the record, nothing added."""
    split = Path(COMPLETE[2])
    store = tmp_path / "edited.kistore"
    shutil.copyfile(small, store)
    with duckdb.connect(str(store)) as connection:
        row = connection.execute(
            "SELECT digest FROM records WHERE kind = 'Workload' AND origin LIKE '%split%'"
        ).fetchone()
        connection.execute(
            "DELETE FROM records WHERE kind = 'BenchmarkRun' AND origin LIKE '%split%'"
        )
        connection.execute("UPDATE records SET record = 'x' WHERE digest = ?", [row[0]])
    before = store.read_bytes()
    done = kernelindex("store", "add", split / "run.json", "--store", store)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.splitlines() == [
        f"kernelindex store add: {store}: the stored record {row[0]} cannot be read:"
        " expected a JSON value, found 'x'; nothing added"
    ]
    assert store.read_bytes() == before
