"""``store add`` resolves references as ``validate --strict-refs`` does, though it keeps
them more compactly (#30): the same problems in the same order, and the records of a
refused item never stored while a later copy of them is."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest

duckdb = pytest.importorskip("duckdb")

from kernelindex_sdk.canonical import digest  # noqa: E402
from kernelindex_sdk.store import adding  # noqa: E402
from kernelindex_sdk.validating.pipeline import Pipeline  # noqa: E402
from kernelindex_sdk.validating.validation import records_of  # noqa: E402
from tests.store_helpers import ROOT, corpus_module  # noqa: E402


def _inputs(folder: Path) -> tuple[list[str], list[dict[str, Any]], dict[str, Any]]:
    """Two files, and the items of them that must be stored; and the protocol of the
    first, refused, bundle (its first copy that is stored is on line 2)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from make_corpus import bundles

    complete = list(corpus_module().complete_bundles(6))
    # The first seed variant again, as make_corpus writes it: its workload and
    # implementation are nowhere, so it is refused only at the end.
    orphan = next(iter(bundles(1, 0)))
    assert orphan["protocol"] == complete[0]["protocol"]
    later = copy.deepcopy(complete[1]["workload"])
    later["spec"]["parameters"]["batch"] = 3
    forward = copy.deepcopy(complete[2]["run"])  # its workload comes in the next file
    forward["spec"]["workloadDigest"] = digest(later)
    wrong = copy.deepcopy(complete[3]["run"])  # names a run where a workload belongs
    wrong["spec"]["workloadDigest"] = digest(complete[4]["run"])
    lines = [orphan, *complete, complete[0], forward, wrong]
    first = folder / "a.jsonl"
    first.write_text("".join(json.dumps(line) + "\n" for line in lines))
    second = folder / "b.json"
    second.write_text(json.dumps(later))
    return [str(first), str(second)], [*complete, complete[0], forward, later], orphan["protocol"]


@pytest.mark.parametrize(
    ("jobs", "chunk", "held"),
    [(1, None, None), (2, None, 2), (2, 4096, 2)],
    ids=["in-process", "workers", "ranges-and-spill"],
)
def test_add_resolves_references_as_validate_strict_refs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int, chunk: int | None, held: int | None
) -> None:
    if chunk is not None:  # a JSON Lines file checked in ranges by the workers
        monkeypatch.setattr("kernelindex_sdk.validating.pipeline.CHUNK_BYTES", chunk)
    if held is not None:  # open references spilled to the staging folder
        monkeypatch.setattr(adding, "HELD_IN_MEMORY", held)
    paths, kept, protocol = _inputs(tmp_path)
    validate = Pipeline(paths, strict_refs=True, jobs=jobs)
    expected = [str(p) for item in validate for p in item.problems]
    expected += [str(p) for p in validate.late]
    assert any("refers to a BenchmarkRun, not a Workload" in line for line in expected)
    assert sum("refers to no" in line for line in expected) == 2

    store = tmp_path / "s.kistore"
    result = adding.add(paths, str(store), jobs=jobs)
    assert [str(p) for p in result.problems] == expected
    given = [digest(record) for item in kept for _, record in records_of(item)]
    assert (result.stored, result.present, result.repeated, result.refused) == (
        len(set(given)),
        0,
        len(given) - len(set(given)),
        2,
    )
    with duckdb.connect(str(store), read_only=True) as connection:
        stored = {row[0] for row in connection.execute("SELECT digest FROM records").fetchall()}
        place = connection.execute(
            "SELECT origin, origin_line FROM records WHERE digest = ?", [digest(protocol)]
        ).fetchall()
        facts = connection.execute("SELECT count(*) FROM run_facts").fetchall()
    assert stored == set(given)
    # The refused first bundle's protocol is stored from the next copy, line 2.
    assert place == [(paths[0], 2)]
    runs = {digest(r) for item in kept for _, r in records_of(item) if r["kind"] == "BenchmarkRun"}
    assert facts == [(len(runs),)]
