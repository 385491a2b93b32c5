"""``kernelindex store``: add, query, export, and a store read as a PATH (#30)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from profiles import variants

duckdb = pytest.importorskip("duckdb")

from tests.store_helpers import (  # noqa: E402
    COMPLETE,
    EXAMPLES,
    STREAM,
    count_records,
    kernelindex,
    write_corpus,
)

#: The costlier variants of a law whose cheap case stays in the quick run.
_SLOW = pytest.mark.slow

INSTALL = (
    "pip install 'kernelindex-sdk[store]' (from a kernelindex checkout: pip install '.[store]';"
    " from its wheel: pip install 'WHEEL.whl[store]')"
)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_corpus(tmp_path_factory.mktemp("corpus") / "bundles.jsonl", 120)


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    """A store of the examples and the corpus, added in two adds."""
    store = tmp_path_factory.mktemp("store") / "runs.kistore"
    first = kernelindex("store", "add", *COMPLETE, "--store", store)
    assert first.returncode == 0, first.stdout + first.stderr
    second = kernelindex("store", "add", corpus, "--store", store)
    assert second.returncode == 0, second.stdout + second.stderr
    return store


@pytest.mark.parametrize(
    "command",
    variants(
        [
            ["compare", "--format", "json"],
            ["compare", "--summary", "--format", "json"],
            ["ls", "--format", "json"],
            ["digest"],
        ],
        quick={0, 3},
    ),
)
def test_a_store_reads_as_the_files_it_was_made_from(
    filled: Path, corpus: Path, command: list[str]
) -> None:
    over_store = kernelindex(*command, filled)
    over_files = kernelindex(*command, *COMPLETE, corpus)
    assert over_store.returncode == over_files.returncode == 0, over_store.stderr
    assert over_store.stdout == over_files.stdout
    assert over_store.stdout.strip()


def test_validate_over_a_store_counts_it_as_one_file(filled: Path) -> None:
    done = kernelindex("validate", "--strict-refs", "--format", "json", filled)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["files"] == 1 and report["valid"] > 120 and not report["problems"]


def test_export_liger_reads_a_store_as_the_files(
    filled: Path, corpus: Path, tmp_path: Path
) -> None:
    from_store = kernelindex("export", "liger", filled, "--out", tmp_path / "a.csv")
    from_files = kernelindex("export", "liger", *COMPLETE, corpus, "--out", tmp_path / "b.csv")
    assert from_store.returncode == from_files.returncode, from_store.stderr
    assert from_store.stderr == from_files.stderr
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()


def test_adding_again_stores_nothing_twice(tmp_path: Path, corpus: Path) -> None:
    store = tmp_path / "s.kistore"
    first = kernelindex("store", "add", corpus, "--store", store)
    assert first.returncode == 0, first.stderr
    stored = count_records(store)
    again = kernelindex("store", "add", corpus, "--store", store)
    assert again.returncode == 0, again.stderr
    assert count_records(store) == stored
    repeated = 120 * 5 - stored
    assert f"{stored} stored, 0 already present, {repeated} repeated in the input" in first.stdout
    assert f"0 stored, {stored} already present, {repeated} repeated in the input" in again.stdout


def test_references_resolve_to_records_already_stored(tmp_path: Path) -> None:
    split = EXAMPLES / "valid" / "refs" / "split"
    alone = kernelindex("store", "add", split / "run.json", "--store", tmp_path / "a.kistore")
    assert alone.returncode == 1
    # The same lines validate --strict-refs prints for the run given alone.
    validate = kernelindex("validate", "--strict-refs", split / "run.json")
    problems = [line for line in validate.stdout.splitlines() if "refers to no" in line]
    assert problems and all(line in alone.stdout.splitlines() for line in problems)
    assert "0 stored, 0 already present, 1 refused" in alone.stdout
    store = tmp_path / "b.kistore"
    others = [p for p in sorted(split.iterdir()) if p.name != "run.json"]
    assert kernelindex("store", "add", *others, "--store", store).returncode == 0
    later = kernelindex("store", "add", split / "run.json", "--store", store)
    assert later.returncode == 0, later.stdout + later.stderr
    assert "1 stored, 0 already present, 0 refused" in later.stdout


def test_a_refused_record_is_one_line_and_the_others_are_stored(tmp_path: Path) -> None:
    store = tmp_path / "s.kistore"
    invalid = EXAMPLES / "compare" / "invalid"
    done = kernelindex("store", "add", invalid, "--store", store, "--jobs", "1")
    assert done.returncode == 1
    refused = [line for line in done.stdout.splitlines() if "bad.json" in line]
    validate = kernelindex("validate", "--strict-refs", invalid)
    assert refused == [line for line in validate.stdout.splitlines() if "bad.json" in line]
    where = re.escape(str(invalid / "bad.json"))
    assert refused and all(re.match(rf"{where}:\d+:\d+: /", line) for line in refused)
    assert "1 refused" in done.stdout
    names = kernelindex("store", "query", "SELECT origin FROM runs", "--store", store)
    assert "good.json" in names.stdout and "bad.json" not in names.stdout


def test_the_store_file_defaults_and_the_environment_overrides(tmp_path: Path) -> None:
    default = kernelindex("store", "add", STREAM, cwd=tmp_path, env={"KERNELINDEX_STORE": ""})
    assert default.returncode == 0 and (tmp_path / "kernelindex.kistore").exists()
    named = tmp_path / "elsewhere.kistore"
    env = kernelindex("store", "add", STREAM, env={"KERNELINDEX_STORE": str(named)})
    assert env.returncode == 0 and named.exists()


def _no_store(kind: str, tmp_path: Path) -> tuple[Path, str]:
    """A file that is no kernelindex store, of ``kind``, and why it is not one."""
    if kind == "foreign":
        foreign = tmp_path / "other.duckdb"
        with duckdb.connect(str(foreign)) as connection:
            connection.execute("CREATE TABLE t (x INTEGER)")
        return foreign, "not a kernelindex store (a DuckDB database of other data)"
    if kind == "text":
        text = tmp_path / "notes.txt"
        text.write_text("hello\n")
        return text, "not a kernelindex store (not a DuckDB database file)"
    truncated = tmp_path / "cut.kistore"
    assert kernelindex("store", "add", STREAM, "--store", truncated).returncode == 0
    truncated.write_bytes(truncated.read_bytes()[:5000])
    return truncated, "not a readable kernelindex store"


@pytest.mark.parametrize(
    ("kind", "command"),
    # Each file once and each command once in the quick run, all of them under slow (a
    # named .txt file that is no DuckDB file is read as JSON by validate: not asked).
    variants(
        [
            (kind, command)
            for kind in ("foreign", "text", "truncated")
            for command in ("add", "query", "validate")
            if (kind, command) != ("text", "validate")
        ],
        quick={0, 4, 7},
        several=True,
    ),
)
def test_a_file_that_is_no_kernelindex_store_is_one_line(
    tmp_path: Path, kind: str, command: str
) -> None:
    store, why = _no_store(kind, tmp_path)
    before = store.read_bytes()
    args = {
        "add": ["store", "add", STREAM, "--store", store],
        "query": ["store", "query", "SELECT 1", "--store", store],
        "validate": ["validate", store],
    }[command]
    done = kernelindex(*args)
    assert done.returncode == 2, (args, done.stdout, done.stderr)
    lines = (done.stderr if args[0] == "store" else done.stdout).splitlines()
    assert any(why in line and str(store) in line for line in lines), lines
    assert "Traceback" not in done.stderr
    assert store.read_bytes() == before


@pytest.mark.parametrize(
    ("sql", "why"),
    [
        pytest.param(
            "INSERT INTO records SELECT * FROM records", "only SELECT is allowed", marks=_SLOW
        ),
        pytest.param("DELETE FROM records", "only SELECT is allowed", marks=_SLOW),
        ("COPY records TO '/tmp/x.csv'", "only SELECT is allowed"),
        ("ATTACH '/tmp/y.duckdb'", "only SELECT is allowed"),
        ("SELECT 1; DROP TABLE records", "exactly one SELECT"),
        ("SELECT * FROM read_csv('/etc/passwd')", "file system operations are disabled"),
    ],
)
def test_sql_that_would_write_is_refused(filled: Path, sql: str, why: str) -> None:
    before = count_records(filled)
    done = kernelindex("store", "query", sql, "--store", filled)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and why in done.stderr, done.stderr
    assert count_records(filled) == before


DOC_QUERIES = {
    "fastest": """
        SELECT kernel, pass, parameters, gpu, arg_min(implementation, value) AS fastest,
               min(value) AS ns
        FROM runs
        WHERE status = 'passed' AND metric = 'latency' AND gpu LIKE '%H100%'
        GROUP BY kernel, pass, parameters, gpu ORDER BY kernel, pass, ns""",
    "history": """
        SELECT observed_at, kernel, parameters, value, p20, p80
        FROM runs WHERE provider = 'liger' AND version = '0.6.0'
        ORDER BY observed_at""",
    "flags": """
        SELECT digest, kernel, implementation, quality_flags
        FROM runs WHERE len(quality_flags) > 0""",
}


@pytest.mark.parametrize("name", sorted(DOC_QUERIES))
def test_the_documented_queries_run(filled: Path, name: str) -> None:
    docs = (Path(__file__).resolve().parent.parent / "docs" / "store.md").read_text()
    assert " ".join(DOC_QUERIES[name].split()) in " ".join(docs.split())
    done = kernelindex("store", "query", DOC_QUERIES[name], "--store", filled, "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    if name != "flags":
        assert rows


def test_query_formats(filled: Path) -> None:
    sql = "SELECT kernel, count(*) AS n, any_value(parameters) AS p FROM runs GROUP BY 1 ORDER BY 1"
    as_json = json.loads(
        kernelindex("store", "query", sql, "--store", filled, "--format", "json").stdout
    )
    assert as_json and isinstance(as_json[0]["p"], dict)
    as_csv = kernelindex("store", "query", sql, "--store", filled, "--format", "csv").stdout
    assert as_csv.splitlines()[0] == "kernel,n,p" and len(as_csv.splitlines()) == len(as_json) + 1
    as_text = kernelindex("store", "query", sql, "--store", filled).stdout
    assert as_text.splitlines()[-1] == f"({len(as_json)} rows)"


def test_the_jsonl_export_added_to_a_new_store_gives_the_same_digests(
    filled: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    assert (
        kernelindex(
            "store", "export", "--format", "jsonl", "--out", out, "--store", filled
        ).returncode
        == 0
    )
    again = tmp_path / "again.kistore"
    added = kernelindex("store", "add", out / "records.jsonl", "--store", again)
    assert added.returncode == 0, added.stdout

    def digests(store: Path) -> list[tuple[str, str]]:
        with duckdb.connect(str(store), read_only=True) as connection:
            return connection.execute("SELECT digest, kind FROM records ORDER BY 1").fetchall()

    assert digests(again) == digests(filled)
    refused = kernelindex("store", "export", "--format", "jsonl", "--out", out, "--store", filled)
    assert refused.returncode == 2 and "--force" in refused.stderr
    forced = kernelindex(
        "store", "export", "--format", "jsonl", "--out", out, "--store", filled, "--force"
    )
    assert forced.returncode == 0


def test_the_parquet_export_is_partitioned_and_readable(filled: Path, tmp_path: Path) -> None:
    out = tmp_path / "pq"
    done = kernelindex("store", "export", "--format", "parquet", "--out", out, "--store", filled)
    assert done.returncode == 0, done.stderr
    kernels = sorted(p.name for p in (out / "runs").iterdir())
    assert len(kernels) > 1 and all(k.startswith("kernel=") for k in kernels)
    with duckdb.connect() as connection:
        runs = connection.execute(
            f"SELECT count(*), count(DISTINCT kernel) FROM read_parquet('{out}/runs/*/*.parquet',"
            " hive_partitioning = true)"
        ).fetchone()
        kinds = connection.execute(
            f"SELECT count(*) FROM read_parquet('{out}/benchmark_runs/*.parquet')"
        ).fetchone()
    with duckdb.connect(str(filled), read_only=True) as connection:
        stored = connection.execute("SELECT count(*), count(DISTINCT kernel) FROM runs").fetchone()
    assert runs == stored and kinds is not None and kinds[0] == stored[0]
    pyarrow_dataset = pytest.importorskip("pyarrow.dataset")
    table = pyarrow_dataset.dataset(out / "runs", partitioning="hive").to_table()
    assert table.num_rows == stored[0] and "value" in table.column_names


def test_without_duckdb_one_line_says_how_to_install_it(tmp_path: Path, filled: Path) -> None:
    """DuckDB hidden from the interpreter: store commands and a store named as a PATH."""
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text("import sys\nsys.modules['duckdb'] = None\n")
    env = {"PYTHONPATH": f"{blocker}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    done = kernelindex("store", "add", STREAM, "--store", tmp_path / "x.kistore", env=env)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [f"kernelindex store: needs DuckDB: {INSTALL}"]
    validate = kernelindex("validate", filled, env=env)
    assert validate.returncode == 2 and INSTALL in validate.stdout
    assert "Traceback" not in validate.stderr


def test_the_sdk_imports_duckdb_only_when_a_store_is_opened() -> None:
    code = (
        "import sys, kernelindex_sdk, kernelindex_sdk.reading.sources,"
        " kernelindex_sdk.validating.pipeline, kernelindex_sdk.reading.kistore,"
        " kernelindex_sdk.store;"
        " print('duckdb' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr


@pytest.mark.slow
def test_an_add_commits_within_a_small_memory_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The commit's memory is DuckDB's limit, not the add's size: 12,000 bundles
    (60,000 staged rows, ~80 MB of staging) commit under a 128 MB limit on one thread.
    (64 MB is too little for this add, with a window function or without: DuckDB
    keeps part of an uncommitted insert in memory.)"""
    from kernelindex_sdk.store import adding

    monkeypatch.setattr(adding, "COMMIT_MEMORY", "128MB")
    monkeypatch.setattr(adding, "COMMIT_THREADS", 1)
    corpus = write_corpus(tmp_path / "c.jsonl", 12000)
    result = adding.add([str(corpus)], str(tmp_path / "s.kistore"), jobs=1)
    assert result.exit_status() == 0 and result.stored > 12000
    assert count_records(tmp_path / "s.kistore") == result.stored


class _CountingSession:
    """A compare session that counts the documents it is asked to check."""

    def __init__(self) -> None:
        from kernelindex_sdk.compare.records import default_session

        self.inner = default_session()
        self.checked = 0

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def __setattr__(self, name: str, value: object) -> None:
        if name in ("inner", "checked"):
            object.__setattr__(self, name, value)
        else:
            setattr(self.inner, name, value)

    def check_document(self, value: object, **where: object) -> object:
        self.checked += 1
        return self.inner.check_document(value, **where)


def _with_checks(store: Path, copy: Path, fingerprint: str | None, tamper: bool = False) -> Path:
    """A copy of ``store`` whose adds say they were checked under ``fingerprint``
    (None: no fingerprint, as a store made before adds wrote one); ``tamper``: its
    first stored run made invalid."""
    copy.write_bytes(store.read_bytes())
    with duckdb.connect(str(copy)) as connection:
        connection.execute("DELETE FROM kernelindex_store WHERE key LIKE 'checks:%'")
        if fingerprint is not None:
            connection.execute(
                "INSERT INTO kernelindex_store SELECT 'checks:' || add_id::VARCHAR, ? FROM adds",
                [fingerprint],
            )
        if tamper:
            connection.execute(
                'UPDATE records SET record = replace(record, \'"status":"passed"\','
                ' \'"status":"bogus"\') WHERE seq = (SELECT min(seq) FROM records'
                " WHERE kind = 'BenchmarkRun' AND record LIKE '%\"status\":\"passed\"%')"
            )
    return copy


def test_every_add_says_what_checked_its_records(filled: Path) -> None:
    from kernelindex_sdk.schema.fingerprint import checks_fingerprint

    with duckdb.connect(str(filled), read_only=True) as connection:
        adds = connection.execute("SELECT add_id FROM adds ORDER BY 1").fetchall()
        marks = dict(connection.execute("SELECT key, value FROM kernelindex_store").fetchall())
    assert len(adds) == 2
    assert [marks[f"checks:{add_id}"] for (add_id,) in adds] == [checks_fingerprint()] * 2


def test_a_store_checked_by_the_same_checks_is_read_without_checking_again(
    filled: Path, tmp_path: Path
) -> None:
    from kernelindex_sdk.compare.records import load_records
    from kernelindex_sdk.schema.fingerprint import checks_fingerprint

    results = {}
    for name, fingerprint in [
        ("same", checks_fingerprint()),
        ("other", "checks-sha256:" + "0" * 64),
        ("none", None),
    ]:
        copy = _with_checks(filled, tmp_path / f"{name}.kistore", fingerprint)
        session = _CountingSession()
        loaded = load_records([str(copy)], session=session)  # type: ignore[arg-type]
        results[name] = (session.checked, loaded)
    checked = {name: count for name, (count, _) in results.items()}
    documents = results["same"][1].documents
    assert documents > 120
    assert checked == {"same": 0, "other": documents, "none": documents}
    same, other = results["same"][1], results["other"][1]
    assert list(same.index.runs) == list(other.index.runs)
    assert list(same.index.records) == list(other.index.records)
    assert same.index.runs == other.index.runs and same.index.records == other.index.records


def test_a_store_whose_fingerprint_differs_is_checked_again(filled: Path, tmp_path: Path) -> None:
    from kernelindex_sdk.schema.fingerprint import checks_fingerprint

    trusted = _with_checks(filled, tmp_path / "t.kistore", checks_fingerprint(), tamper=True)
    altered = _with_checks(filled, tmp_path / "a.kistore", "checks-sha256:x", tamper=True)
    # The trust rule, both ways: a stored record is taken as checked only under the
    # very checks that checked it; the altered mark has the tampered run refused.
    over_trusted = kernelindex("compare", "--format", "json", trusted)
    assert over_trusted.returncode == 0 and not over_trusted.stderr, over_trusted.stderr
    over_altered = kernelindex("compare", "--format", "json", altered)
    assert over_altered.returncode == 1, over_altered.stderr
    problem, summary = over_altered.stderr.strip().splitlines()
    assert "/spec/status: 'bogus' is not one of" in problem
    assert summary == "kernelindex compare: 1 invalid item skipped (see above)"


@pytest.mark.slow
def test_records_added_from_ranges_of_a_large_jsonl_keep_their_lines(tmp_path: Path) -> None:
    # Over 2 MiB, workers check a JSON Lines file in ranges, numbering lines from the
    # start of their range: the stored place must be the line in the whole file.
    corpus = write_corpus(tmp_path / "large.jsonl", 1000)
    assert corpus.stat().st_size > 2 << 20
    store = tmp_path / "s.kistore"
    added = kernelindex("store", "add", corpus, "--store", store, "-j", "2")
    assert added.returncode == 0, added.stderr
    over_store = kernelindex("compare", "--format", "json", store)
    over_file = kernelindex("compare", "--format", "json", corpus)
    assert over_store.returncode == over_file.returncode == 0, over_store.stderr
    assert over_store.stdout == over_file.stdout
    with duckdb.connect(str(store), read_only=True) as connection:
        row = connection.execute("SELECT max(origin_line) FROM records").fetchone()
    assert row == (1000,)
