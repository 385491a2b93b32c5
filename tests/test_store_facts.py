"""``compare`` over a trusted store reads its runs' facts in bulk (#30): the same runs,
the same report bytes as over the files, and the older format read through records."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

duckdb = pytest.importorskip("duckdb")

from kernelindex_sdk.compare import records, runs  # noqa: E402
from kernelindex_sdk.reading import kistore  # noqa: E402
from tests.store_helpers import COMPLETE, kernelindex, write_corpus  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "tests" / "examples"


@pytest.fixture(scope="module")
def edges(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Runs with what the seeds lack, as the importers write them: a standard deviation
    and no quantiles (KernelBench), collapsed quantiles (Liger with --quality-flags),
    failed, skipped and undated runs and noise flags (nvbench), and a sample count
    written as 100.0 (the schema's integer); plus the examples and a corpus."""
    folder = tmp_path_factory.mktemp("edges")
    imports = [
        ("kernelbench", EXAMPLES / "kernelbench" / "A100_Modal", ()),
        ("liger", EXAMPLES / "liger" / "good.csv", ("--quality-flags",)),
        ("nvbench", EXAMPLES / "nvbench" / "edge_cases.json", ()),
    ]
    paths = []
    for name, source, extra in imports:
        out = folder / name
        done = kernelindex("import", name, source, "--out", out, "--layout", "jsonl", *extra)
        assert done.returncode in (0, 1), done.stderr
        (written,) = out.glob("*.jsonl")
        paths.append(written)
    # First: the store keeps the copy given first, and so does compare over files.
    paths.insert(0, _float_samples(paths[0], folder / "float-samples.jsonl"))
    return [*paths, *COMPLETE, write_corpus(folder / "corpus.jsonl", 60, seed=3)]


def _float_samples(source: Path, target: Path) -> Path:
    """``source``'s lines with every ``"samples":N`` written ``N.0``: the same records
    (digests are over RFC 8785's form, where 100.0 is 100), another text."""
    text = source.read_text()
    assert '"samples":' in text
    target.write_text(re.sub(r'"samples":(\d+)', r'"samples":\1.0', text))
    return target


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, edges: list[Path]) -> Path:
    path = tmp_path_factory.mktemp("store") / "edges.kistore"
    for part in (edges[:4], edges[4:]):
        done = kernelindex("store", "add", *part, "--store", path)
        assert done.returncode == 0, done.stderr
    return path


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A before/after reference: a corpus of other runs of the same workloads, as a
    file and as a store."""
    folder = tmp_path_factory.mktemp("reference")
    corpus = write_corpus(folder / "reference.jsonl", 60, seed=4)
    path = folder / "reference.kistore"
    done = kernelindex("store", "add", corpus, "--store", path)
    assert done.returncode == 0, done.stderr
    return corpus, path


def _loaded(path: Path, *, facts: bool) -> records.LoadResult:
    return records.load_records([str(path)], facts=facts)


def test_the_runs_of_a_trusted_store_come_as_facts_and_resolve_as_their_records(
    store: Path,
) -> None:
    by_facts = _loaded(store, facts=True)
    by_records = _loaded(store, facts=False)
    assert by_facts.index.runs and all(
        isinstance(run, kistore.RunFacts) for run in by_facts.index.runs.values()
    )
    assert all(isinstance(run, records.StoredRun) for run in by_records.index.runs.values())
    assert list(by_facts.index.runs) == list(by_records.index.runs)
    assert by_facts.index.records == by_records.index.records
    assert by_facts.documents == by_records.documents
    resolved, resolver = runs.resolve_runs(by_facts.index)
    expected, expected_resolver = runs.resolve_runs(by_records.index)
    # Every field of every run: digests, places, result, spread, flags, title, the
    # timestamp parsed, the references resolved, in the order added.
    assert resolved == expected
    assert resolver.missing == expected_resolver.missing
    assert resolver.gpu_names() == expected_resolver.gpu_names()
    # The edge cases are there to be compared.
    assert any(run.stddev is not None and run.p20 is None for run in resolved)
    assert any("collapsed_quantiles" in run.flags for run in resolved)
    assert any(not run.dated for run in resolved)
    assert any(run.status == "failed" for run in resolved)
    assert any(run.title for run in resolved)


def test_a_sample_count_written_as_a_float_reads_as_the_integer(edges: list[Path]) -> None:
    # 100.0 is an integer to JSON Schema and the same record to a digest; a store
    # holds it in an integer column, and files give the same count.
    loaded = records.load_records([str(edges[0])])
    resolved, _ = runs.resolve_runs(loaded.index)
    counts = [run.samples for run in resolved if run.samples is not None]
    assert counts and all(type(count) is int for count in counts)


#: Another rendering of the same runs, or another option that selects them: in the slow
#: set (two processes each); the plain run keeps json and text, the summary, a shape
#: grouping and another metric.
_SLOW = pytest.mark.slow


@pytest.mark.parametrize(
    "options",
    [
        ["--format", "json"],
        pytest.param(["--format", "text"], marks=_SLOW),
        pytest.param(["--format", "markdown"], marks=_SLOW),
        pytest.param(["--format", "csv"], marks=_SLOW),
        pytest.param(["--format", "json", "--all"], marks=_SLOW),
        ["--format", "text", "--by-shape"],
        ["--summary", "--format", "json"],
        pytest.param(["--summary", "--format", "text"], marks=_SLOW),
        ["--format", "json", "--metric", "memory"],
        pytest.param(["--format", "json", "--baseline", "liger"], marks=_SLOW),
    ],
)
def test_compare_over_the_store_prints_the_bytes_it_prints_over_the_files(
    store: Path, edges: list[Path], options: list[str]
) -> None:
    over_store = kernelindex("compare", *options, store)
    over_files = kernelindex("compare", *options, *edges)
    assert over_store.returncode == over_files.returncode, over_store.stderr
    assert over_store.stdout == over_files.stdout
    assert over_store.stderr == over_files.stderr
    assert over_store.stdout.strip()


@pytest.mark.parametrize(
    "options",
    [
        ["--format", "json"],
        pytest.param(["--format", "text"], marks=_SLOW),
        ["--summary", "--format", "json"],
        pytest.param(["--summary", "--format", "text"], marks=_SLOW),
        pytest.param(["--format", "json", "--pair-by", "exact"], marks=_SLOW),
    ],
)
def test_before_after_over_stores_prints_the_bytes_it_prints_over_the_files(
    store: Path, edges: list[Path], reference: tuple[Path, Path], options: list[str]
) -> None:
    reference_file, reference_store = reference
    over_stores = kernelindex("compare", store, "--against", reference_store, *options)
    over_files = kernelindex("compare", *edges, "--against", reference_file, *options)
    assert over_stores.returncode == over_files.returncode, over_stores.stderr
    assert over_stores.stdout == over_files.stdout
    assert over_stores.stderr == over_files.stderr
    assert over_stores.stdout.strip()


@pytest.mark.parametrize("format_", ["json", pytest.param("text", marks=_SLOW)])
def test_before_after_of_a_store_against_itself_is_the_files_against_themselves(
    store: Path, edges: list[Path], format_: str
) -> None:
    # Every run paired with itself: each one's noise, stddev and sample count shown.
    over_store = kernelindex("compare", store, "--against", store, "--format", format_)
    args = [arg for path in edges for arg in ("--against", str(path))]
    over_files = kernelindex("compare", *edges, *args, "--format", format_)
    assert over_store.returncode == over_files.returncode, over_store.stderr
    assert over_store.stdout == over_files.stdout
    assert over_store.stderr == over_files.stderr
    if format_ == "json":
        assert '"kind": "stddev"' in over_store.stdout or '"kind":"stddev"' in over_store.stdout


def test_a_store_beside_files_counts_the_runs_given_twice_once(
    store: Path, edges: list[Path]
) -> None:
    # The store's runs first, then a file of some of the same runs: the first copy
    # wins, as when the files the store was made from come first.
    over_store = kernelindex("compare", "--format", "json", store, edges[-1], edges[0])
    over_files = kernelindex("compare", "--format", "json", *edges, edges[-1], edges[0])
    assert over_store.returncode == over_files.returncode == 0, over_store.stderr
    assert over_store.stdout == over_files.stdout


def _copy(store: Path, target: Path) -> Path:
    target.write_bytes(store.read_bytes())
    return target


def test_facts_that_do_not_cover_every_run_are_not_used(store: Path, tmp_path: Path) -> None:
    # A run without its row of facts (a store tampered with, or damaged): the store
    # is read through its records, never short of a run.
    copy = _copy(store, tmp_path / "short.kistore")
    with duckdb.connect(str(copy)) as connection:
        connection.execute(
            "DELETE FROM run_facts WHERE digest = (SELECT min(digest) FROM run_facts)"
        )
    loaded = _loaded(copy, facts=True)
    assert all(isinstance(run, records.StoredRun) for run in loaded.index.runs.values())
    assert kernelindex("compare", "--format", "json", copy).stdout == (
        kernelindex("compare", "--format", "json", store).stdout
    )


def test_shapes_of_one_hash_fetch_every_column(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Shapes are keyed by a 64-bit hash; two of one hash (here: every shape, the hash
    # made a constant) are fetched whole, run by run.
    expected, _ = runs.resolve_runs(_loaded(store, facts=False).index)
    monkeypatch.setattr(kistore, "_SHAPE_KEY", "0")
    loaded = _loaded(store, facts=True)
    assert all(isinstance(run, kistore.RunFacts) for run in loaded.index.runs.values())
    resolved, _ = runs.resolve_runs(loaded.index)
    assert resolved == expected


def test_copies_of_a_run_with_other_metadata_keep_one_row_of_facts(tmp_path: Path) -> None:
    # The digest covers apiVersion, kind and spec: copies may differ in title. The
    # store keeps the first copy, and its facts are that copy's.
    corpus = write_corpus(tmp_path / "one.jsonl", 1)
    bundle = json.loads(corpus.read_text())
    first, second = (json.loads(json.dumps(bundle)) for _ in range(2))
    first["run"]["metadata"]["title"] = "first title"
    second["run"]["metadata"]["title"] = "second title"
    given = tmp_path / "copies.jsonl"
    given.write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n")
    path = tmp_path / "copies.kistore"
    assert kernelindex("store", "add", given, "--store", path).returncode == 0
    with duckdb.connect(str(path), read_only=True) as connection:
        rows = connection.execute("SELECT title FROM run_facts").fetchall()
    assert rows == [("first title",)]
    over_store = kernelindex("compare", "--format", "json", path)
    over_file = kernelindex("compare", "--format", "json", given)
    assert over_store.returncode == over_file.returncode == 0, over_store.stderr
    assert over_store.stdout == over_file.stdout


def _as_version_1(store: Path, target: Path) -> Path:
    """``store`` as format version 1 made it: no ``stddev`` or ``title`` in its facts,
    its ``runs`` view without them, its marker saying 1 (its adds' fingerprints kept:
    even a store this code's checks trust is read through its records)."""
    _copy(store, target)
    with duckdb.connect(str(target)) as connection:
        connection.execute("DROP VIEW runs")
        connection.execute("ALTER TABLE run_facts DROP COLUMN stddev")
        connection.execute("ALTER TABLE run_facts DROP COLUMN title")
        connection.execute(
            """CREATE VIEW runs AS SELECT
            digest, kernel, pass, dtype, parameters::JSON AS parameters, gpu, hardware,
            provider, implementation, version, status, reason, metric, statistic, value,
            p20, p80, samples, observed_at::TIMESTAMPTZ AS observed_at, quality_flags,
            source, workload_digest, protocol_digest, environment_digest,
            implementation_digest, origin, origin_line, add_id
            FROM run_facts"""
        )
        connection.execute("UPDATE kernelindex_store SET value = '1' WHERE key = 'version'")
    return target


def test_a_store_of_format_version_1_is_read_through_its_records(
    store: Path, edges: list[Path], tmp_path: Path
) -> None:
    old = _as_version_1(store, tmp_path / "v1.kistore")
    assert kistore.read_facts(str(old), trusted_by=_fingerprint()) is None
    loaded = _loaded(old, facts=True)
    assert all(isinstance(run, records.StoredRun) for run in loaded.index.runs.values())
    for options in (["--format", "json"], ["--summary", "--format", "json"]):
        over_old = kernelindex("compare", *options, old)
        over_files = kernelindex("compare", *options, *edges)
        assert over_old.returncode == over_files.returncode == 0, over_old.stderr
        assert over_old.stdout == over_files.stdout
    for args in (["ls", "--format", "json", old], ["store", "query", "SELECT count(*) FROM runs"]):
        done = kernelindex(*args, *(["--store", old] if args[0] == "store" else []))
        assert done.returncode == 0, done.stderr


def test_adding_to_a_store_of_format_version_1_is_refused_in_one_line(
    store: Path, tmp_path: Path
) -> None:
    old = _as_version_1(store, tmp_path / "v1.kistore")
    before = old.read_bytes()
    done = kernelindex("store", "add", EXAMPLES / "valid" / "refs" / "stream.jsonl", "--store", old)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert f"{old}: a kernelindex store of format version '1'" in line
    assert "export it (kernelindex store export --format jsonl) and add that" in line
    assert old.read_bytes() == before


def test_a_store_of_a_newer_format_is_one_line(store: Path, tmp_path: Path) -> None:
    newer = _copy(store, tmp_path / "v9.kistore")
    with duckdb.connect(str(newer)) as connection:
        connection.execute("UPDATE kernelindex_store SET value = '9' WHERE key = 'version'")
    done = kernelindex("compare", "--format", "json", newer)
    assert done.returncode == 2
    assert "a kernelindex store of format version '9'; this kernelindex reads versions 1, 2" in (
        done.stdout + done.stderr
    )


def _fingerprint() -> Any:
    from kernelindex_sdk.schema.fingerprint import checks_fingerprint

    return checks_fingerprint()
