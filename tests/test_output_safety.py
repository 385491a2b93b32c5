"""Writers never delete what they did not write, and never write over what they read.

``store export`` replaces a whole folder: never one that holds the store it reads,
and with ``--force`` only one it wrote itself (its manifest says what), swapped in at
once so that a kill leaves the old folder or the new one. The other writers that take
``--force`` — ``schema export``, ``export liger``, ``import`` — never write over an
input either. Real processes throughout.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import shared_data
from profiles import variants

duckdb = pytest.importorskip("duckdb")

from tests.store_helpers import COMPLETE, ROOT, STREAM, kernelindex, write_corpus  # noqa: E402

MANIFEST = ".kernelindex-export.json"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("store") / "s.kistore"
    assert kernelindex("store", "add", *COMPLETE, "--store", path).returncode == 0
    return path


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def _export(
    store: Path, out: Path | str, *extra: str, fmt: str = "jsonl"
) -> subprocess.CompletedProcess[str]:
    return kernelindex("store", "export", "--format", fmt, "--out", out, "--store", store, *extra)


@pytest.mark.parametrize(
    "out",
    variants(
        ["{folder}", "{folder}/", "{folder}/../{name}", "{parent}", "{link}", "{store}/inside"],
        quick={2, 4, 5},
    ),
)
def test_export_never_replaces_the_folder_of_its_store(
    out: str, store: Path, tmp_path: Path
) -> None:
    """``--out b --store b/s.kistore --force`` deleted the store and all of ``b``."""
    folder = tmp_path / "b"
    folder.mkdir()
    own = folder / "s.kistore"
    shutil.copyfile(store, own)
    (folder / "notes.txt").write_text("mine\n")
    (tmp_path / "link").symlink_to(folder)
    named = out.format(
        folder=folder, name=folder.name, parent=tmp_path, link=tmp_path / "link", store=own
    )
    before = _tree(tmp_path)
    done = _export(own, named, "--force")
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "nothing written" in lines[0].lower(), lines
    assert f"kernelindex store export: {named}: " in lines[0]
    assert _tree(tmp_path) == before


def test_force_replaces_only_what_export_wrote(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("mine\n")
    refused = _export(store, out, "--force")
    assert refused.returncode == 2
    assert "did not write it" in refused.stderr
    assert _tree(out) == {"mine.txt": b"mine\n"}
    (out / "mine.txt").unlink()
    assert _export(store, out).returncode == 0
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["writer"] == "kernelindex store export" and "records.jsonl" in manifest["files"]
    # Its own output: replaced with --force (jsonl by parquet), never without.
    assert _export(store, out, fmt="parquet").returncode == 2
    assert _export(store, out, "--force", fmt="parquet").returncode == 0
    assert (out / "runs").is_dir() and not (out / "records.jsonl").exists()
    # Something added or changed since: not replaced, even with --force.
    for change in ("added", "changed"):
        before = _tree(out)
        victim = out / "notes.md" if change == "added" else next((out / "runs").rglob("*.parquet"))
        with victim.open("ab") as handle:
            handle.write(b"kept\n")
        kept = _tree(out)
        done = _export(store, out, "--force")
        assert done.returncode == 2, done.stderr
        assert "not replaced, even with --force" in done.stderr
        assert _tree(out) == kept
        if change == "added":
            victim.unlink()
        else:
            victim.write_bytes(before[str(victim.relative_to(out))])
    assert _export(store, out, "--force").returncode == 0


def test_a_linked_out_is_replaced_where_it_points_and_nothing_is_left(
    store: Path, tmp_path: Path
) -> None:
    """A symlinked ``--out`` left a ``.DIR.old.*`` link behind."""
    real = tmp_path / "real"
    assert _export(store, real).returncode == 0
    link = tmp_path / "lake"
    link.symlink_to(real)
    done = _export(store, link, "--force", fmt="parquet")
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert (real / "runs").is_dir() and not (real / "records.jsonl").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lake", "real"]
    assert oct(real.stat().st_mode & 0o777) == oct(0o777 & ~_umask())


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _whole(out: Path, old: dict[str, bytes]) -> str:
    """``old`` when ``out`` is that very folder, ``new`` when it is a whole export (every
    file its manifest lists, of that size, and nothing else)."""
    tree = _tree(out)
    if tree == old:
        return "old"
    files = json.loads(tree[MANIFEST])["files"]
    assert {name: len(data) for name, data in tree.items() if name != MANIFEST} == files
    return "new"


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT])
@pytest.mark.parametrize(
    "moments",
    # Eight moments in all: one in four in the quick run, the rest under slow.
    variants([(0, 4), (2, 6), (1, 3, 5, 7)], quick={0}, ids=["fourths", "even", "odd"]),
)
def test_a_killed_export_leaves_the_old_folder_or_the_new_one(
    how: signal.Signals, moments: tuple[int, ...], tmp_path: Path
) -> None:
    """Killed (``kill -9``) or interrupted (Ctrl-C) at many moments of an export with
    ``--force`` over an earlier one: the folder is the old one or the new one, whole."""
    source = tmp_path / "s.kistore"
    corpus = write_corpus(tmp_path / "c.jsonl", 600)
    assert kernelindex("store", "add", corpus, "--store", source).returncode == 0
    out = tmp_path / "out"
    assert _export(source, out).returncode == 0
    old = _tree(out)
    command = [sys.executable, "-m", "kernelindex_sdk.cli.main", "store", "export"]
    command += ["--format", "parquet", "--out", str(out), "--store", str(source), "--force"]
    started = time.monotonic()
    subprocess.run(command, check=True, capture_output=True)
    duration = time.monotonic() - started
    assert _export(source, out, "--force").returncode == 0
    outcomes = []
    for step in moments:
        victim = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
        )
        time.sleep(duration * (0.3 + 0.1 * step))
        os.killpg(victim.pid, how)
        victim.communicate(timeout=60)  # (an interrupt during start-up may say so)
        outcomes.append(_whole(out, old))
        if outcomes[-1] == "new":
            assert _export(source, out, "--force").returncode == 0
        if how == signal.SIGINT:  # an interrupted export cleans up after itself
            assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl", "out", "s.kistore"]
    assert "old" in outcomes


# ------------------------------------------------------------------ the other writers


def test_export_liger_never_writes_over_an_input(store: Path, tmp_path: Path) -> None:
    """``export liger s.kistore --out s.kistore --force`` made the store a CSV."""
    own = tmp_path / "s.kistore"
    shutil.copyfile(store, own)
    records = tmp_path / "records"
    shutil.copytree(Path(STREAM).parent, records)
    before = _tree(tmp_path)
    cases: list[list[str | Path]] = [
        [own, "--out", own],
        [own, "--out", tmp_path / "." / "s.kistore"],
        [records / "stream.jsonl", "--out", records / "stream.jsonl"],
        [records, "--out", records / "all.json"],  # read back as records by the next walk
    ]
    for args in cases:
        done = kernelindex("export", "liger", *args, "--force")
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.splitlines()) == 1 and "input" in done.stderr, done.stderr
    assert _tree(tmp_path) == before


def test_import_never_writes_over_an_input(tmp_path: Path) -> None:
    """``import liger DIR/liger.jsonl --out DIR --layout jsonl --force`` replaced its
    own input with the records."""
    out = tmp_path / "out"
    out.mkdir()
    shutil.copyfile(shared_data.require("liger", "all_benchmark_data.csv"), out / "liger.jsonl")
    kernelbench = tmp_path / "kb"
    shutil.copytree(shared_data.require("kernelbench"), kernelbench)
    before = _tree(tmp_path)
    cases: list[list[str | Path]] = [
        ["liger", out / "liger.jsonl", "--out", out, "--layout", "jsonl"],
        ["kernelbench", kernelbench, "--out", kernelbench / "records"],
        ["kernelbench", kernelbench, "--out", kernelbench],
    ]
    for args in cases:
        done = kernelindex("import", *args, "--force")
        assert done.returncode == 2, done.stderr[-2000:]
        assert "input" in done.stderr.splitlines()[-1], done.stderr
    assert _tree(tmp_path) == before


def test_schema_export_never_writes_over_the_packaged_schemas(tmp_path: Path) -> None:
    """Run from a copy of the package: ``schema export --bundled --force schemas/`` in
    its own folder would replace the very schemas it loads."""
    site = tmp_path / "site"
    shutil.copytree(ROOT / "kernelindex_sdk", site / "kernelindex_sdk")
    shutil.copytree(ROOT / "schemas", site / "schemas")
    before = _tree(site / "schemas")
    command = [sys.executable, "-m", "kernelindex_sdk.cli.main", "schema", "export"]
    for extra in (["--bundled", "--force"], ["--force"], []):
        done = subprocess.run(
            [*command, *extra, "schemas/"], capture_output=True, text=True, cwd=site
        )
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.splitlines()) == 1 and "packaged schema" in done.stderr
    assert _tree(site / "schemas") == before


def test_schema_export_force_replaces_only_schemas(tmp_path: Path) -> None:
    out = tmp_path / "exported"
    assert kernelindex("schema", "export", out).returncode == 0
    workload = out / "kernelindex.dev" / "v1alpha1" / "workload.schema.json"
    # An earlier export of the other form: replaced with --force.
    assert kernelindex("schema", "export", "--bundled", "--force", out).returncode == 0
    assert "$id" not in json.loads(workload.read_text())
    # Anything else at its name: never replaced.
    workload.write_text('{"title": "my notes"}\n')
    done = kernelindex("schema", "export", "--force", out)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[0] == (
        f"{workload}: exists and is no kernelindex schema of that kind: not replaced, even"
        " with --force (schema export did not write it)"
    )
    assert workload.read_text() == '{"title": "my notes"}\n'
