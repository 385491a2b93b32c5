"""kernelindex among the tools people already use: pre-commit, other validators, CI.

The pre-commit test installs the hook the way pre-commit does (a fresh environment,
``pip install`` of this repository: tens of seconds), so it is marked ``slow`` and run
by ``.ci/run`` on its own.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .support import INVALID, ROOT, SEEDS, VALID, Invoke

BIN = Path(sys.executable).parent


def _bundled(invoke: Invoke, tmp_path: Path) -> Path:
    out = tmp_path / "schemas"
    run = invoke("schema", "export", "--bundled", out)
    assert run.exit_code == 0, run.output
    return out / "kernelindex.dev" / "v1alpha1"


def _jsonschema_errors(schema: dict[str, Any], instance: Any) -> list[str]:
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    return [error.message for error in validator.iter_errors(instance)]


def test_bundled_schemas_work_in_plain_jsonschema(invoke: Invoke, tmp_path: Path) -> None:
    """No registry, no resolver, no network: each file is all a validator needs."""
    folder = _bundled(invoke, tmp_path)
    names = sorted(p.name for p in folder.iterdir())
    assert names == [
        "benchmark-protocol.schema.json",
        "benchmark-run.schema.json",
        "bundle.schema.json",
        "execution-environment.schema.json",
        "implementation.schema.json",
        "workload.schema.json",
    ]
    bundle = json.loads((folder / "bundle.schema.json").read_text("utf-8"))
    for seed in sorted(SEEDS.glob("*.json")):
        assert _jsonschema_errors(bundle, json.loads(seed.read_text("utf-8"))) == [], seed
    workload = json.loads((folder / "workload.schema.json").read_text("utf-8"))
    assert _jsonschema_errors(workload, json.loads((VALID / "workload.json").read_text())) == []
    run = json.loads((folder / "benchmark-run.schema.json").read_text("utf-8"))
    bad = json.loads((INVALID / "bad-name.json").read_text("utf-8"))
    assert _jsonschema_errors(run, bad)
    show = invoke("schema", "show", "workload", "--bundled")
    assert json.loads(show.stdout) == workload


def test_what_only_kernelindex_checks(invoke: Invoke, tmp_path: Path) -> None:
    """A bundle whose protocol was changed after the run was written: its shape is
    fine, so every exported schema accepts it; only validate sees the digest."""
    folder = _bundled(invoke, tmp_path)
    bundle = json.loads((folder / "bundle.schema.json").read_text("utf-8"))
    changed = json.loads((INVALID / "bundle-protocol-mismatch.json").read_text("utf-8"))
    assert _jsonschema_errors(bundle, changed) == []
    run = invoke("validate", INVALID / "bundle-protocol-mismatch.json")
    assert run.exit_code == 1
    assert "does not match the embedded protocol" in run.stdout


@pytest.mark.skipif(not (BIN / "check-jsonschema").exists(), reason="check-jsonschema missing")
def test_bundled_schemas_work_in_check_jsonschema(invoke: Invoke, tmp_path: Path) -> None:
    """Without --base-uri, offline: a bundled file is self-contained."""
    folder = _bundled(invoke, tmp_path)
    command = [str(BIN / "check-jsonschema"), "--schemafile", str(folder / "bundle.schema.json")]
    good = subprocess.run(
        [*command, *map(str, sorted(SEEDS.glob("*.json")))], capture_output=True, check=False
    )
    assert good.returncode == 0, good.stdout + good.stderr
    broken = json.loads((SEEDS / sorted(p.name for p in SEEDS.glob("*.json"))[0]).read_text())
    broken["run"]["spec"]["status"] = "finished"
    (tmp_path / "broken.json").write_text(json.dumps(broken), encoding="utf-8")
    bad = subprocess.run([*command, str(tmp_path / "broken.json")], capture_output=True)
    assert bad.returncode == 1 and b"finished" in bad.stdout + bad.stderr


@pytest.mark.skipif(not (BIN / "check-jsonschema").exists(), reason="check-jsonschema missing")
def test_plain_export_works_in_check_jsonschema_with_a_file_base_uri(
    invoke: Invoke, tmp_path: Path
) -> None:
    """docs/ci.md's command: the packaged files, their folder as --base-uri (file://,
    absolute, ending in /): every relative $ref is read from the folder, offline."""
    out = tmp_path / "exported-schemas"
    assert invoke("schema", "export", out).exit_code == 0
    folder = out / "kernelindex.dev" / "v1alpha1"
    base = folder.as_uri() + "/"
    seeds = [str(p) for p in sorted(SEEDS.glob("*.json"))]
    broken = json.loads(Path(seeds[0]).read_text("utf-8"))
    broken["run"]["spec"]["timing"]["latencyNs"]["median"] = "fast"  # via common.schema.json
    (tmp_path / "broken.json").write_text(json.dumps(broken), encoding="utf-8")

    def check(*args: str) -> subprocess.CompletedProcess[str]:
        command = [str(BIN / "check-jsonschema"), *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)

    schema = ["--schemafile", str(folder / "bundle.schema.json")]
    good = check("--base-uri", base, *schema, *seeds)
    assert good.returncode == 0, good.stdout + good.stderr
    bad = check("--base-uri", base, *schema, str(tmp_path / "broken.json"))
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "'fast' is not of type 'integer'" in bad.stdout
    # Without the final "/", the folder's last segment is replaced: the refs are missing.
    assert check("--base-uri", base[:-1], *schema, seeds[0]).returncode != 0


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.skipif(not (BIN / "pre-commit").exists(), reason="pre-commit missing")
def test_pre_commit_hook_passes_good_records_and_fails_bad_ones(tmp_path: Path) -> None:
    repo = tmp_path / "scratch"
    repo.mkdir()
    _git(repo, "init", "-q")
    shutil.copy(sorted(SEEDS.glob("*.json"))[0], repo / "good.json")
    lines = (VALID / "records.jsonl").read_text("utf-8")
    (repo / "runs.JSONL").write_text(lines, encoding="utf-8")
    (repo / "notes.txt").write_text("not a record", encoding="utf-8")
    _git(repo, "add", ".")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache")}
    command = [
        str(BIN / "pre-commit"),
        "try-repo",
        str(ROOT),
        "kernelindex-validate",
        "--all-files",
    ]

    passed = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "kernelindex validate" in passed.stdout and "Passed" in passed.stdout

    shutil.copy(INVALID / "bad-name.json", repo / "BAD.JSON")
    _git(repo, "add", "BAD.JSON")
    failed = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    # The problem names the line and column it is at, as every format does.
    assert re.search(
        r"BAD\.JSON:\d+:\d+: /metadata/name: 'Liger GeGLU' does not match", failed.stdout
    )
    assert "Failed" in failed.stdout


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.skipif(not (BIN / "pre-commit").exists(), reason="pre-commit missing")
def test_pre_commit_refs_hook_passes_a_run_whose_records_were_committed_earlier(
    tmp_path: Path,
) -> None:
    """The documented --strict-refs set-up failed a correct commit: pre-commit passes only
    the staged run, not the records it references, committed before. The
    kernelindex-validate-refs hook resolves them under --refs-from (the repository) and
    reports only the staged files; a reference to nothing still fails."""
    split = VALID / "refs" / "split"
    repo = tmp_path / "scratch"
    (repo / "results").mkdir(parents=True)
    _git(repo, "init", "-q")
    for path in sorted(split.glob("*.json")):
        if path.name != "run.json":
            shutil.copy(path, repo / "results" / path.name)
    (repo / "package.json").write_text('{"name": "x", "version": "1.0.0"}', "utf-8")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "records")
    shutil.copy(split / "run.json", repo / "results" / "run.json")
    _git(repo, "add", "results/run.json")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache")}
    command = [str(BIN / "pre-commit"), "try-repo", str(ROOT), "kernelindex-validate-refs"]

    passed = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout and "package.json" not in passed.stdout

    record = json.loads((split / "run.json").read_text("utf-8"))
    record["spec"]["workloadDigest"] = "sha256:" + "0" * 64
    (repo / "results" / "run.json").write_text(json.dumps(record), "utf-8")
    _git(repo, "add", "results/run.json")
    failed = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert re.search(
        r"results/run\.json:\d+:\d+: /spec/workloadDigest: workloadDigest sha256:"
        + "0" * 64
        + " refers to no Workload given",
        failed.stdout,
    )
    assert "Failed" in failed.stdout
