"""Served and deprecated apiVersions: ``versions.json``, ``validate``'s warning, ``schema list``.

A fake ``v1alpha2`` made from the shipped schemas (as in ``test_registry.py``) replaces
``v1alpha1``, which a ``versions.json`` marks deprecated.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Literal

import pytest
from acceptance.support import make_invoke
from conftest import seed_paths

from kernelindex_sdk.errors import SchemaDirectoryError
from kernelindex_sdk.models import API_VERSION
from kernelindex_sdk.schema.registry import SchemaRegistry, default_registry, packaged_schema_root
from kernelindex_sdk.schema.versionstatus import VERSIONS_FILE, VersionStatus, VersionWatch
from kernelindex_sdk.validating.pipeline import Pipeline
from kernelindex_sdk.validating.validation import ValidationSession

V1ALPHA2 = "kernelindex.dev/v1alpha2"
DEPRECATED = {
    "v1alpha1": {"status": "deprecated", "replacement": V1ALPHA2},
    "v1alpha2": {"status": "served"},
}


def _tree(root: Path, versions: dict[str, Any] | None) -> Path:
    """v1alpha1 as shipped and v1alpha2 made from it, with ``versions`` as versions.json."""
    shipped = packaged_schema_root() / "kernelindex.dev" / "v1alpha1"
    for path in sorted(shipped.glob("*.schema.json")):
        contents = json.loads(path.read_text(encoding="utf-8"))
        for version, schema in (("v1alpha1", contents), ("v1alpha2", copy.deepcopy(contents))):
            if version == "v1alpha2":
                text = json.dumps(schema).replace("/v1alpha1/", "/v1alpha2/")
                schema = json.loads(text)
                if "apiVersion" in schema.get("$defs", {}):
                    schema["$defs"]["apiVersion"]["const"] = V1ALPHA2
            target = root / "kernelindex.dev" / version / path.name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(schema), encoding="utf-8")
    if versions is not None:
        (root / "kernelindex.dev" / VERSIONS_FILE).write_text(
            json.dumps(versions), encoding="utf-8"
        )
    return root


@pytest.fixture
def deprecating(tmp_path: Path) -> SchemaRegistry:
    return SchemaRegistry.from_directory(_tree(tmp_path / "schemas", DEPRECATED))


def _documents(tmp_path: Path) -> Path:
    """Three seeds as they are (v1alpha1) and one moved to v1alpha2, in files."""
    folder = tmp_path / "records"
    folder.mkdir()
    for index, path in enumerate(seed_paths()[:4]):
        bundle = json.loads(path.read_text(encoding="utf-8"))
        if index == 3:
            for member in bundle.values():
                member["apiVersion"] = V1ALPHA2
        (folder / f"{index}.json").write_text(json.dumps(bundle), encoding="utf-8")
    return folder


# --------------------------------------------------------------------------- the registry


def test_the_shipped_version_is_served() -> None:
    registry = default_registry()
    assert registry.status(API_VERSION) == VersionStatus(API_VERSION)
    assert registry.status(API_VERSION).describe() == "served"
    assert not [s for s in registry.statuses.values() if s.deprecated]


def test_versions_json_is_read(deprecating: SchemaRegistry) -> None:
    old = deprecating.status(API_VERSION)
    assert old.deprecated and old.replacement == V1ALPHA2
    assert old.describe() == f"deprecated, use {V1ALPHA2}"
    assert not deprecating.status(V1ALPHA2).deprecated


def test_an_unlisted_version_is_served(tmp_path: Path) -> None:
    registry = SchemaRegistry.from_directory(_tree(tmp_path, {"v1alpha2": {"status": "served"}}))
    assert registry.status(API_VERSION).describe() == "served"


@pytest.mark.parametrize(
    ("versions", "fragment"),
    [
        ({"v1alpha1": {"status": "retired"}}, "status must be one of"),
        ({"v1alpha1": {"status": "deprecated"}}, "names its replacement"),
        ({"v1alpha1": {"status": "deprecated", "replacement": "kernelindex.dev/v9"}}, "v9"),
        ({"v1alpha1": {"status": "served", "replacement": V1ALPHA2}}, "no replacement"),
        ({"v7": {"status": "served"}}, "no schemas for kernelindex.dev/v7"),
        ([], "expected an object"),
    ],
)
def test_a_wrong_versions_json_is_refused(tmp_path: Path, versions: Any, fragment: str) -> None:
    with pytest.raises(SchemaDirectoryError, match=fragment):
        SchemaRegistry.from_directory(_tree(tmp_path, versions))


# --------------------------------------------------------------------------- the warning


@pytest.mark.parametrize("report", ["all", "problems"])  # problems: the quick pass counts
@pytest.mark.parametrize("jobs", [1, 2])
def test_deprecated_records_are_counted_in_every_process(
    deprecating: SchemaRegistry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    jobs: int,
    report: Literal["all", "problems"],
) -> None:
    # A task per file, so that two workers have work (fewer tasks, fewer workers).
    monkeypatch.setattr("kernelindex_sdk.validating.pipeline.BATCH_FILES", 1)
    watch = VersionWatch(ValidationSession(registry=deprecating, strict_json=True))
    pipeline = Pipeline([str(_documents(tmp_path))], checker=watch, jobs=jobs, report=report)
    items = list(pipeline)
    assert all(item.valid for item in items), [i.problems for i in items]
    assert pipeline.tally.valid == 4
    assert pipeline.jobs_used == jobs
    # Three bundles of v1alpha1, three records each (run, protocol, environment).
    assert watch.warnings() == [
        f"apiVersion {API_VERSION} is deprecated; use {V1ALPHA2} (9 records)"
    ]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_validate_warns_once_per_version(
    deprecating: SchemaRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: str
) -> None:
    monkeypatch.setattr(
        "kernelindex_sdk.validating.validation.default_registry", lambda: deprecating
    )
    run = make_invoke()("validate", "--jobs", jobs, _documents(tmp_path))
    assert run.exit_code == 0, run.output
    assert run.lines == ["4 valid, 0 invalid in 4 files"]
    assert run.stderr.splitlines() == [
        f"kernelindex validate: warning: apiVersion {API_VERSION} is deprecated;"
        f" use {V1ALPHA2} (9 records)"
    ]


def test_validate_is_quiet_without_deprecated_records(
    deprecating: SchemaRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        "kernelindex_sdk.validating.validation.default_registry", lambda: deprecating
    )
    folder = _documents(tmp_path)
    for path in sorted(folder.glob("*.json"))[:3]:
        path.unlink()
    run = make_invoke()("validate", folder, "--format", "json")
    assert run.exit_code == 0 and run.stderr == ""
    assert run.json()["valid"] == 1


def test_schema_list_shows_each_status(
    deprecating: SchemaRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("kernelindex_sdk.cli.schema_cmd.default_registry", lambda: deprecating)
    run = make_invoke()("schema", "list")
    assert run.exit_code == 0
    rows = [line.split("  ") for line in run.lines]
    assert len(rows) == 12
    for line in run.lines:
        if line.startswith(API_VERSION):
            assert line.endswith(f"deprecated, use {V1ALPHA2}")
        else:
            assert line.startswith(V1ALPHA2) and line.endswith("  served")
