"""``kernelindex digest``, ``canonicalize`` and ``schema``."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import rfc8785

from .support import INVALID, ROOT, SCHEMAS, SEEDS, VALID, Invoke, run_subprocess

DIGEST_LINE = re.compile(r"^(sha256:[0-9a-f]{64})  (\w+)  (\S+)$")
SEED_FILES = sorted(SEEDS.glob("*.json"))
KINDS = {
    "BenchmarkProtocol",
    "BenchmarkRun",
    "Bundle",
    "ExecutionEnvironment",
    "Implementation",
    "Workload",
}


def _reference_digest(record: dict[str, Any]) -> str:
    """FORMAT-NOTES' rule, without the SDK: sha256 of JCS({apiVersion, kind, spec})."""
    identity = {k: record[k] for k in ("apiVersion", "kind", "spec")}
    return "sha256:" + hashlib.sha256(rfc8785.dumps(identity)).hexdigest()


def _load(path: Path) -> Any:
    return json.loads(path.read_text("utf-8"))


# ------------------------------------------------------------------ digest


@pytest.mark.parametrize("seed", SEED_FILES, ids=lambda p: p.name)
def test_digest_of_a_seed(invoke: Invoke, seed: Path) -> None:
    bundle = _load(seed)
    run = invoke("digest", seed)
    assert run.exit_code == 0, run.output
    rows = [DIGEST_LINE.match(line) for line in run.lines]
    assert all(rows), run.stdout
    printed = [(m[1], m[2], m[3]) for m in rows if m]
    assert [(kind, name) for _, kind, name in printed] == [
        (bundle[m]["kind"], bundle[m]["metadata"]["name"])
        for m in ("run", "protocol", "environment")
    ]
    (run_digest, _, _), (protocol, _, _), (environment, _, _) = printed
    spec = bundle["run"]["spec"]
    # The seeds' own references are reproduced: the digest rule is right.
    assert protocol == spec["protocolDigest"]
    assert environment == spec["environmentDigest"]
    assert run_digest == _reference_digest(bundle["run"])


def test_digest_every_bundle_member(invoke: Invoke) -> None:
    path = VALID / "bundle-all-five.json"
    bundle = _load(path)
    run = invoke("digest", path)
    assert run.exit_code == 0
    members = ["run", "protocol", "workload", "environment", "implementation"]
    expected = [
        f"{_reference_digest(bundle[m])}  {bundle[m]['kind']}  {bundle[m]['metadata']['name']}"
        for m in members
    ]
    assert run.lines == expected


def test_digest_several_files_and_jsonl(invoke: Invoke) -> None:
    records = [json.loads(line) for line in (VALID / "records.jsonl").read_text().splitlines()]
    run = invoke("digest", VALID / "workload.json", VALID / "records.jsonl")
    assert run.exit_code == 0
    workload = _load(VALID / "workload.json")
    assert [line.split("  ")[0] for line in run.lines] == [
        _reference_digest(r) for r in [workload, *records]
    ]


def test_digest_json(invoke: Invoke) -> None:
    path = VALID / "records.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    run = invoke("digest", "--format", "json", path)
    assert run.exit_code == 0
    rows = run.json()
    assert rows == [
        {
            "digest": _reference_digest(record),
            "kind": record["kind"],
            "name": record["metadata"]["name"],
            "file": str(path),
            "line": index,
            "pointer": "",
        }
        for index, record in enumerate(records, 1)
    ]


def test_digest_json_bundle_pointers(invoke: Invoke) -> None:
    run = invoke("digest", "--format", "json", SEED_FILES[0])
    assert [row["pointer"] for row in run.json()] == ["/run", "/protocol", "/environment"]


def test_digest_ignores_metadata(invoke: Invoke, tmp_path: Path) -> None:
    record = _load(VALID / "workload.json")
    record["metadata"] = {"name": "renamed", "title": "Another title", "labels": {"a": "b"}}
    path = tmp_path / "renamed.json"
    path.write_text(json.dumps(record), "utf-8")
    renamed = invoke("digest", path).lines[0].split("  ")
    original = invoke("digest", VALID / "workload.json").lines[0].split("  ")
    assert renamed[0] == original[0]
    assert renamed[2] == "renamed"


def test_digest_of_something_not_a_record(invoke: Invoke, tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('[{"kind": "Workload"}]', "utf-8")
    run = invoke("digest", path)
    assert run.exit_code == 1
    assert f"{path}: /0: not a record" in run.stderr


def test_digest_of_bad_json(invoke: Invoke) -> None:
    run = invoke("digest", INVALID / "duplicate-key.json")
    assert run.exit_code == 2
    assert "duplicate key" in run.stderr
    assert run.stdout == ""


def test_digest_needs_a_path(invoke: Invoke) -> None:
    assert invoke("digest").exit_code == 2


# ------------------------------------------------------------------ canonicalize


@pytest.mark.parametrize(
    "path",
    [SEED_FILES[1], VALID / "bundle-all-five.json", VALID / "array-of-records.json"],
    ids=lambda p: p.name,
)
def test_canonicalize_records(invoke: Invoke, path: Path) -> None:
    run = invoke("canonicalize", path)
    assert run.exit_code == 0
    assert run.stdout_bytes == rfc8785.dumps(_load(path))
    assert not run.stdout_bytes.endswith(b"\n")


@pytest.mark.parametrize(
    "text",
    [
        '{"b": [1, 2.5e3, 1E-7, -0.0, 100.0, 1e21], "a": {"\\u00e9": "\\n\\u001f\\u2028"}}',
        '{"\\ud83d\\ude00": 1, "\\ue000": 2, "z": null, "": [true, false]}',
        '"just a string"',
        "[0.1, 123456789012345.67, 4.5e-320]",
        "  42  ",
    ],
    ids=["numbers-escapes", "utf16-key-order", "string", "floats", "scalar"],
)
def test_canonicalize_any_json(invoke: Invoke, tmp_path: Path, text: str) -> None:
    path = tmp_path / "any.json"
    path.write_text(text, "utf-8")
    run = invoke("canonicalize", path)
    assert run.exit_code == 0, run.output
    assert run.stdout_bytes == rfc8785.dumps(json.loads(text))


def test_canonicalize_stdin(invoke: Invoke) -> None:
    data = (VALID / "workload.json").read_bytes()
    run = invoke("canonicalize", "-", input=data)
    assert run.exit_code == 0
    assert run.stdout_bytes == rfc8785.dumps(json.loads(data))


@pytest.mark.parametrize("rule", ["malformed-json", "nan", "integer-too-large", "trailing-data"])
def test_canonicalize_bad_json(invoke: Invoke, rule: str) -> None:
    run = invoke("canonicalize", INVALID / f"{rule}.json")
    assert run.exit_code == 2
    assert run.stdout_bytes == b""
    assert run.stderr.startswith(str(INVALID / f"{rule}.json"))


def test_canonicalize_writes_the_double_an_inexact_literal_reads_as(invoke: Invoke) -> None:
    """0.10000000000000001 is the double 0.1: JCS writes 0.1, as RFC 8785 says."""
    run = invoke("canonicalize", INVALID / "inexact-float.json")
    assert run.exit_code == 0
    assert b'"batch":0.1' in run.stdout_bytes


def test_canonicalize_missing_file(invoke: Invoke, tmp_path: Path) -> None:
    run = invoke("canonicalize", tmp_path / "none.json")
    assert run.exit_code == 2
    assert run.stdout_bytes == b""


# ------------------------------------------------------------------ schema


def test_schema_list(invoke: Invoke) -> None:
    run = invoke("schema", "list")
    assert run.exit_code == 0
    assert len(run.lines) == 6
    rows = [line.split() for line in run.lines]
    assert {row[1] for row in rows} == KINDS
    for api_version, _, schema_id, status in rows:
        assert api_version == "kernelindex.dev/v1alpha1"
        assert schema_id.startswith("https://kernelindex.dev/schemas/v1alpha1/")
        assert status == "served"  # a deprecated version: tests/test_deprecation.py


@pytest.mark.parametrize("name", ["BenchmarkRun", "benchmarkrun"])
def test_schema_show(invoke: Invoke, name: str) -> None:
    run = invoke("schema", "show", name)
    assert run.exit_code == 0
    schema = json.loads(run.stdout_bytes)
    assert schema["$id"].endswith("/benchmark-run.schema.json")
    packaged = SCHEMAS / "kernelindex.dev/v1alpha1/benchmark-run.schema.json"
    assert run.stdout_bytes == packaged.read_bytes()


def test_schema_show_version(invoke: Invoke) -> None:
    run = invoke("schema", "show", "Bundle", "--version", "v1alpha1")
    assert run.exit_code == 0
    assert json.loads(run.stdout_bytes)["$id"].endswith("/bundle.schema.json")


def test_schema_show_unknown(invoke: Invoke) -> None:
    run = invoke("schema", "show", "Nope")
    assert run.exit_code == 2
    assert run.stdout == ""
    assert run.stderr.startswith("kernelindex schema show: no schema for a kind named 'Nope'")
    assert "'*'" not in run.stderr
    assert "BenchmarkRun" in run.stderr and "Bundle" in run.stderr
    versioned = invoke("schema", "show", "Nope", "--version", "v9")
    assert "no schema for kind 'Nope' in apiVersion 'v9'" in versioned.stderr


def test_a_mistyped_command_gets_a_suggestion(invoke: Invoke) -> None:
    run = invoke("valdate", "x.json")
    assert run.exit_code == 2
    assert "No such command 'valdate'. Did you mean 'validate'?" in run.stderr
    assert "Did you mean" not in invoke("zzzz").stderr


def test_schema_export(invoke: Invoke, tmp_path: Path) -> None:
    target = tmp_path / "out"
    run = invoke("schema", "export", target)
    assert run.exit_code == 0, run.output
    packaged = sorted((SCHEMAS / "kernelindex.dev" / "v1alpha1").glob("*.schema.json"))
    written = sorted((target / "kernelindex.dev" / "v1alpha1").iterdir())
    assert [p.name for p in written] == [p.name for p in packaged]
    for out, original in zip(written, packaged, strict=True):
        assert out.read_bytes() == original.read_bytes()
    assert sorted(p.name for p in target.rglob("*") if p.is_file()) == [p.name for p in packaged]
    # Idempotent: a second export over the first succeeds and changes nothing.
    assert invoke("schema", "export", target).exit_code == 0
    assert [p.read_bytes() for p in written] == [p.read_bytes() for p in packaged]


def test_schema_export_onto_a_file(invoke: Invoke, tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("x", "utf-8")
    run = invoke("schema", "export", target)
    assert run.exit_code == 2


def test_a_broken_plugin_never_breaks_help(monkeypatch: pytest.MonkeyPatch) -> None:
    """An adapter whose entry point names something missing is listed as unavailable."""
    from click.testing import CliRunner

    from kernelindex_sdk.cli import app

    class Broken:
        name = "broken"
        value = "nowhere:missing"

        def load(self) -> object:
            raise AttributeError("module 'nowhere' has no attribute 'missing'")

    monkeypatch.setattr(app, "_plugins", lambda: {"broken": Broken()})
    runner = CliRunner()
    listed = runner.invoke(app.cli, ["--help"])
    assert listed.exit_code == 0 and "broken" in listed.stdout
    ran = runner.invoke(app.cli, ["broken"])
    assert ran.exit_code == 2
    assert "cannot load this command: nowhere:missing cannot be loaded" in ran.stderr


def test_schema_export_never_replaces_a_checkouts_schemas_without_force(tmp_path: Path) -> None:
    """docs/ci.md's `schema export --bundled schemas/`, run from a checkout: the source
    schemas there differ from the bundled ones, so each is named and none is touched;
    `--force` replaces them. A real process, in a copy of the checkout's schemas/."""
    checkout = tmp_path / "checkout"
    shutil.copytree(SCHEMAS, checkout / "schemas")
    before = {p: p.read_bytes() for p in sorted((checkout / "schemas").rglob("*")) if p.is_file()}
    run = run_subprocess(["schema", "export", "--bundled", "schemas/"], cwd=checkout)
    assert run.exit_code == 2, run.output
    assert {p: p.read_bytes() for p in before} == before
    left = sorted(p for p in (checkout / "schemas").rglob("*") if p.is_file())
    assert left == sorted(before)  # nothing left over
    lines = run.stderr.splitlines()
    named = [
        line
        for line in lines
        if line.endswith(": exists with other content: not replaced (use --force to replace it)")
    ]
    bundled = sorted(
        p.name for p in before if p.name != "common.schema.json" and p.name.endswith(".schema.json")
    )
    assert sorted(Path(line.split(": ")[0]).name for line in named) == bundled
    assert lines[-1] == (
        f"kernelindex schema export: error: {len(bundled)} file(s) of the same name hold"
        " other content; nothing written (use --force to replace them)"
    )
    # The packaged (not bundled) files are the same bytes: nothing to refuse.
    assert run_subprocess(["schema", "export", "schemas/"], cwd=checkout).exit_code == 0
    forced = run_subprocess(["schema", "export", "--bundled", "--force", "schemas/"], cwd=checkout)
    assert forced.exit_code == 0, forced.output
    changed = [p for p, data in before.items() if p.read_bytes() != data]
    assert sorted(p.name for p in changed) == bundled


def _packaged_commands(site: Path) -> Iterator[subprocess.CompletedProcess[str]]:
    """``schema list`` and ``validate`` run from a package installed under ``site``."""
    env = {**os.environ, "PYTHONPATH": str(site)}
    for args in (["schema", "list"], ["validate", str(SEED_FILES[0])]):
        yield subprocess.run(
            [sys.executable, "-m", "kernelindex_sdk.cli.main", *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=site.parent,
            timeout=120,
            check=False,
        )


def test_a_broken_packaged_schema_is_one_line(tmp_path: Path) -> None:
    """An installed schema folder whose schema lost its $id (what an export over a
    checkout once left): every command says so in one line, exit 2, no traceback."""
    package = tmp_path / "site" / "kernelindex_sdk"
    shutil.copytree(ROOT / "kernelindex_sdk", package)
    shutil.copytree(SCHEMAS, package / "schemas")  # found before the checkout's
    broken = package / "schemas" / "kernelindex.dev" / "v1alpha1" / "workload.schema.json"
    schema = _load(broken)
    del schema["$id"]
    broken.write_text(json.dumps(schema), "utf-8")
    for done in _packaged_commands(tmp_path / "site"):
        assert done.returncode == 2, done.stderr
        assert done.stderr.splitlines() == [
            f"kernelindex: error: the installed schemas cannot be loaded: {broken}:"
            " schema has no $id"
        ]


def test_missing_packaged_schemas_are_one_line(tmp_path: Path) -> None:
    """An installed package without its schema folder is named as such, not reported as
    a failed write to standard output (a FileNotFoundError once fell into that handler)."""
    package = tmp_path / "site" / "kernelindex_sdk"
    shutil.copytree(ROOT / "kernelindex_sdk", package)
    shutil.rmtree(package / "schemas", ignore_errors=True)
    for done in _packaged_commands(tmp_path / "site"):
        assert done.returncode == 2, done.stderr
        assert done.stderr.splitlines() == [
            "kernelindex: error: the installed schemas cannot be loaded:"
            f" kernelindex schemas not found next to {package}"
        ]
