"""``history`` over a store: the store's SQL gives the very series, points and changes
that reading its records does (noise forms, GPUs, versions, filters alike)."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest
from beforeafter_records import NOISE_FORMS, RunSpec, records_for, write_jsonl
from history_records import liger
from profiles import variants
from store_helpers import kernelindex

pytest.importorskip("duckdb")

from kernelindex_sdk.compare.history_store import open_store
from kernelindex_sdk.schema.fingerprint import checks_fingerprint


def _mixed() -> list[list[dict[str, object]]]:
    """Two GPUs, two shapes, every noise form, versions out of order, a step, a failure."""
    sets = []
    for i in range(24):
        version = f"0.{(i * 7) % 12}.0"
        value = 100_000 if (i * 7) % 12 < 8 else 140_000
        spec = RunSpec(
            implementation=liger(version),
            gpu=("h100", "a100")[i % 2],
            seq=(1024, 2048)[i // 12],
            at=3600 * i,
            value=value + 37 * i,
            noise=NOISE_FORMS[i % len(NOISE_FORMS)],
            spread=1_000,
            status="oom" if i == 5 else "passed",
        )
        sets.append(records_for(spec))
        if i < 8:  # re-runs of the same day: one point of several runs
            rerun = attrs.evolve(spec, at=spec.at + 60 + i, value=spec.value + 500 * i,
                                 noise=NOISE_FORMS[(i + 2) % len(NOISE_FORMS)])  # fmt: skip
            sets.append(records_for(rerun))
    return sets


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("history-store")
    records = folder / "runs.jsonl"
    write_jsonl(records, _mixed())
    store = folder / "runs.kistore"
    added = kernelindex("store", "add", records, "--store", store)
    assert added.returncode == 0, added.stderr
    return records, store


@pytest.mark.parametrize(
    "filters",
    variants(
        [
            (),
            ("--gpu", "a100"),
            ("--where", "seq=2048", "--threshold", "1%"),
            ("--fail-on", "none"),
        ],
        quick={0, 2},
    ),
)
def test_the_store_and_its_records_give_one_history(
    places: tuple[Path, Path], filters: tuple[str, ...]
) -> None:
    records, store = places
    from_records = kernelindex("history", records, "--format", "json", *filters)
    from_store = kernelindex("history", store, "--format", "json", *filters)
    assert from_store.returncode == from_records.returncode, from_store.stderr
    assert json.loads(from_store.stdout) == json.loads(from_records.stdout)
    assert json.loads(from_store.stdout)["series"]


def test_the_store_is_read_through_its_sql(places: tuple[Path, Path]) -> None:
    opened = open_store(str(places[1]), trusted_by=checks_fingerprint())
    assert opened is not None and opened.total == 30
    assert open_store(str(places[1]), trusted_by="another checker") is None


def test_a_typo_on_a_store_is_exit_2(places: tuple[Path, Path]) -> None:
    done = kernelindex("history", places[1], "--where", "sq=1")
    assert done.returncode == 2 and "did you mean 'seq'?" in done.stderr
    done = kernelindex("history", places[1], "--metric", "memory")
    assert done.returncode == 1 and "no run matches the filters" in done.stderr
