"""``kernelindex_sdk.validating.daskvalidate``: JSON Lines validated on a real Dask cluster give
the problems and tally of ``kernelindex validate`` (#30)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("dask.bag")
pytest.importorskip("distributed")

from kernelindex_sdk.validating.pipeline import Pipeline
from tests.store_helpers import write_corpus


def _validate(paths: list[Path], strict_refs: bool) -> tuple[list[str], str]:
    """What ``kernelindex validate`` reports: problems in order, then the summary."""
    pipeline = Pipeline([str(p) for p in paths], strict_refs=strict_refs, report="problems")
    problems = [str(p) for item in pipeline for p in item.problems]
    problems += [str(p) for p in pipeline.late]
    return problems, pipeline.tally.summary()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("dask")
    good = write_corpus(folder / "a.jsonl", 300)
    lines = write_corpus(folder / "b.jsonl", 200, seed=7).read_text().splitlines()
    bundle = json.loads(lines[10])
    bundle["run"]["spec"]["status"] = "exploded"  # a schema problem
    lines[10] = json.dumps(bundle)
    lines[20] = '{"run": '  # malformed JSON
    lines[30] = ""  # a blank line: skipped, still numbered
    run_alone = json.loads(lines[40])["run"]  # a run whose references are elsewhere
    lines[40] = json.dumps(run_alone)
    bundle = json.loads(lines[50])
    bundle["run"]["spec"]["workloadDigest"] = "sha256:" + "0" * 64  # resolves to nothing
    del bundle["workload"]
    lines[50] = json.dumps(bundle)
    mixed = folder / "b.jsonl"
    mixed.write_text("\n".join(lines) + "\n")
    return [good, mixed]


@pytest.mark.slow
@pytest.mark.parametrize("strict_refs", [False, True])
def test_a_local_cluster_of_processes_validates_as_validate_does(
    inputs: list[Path], strict_refs: bool
) -> None:
    import dask.bag as db
    from distributed import Client, LocalCluster

    from kernelindex_sdk.validating.daskvalidate import validate_bag

    expected = _validate(inputs, strict_refs)
    assert expected[0]  # the inputs do have problems
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        # Small blocks: each file is cut into several partitions, across both workers.
        bag = db.read_text([str(p) for p in inputs], include_path=True, blocksize=100_000)
        assert bag.npartitions > 4
        result = validate_bag(bag, strict_refs=strict_refs)
        assert len(client.scheduler_info()["workers"]) == 2
    assert [str(p) for p in result.problems] == expected[0]
    assert result.tally.summary() == expected[1]
