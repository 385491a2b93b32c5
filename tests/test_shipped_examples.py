"""The records shipped in ``examples/`` pass every check the docs recommend.

``examples/liger/`` holds what ``kernelindex import liger`` makes of the four Liger CSV
rows the published seeds were imported from: each run with the protocol, workload,
environment and implementation it references. (The published seeds themselves cannot
be shipped there: their Workload and Implementation digests name records that were
never published, so ``--strict-refs`` could never pass on them.)
"""

from __future__ import annotations

import csv
import json
import shlex
from pathlib import Path
from typing import Any

import pytest
import shared_data
import yaml
from store_helpers import kernelindex

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SHIPPED = sorted((EXAMPLES / "liger").glob("*.json"))
PUBLISHED_SEEDS = ROOT / "tests" / "examples" / "valid" / "seeds"


def test_the_examples_pass_validate_with_strict_refs() -> None:
    done = kernelindex("validate", "examples/", "--strict-refs", cwd=ROOT)
    assert (done.returncode, done.stdout) == (0, "4 valid, 0 invalid in 4 files\n"), done.stderr


def test_the_refs_hook_accepts_every_shipped_file() -> None:
    """The ``kernelindex-validate-refs`` hook's own command line, on the shipped files
    (as pre-commit passes staged files)."""
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text("utf-8"))
    (hook,) = [h for h in hooks if h["id"] == "kernelindex-validate-refs"]
    entry = shlex.split(hook["entry"])
    assert entry[0] == "kernelindex"
    files = [str(path.relative_to(ROOT)) for path in SHIPPED]
    done = kernelindex(*entry[1:], *hook["args"], *files, cwd=ROOT)
    assert done.returncode == 0, (done.stdout, done.stderr)


def test_compare_labels_the_examples_by_pass_and_implementation() -> None:
    done = kernelindex("compare", "examples/", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "unknown" not in done.stdout and "sha256:" not in done.stdout
    assert "not given" not in done.stderr
    for label in ("backward pass", "full pass", "liger 0.2.1", "liger 0.7.0"):
        assert label in done.stdout


def _seed_runs() -> dict[str, dict[str, Any]]:
    runs = {}
    for path in sorted(PUBLISHED_SEEDS.glob("*.json")):
        run = json.loads(path.read_text("utf-8"))["run"]
        runs[run["spec"]["sourceNative"]["externalId"]] = run
    return runs


_OURS = ("workloadDigest", "implementationDigest")


def _without_our_digests(run: dict[str, Any]) -> dict[str, Any]:
    return {**run, "spec": {k: v for k, v in run["spec"].items() if k not in _OURS}}


def _by_external_id(paths: list[Path]) -> dict[str, bytes]:
    found = {}
    for path in paths:
        run = json.loads(path.read_text("utf-8"))["run"]
        found[run["spec"]["sourceNative"]["externalId"]] = path.read_bytes()
    return found


def _series(external_id: str) -> tuple[str, str, str, str]:
    """(kernel, mode, provider, CSV timestamp) of a Liger run's externalId."""
    kernel, mode, provider, _, _, stamp = external_id.split("/")
    return kernel, mode, provider, f"{stamp[:10]} {stamp[11:].replace('-', ':')}"


def test_each_shipped_run_is_a_published_seed_but_for_the_unpublished_references() -> None:
    """Same run as the seed (metadata included), protocol and environment the seed's own;
    only the two references the seeds could not publish are the importer's."""
    seeds = _seed_runs()
    for path in SHIPPED:
        bundle = json.loads(path.read_text("utf-8"))
        run = bundle["run"]
        seed = seeds.pop(run["spec"]["sourceNative"]["externalId"])
        assert _without_our_digests(run) == _without_our_digests(seed)
        assert run["spec"]["protocolDigest"] == seed["spec"]["protocolDigest"]
        assert run["spec"]["workloadDigest"] != seed["spec"]["workloadDigest"]
    assert seeds == {}


def test_the_shipped_records_are_the_importers_output_for_the_seed_rows(tmp_path: Path) -> None:
    """``kernelindex import liger`` on the seeds' four CSV rows writes these very bundles."""
    source = shared_data.require("liger", "all_benchmark_data.csv")
    wanted = {_series(external_id) for external_id in _seed_runs()}
    with source.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    picked = [rows[0]]
    for row in rows[1:]:
        if (row[0], row[2], row[1], row[13]) in wanted and row[3] == "speed":
            picked.append(row)
    rows_csv = tmp_path / "rows.csv"
    with rows_csv.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(picked)
    done = kernelindex("import", "liger", rows_csv, "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    made = _by_external_id(sorted((tmp_path / "out").glob("*.json")))
    shipped = _by_external_id(SHIPPED)
    # Every row of the seeds' series was imported; the four the seeds are are shipped as made.
    assert set(shipped) <= set(made)
    assert {k: made[k] for k in shipped} == shipped


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_each_bundle_holds_every_record_its_run_references(path: Path) -> None:
    bundle = json.loads(path.read_text("utf-8"))
    assert sorted(bundle) == ["environment", "implementation", "protocol", "run", "workload"]
