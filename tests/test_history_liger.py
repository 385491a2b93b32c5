"""``history`` on Liger-Kernel's own benchmark CSV (2,448 real runs), read where it lies.

The CSV (``../shared/liger/all_benchmark_data.csv``) is imported into a temporary
folder with ``kernelindex import liger`` and added to a store; the tests skip cleanly
where it (or the importer) is absent. In this CSV every kernel, shape, GPU and provider
is measured by one Liger release only (a release re-measures what it changed and the
file keeps the newest row), and the few re-runs are of one day: so every series is one
point, and no change is found — what a history of real data without a re-measurement
must say. The same history comes from the store's SQL as from the records.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import shared_data
from click.testing import CliRunner
from store_helpers import kernelindex

from kernelindex_sdk.cli.app import cli

LIGER_ROWS = 2448


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    csv_path = shared_data.require("liger", "all_benchmark_data.csv")
    out = tmp_path_factory.mktemp("liger-history")
    result = CliRunner().invoke(
        cli, ["import", "liger", str(csv_path), "--out", str(out / "records"), "--layout", "jsonl"]
    )
    if result.exit_code != 0 and "No such command" in result.output:
        pytest.skip("the Liger importer is not installed")
    assert result.exit_code == 0, result.output
    return out


def test_the_liger_csv_has_a_history_of_every_run(imported: Path) -> None:
    done = kernelindex("history", imported / "records", "--format", "json")
    assert done.returncode == 0, done.stderr
    series = json.loads(done.stdout)["series"]
    assert sum(p["runs"] for s in series for p in s["points"]) == LIGER_ROWS
    keys = [tuple(sorted(s["key"].items())) for s in series]
    assert len(keys) == len(set(keys))
    assert not any(s["changes"] for s in series)
    versions = {p["version"] for s in series for p in s["points"]}
    assert {"0.2.1", "0.5.10", "0.8.1"} <= versions


def test_the_store_gives_the_same_history(imported: Path) -> None:
    pytest.importorskip("duckdb")
    store = imported / "liger.kistore"
    added = kernelindex("store", "add", imported / "records", "--store", store)
    assert added.returncode == 0, added.stderr
    args = ("--kernel", "geglu", "--kernel", "cross_entropy", "--format", "json")
    from_store = kernelindex("history", store, *args)
    from_records = kernelindex("history", imported / "records", *args)
    assert from_store.returncode == from_records.returncode == 0, from_store.stderr
    assert json.loads(from_store.stdout) == json.loads(from_records.stdout)
    assert json.loads(from_store.stdout)["series"]
