"""Faults, with real processes and files: kills, signals, special files, closed output.

Each test runs the installed entry point (``python -m kernelindex_sdk.cli.main``) in
its own session, so a test can signal the whole process group and check that no
worker outlives the run, and kills the group if anything hangs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from kernelindex_sdk.schema.schemafiles import export_schemas

from .support import SEEDS, finish

COMMAND = [sys.executable, "-m", "kernelindex_sdk.cli.main"]
#: Run as a user for whom mode 000 means something (root reads anything otherwise).
WITHOUT_DAC = [
    "setpriv",
    "--bounding-set=-dac_override,-dac_read_search",
    "--inh-caps=-dac_override,-dac_read_search",
    "--",
]


def _start(args: Sequence[str], **options: object) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*COMMAND, *args],
        stdout=options.pop("stdout", subprocess.PIPE),  # type: ignore[arg-type]
        stderr=subprocess.PIPE,
        start_new_session=True,
        **options,  # type: ignore[call-overload]
    )


def _run(
    args: Sequence[str], prefix: Sequence[str] = (), **options: object
) -> tuple[int, str, str]:
    process = subprocess.Popen(
        [*prefix, *COMMAND, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        **options,  # type: ignore[call-overload]
    )
    return finish(process)


def _living(group: int) -> list[int]:
    """Processes of the group that have not exited (zombies waiting for init aside)."""
    alive = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            alive.append(int(entry))
    return alive


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(word) for word in text.split()]


def _wait_for_workers(process: subprocess.Popen[bytes], count: int = 2) -> list[int]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = _children(process.pid)
        if len(found) >= count:
            return found
        if process.poll() is not None:
            break
        time.sleep(0.002)
    os.killpg(process.pid, signal.SIGKILL)
    pytest.fail("the workers never started")


def _gone(group: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while _living(group):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


@pytest.fixture(scope="module")
def big_jsonl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """~25 MB of JSON Lines: several seconds of work for two workers, however fast
    valid lines become. Every eighth line has an unknown member, and each such line
    is explained by the reference engine (milliseconds a line); valid lines alone
    took under a second once the quick path came (#14), and a signal sent after the
    workers started could arrive after the run had ended."""
    seed = json.loads(sorted(SEEDS.glob("*.json"))[0].read_text("utf-8"))
    valid = json.dumps(seed)
    invalid = json.dumps({**seed, "unexpected": 1})
    path = tmp_path_factory.mktemp("big") / "big.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        for number in range(11_000):
            handle.write((invalid if number % 8 == 0 else valid) + "\n")
    return path


# --------------------------------------------------------------------------- workers


def test_a_killed_worker_ends_the_run_in_one_line(big_jsonl: Path) -> None:
    process = _start(["validate", "--jobs", "2", str(big_jsonl)])
    victim = _wait_for_workers(process)[0]
    os.kill(victim, signal.SIGKILL)
    started = time.monotonic()
    status, out, err = finish(process)
    assert time.monotonic() - started < 10
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"kernelindex validate: worker process {victim} was killed by")
    assert "SIGKILL" in lines[0] and str(big_jsonl) in lines[0]
    assert lines[0].endswith("(rerun with --jobs 1)")
    assert "valid" not in out  # no summary pretending the run was complete
    assert _gone(process.pid)


def test_ctrl_c_exits_130_and_ends_the_workers(big_jsonl: Path) -> None:
    process = _start(["validate", "--jobs", "2", str(big_jsonl)])
    _wait_for_workers(process)
    os.killpg(process.pid, signal.SIGINT)  # what a terminal sends: the whole group
    status, _, err = finish(process)
    # Together, so that a failure shows what was said (one run in a loaded suite ended 1).
    assert (status, err.strip()) == (130, "kernelindex: interrupted")
    assert _gone(process.pid)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["TERM", "KILL"])
def test_killing_the_parent_ends_the_workers_at_once(big_jsonl: Path, sig: int) -> None:
    process = _start(["validate", "--jobs", "2", str(big_jsonl)])
    workers = _wait_for_workers(process)
    os.kill(process.pid, sig)
    status, _, err = finish(process)
    assert status == -sig if sig == signal.SIGKILL else status == 128 + sig
    assert _gone(process.pid, within=2.0), workers
    assert "Error" not in err


# --------------------------------------------------------------------------- walking


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """good.json, a symlinked folder holding an invalid record, a FIFO, a locked folder."""
    root = tmp_path / "tree"
    (root / "locked").mkdir(parents=True)
    shutil.copy(sorted(SEEDS.glob("*.json"))[0], root / "good.json")
    (root / "locked" / "x.json").write_text("{}", encoding="utf-8")
    (root / "locked").chmod(0)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "BAD.JSON").write_text('{"apiVersion": "kernelindex.dev/v1alpha1"}', "utf-8")
    (root / "linked").symlink_to(elsewhere)
    os.mkfifo(root / "p.json")
    return root


@pytest.fixture
def unlock(tree: Path) -> Iterator[None]:
    yield
    (tree / "locked").chmod(0o755)


@pytest.mark.usefixtures("unlock")
@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs util-linux setpriv")
def test_nothing_under_a_walked_path_is_skipped_silently(tree: Path) -> None:
    runs = [_run(["validate", "--jobs", str(jobs), str(tree)], WITHOUT_DAC) for jobs in (1, 2)]
    assert runs[0] == runs[1]
    status, out, _ = runs[0]
    assert status == 2
    lines = out.splitlines()
    assert f"{tree}/locked: cannot read directory: permission denied" in lines
    assert f"{tree}/p.json: is a FIFO (named pipe), not a regular file: not read" in lines
    assert any(line.startswith(f"{tree}/linked/BAD.JSON:") for line in lines)
    assert lines[-1] == "1 valid, 1 invalid, 2 unreadable in 2 files"


def test_a_symlink_loop_is_one_line_for_every_job_count(tmp_path: Path) -> None:
    shutil.copy(sorted(SEEDS.glob("*.json"))[0], tmp_path / "good.json")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "up").symlink_to(tmp_path)
    runs = [_run(["validate", "--jobs", str(jobs), str(tmp_path)]) for jobs in (1, 2)]
    assert runs[0] == runs[1]
    status, out, _ = runs[0]
    assert status == 2
    assert out.splitlines() == [
        f"{tmp_path}/sub/up: symbolic link loop: leads back to a directory being walked;"
        " not walked again",
        "1 valid, 0 invalid, 1 unreadable in 1 file",
    ]


@pytest.mark.parametrize("command", ["validate", "digest", "canonicalize"])
def test_devices_and_fifos_named_are_refused(tmp_path: Path, command: str) -> None:
    os.mkfifo(tmp_path / "p.json")
    for special, what in (
        ("/dev/zero", "a character device"),
        (str(tmp_path / "p.json"), "a FIFO"),
    ):
        status, _, _ = result = _run([command, special])
        assert status == 2
        text = result[1] + result[2]
        assert f"{special}: is {what}" in text and "use - for standard input" in text


def test_extensions_match_in_any_case_when_walked(tmp_path: Path) -> None:
    seed = sorted(SEEDS.glob("*.json"))[0].read_text("utf-8")
    (tmp_path / "A.JSON").write_text(seed, "utf-8")
    (tmp_path / "b.JSONL").write_text(json.dumps(json.loads(seed)) + "\n", "utf-8")
    (tmp_path / "c.NdJson").write_text(json.dumps(json.loads(seed)) + "\n", "utf-8")
    status, out, _ = _run(["validate", str(tmp_path)])
    assert (status, out.splitlines()[-1]) == (0, "3 valid, 0 invalid in 3 files")


def test_a_document_above_the_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with open(path, "wb") as handle:
        handle.truncate(300 << 20)  # sparse: costs nothing unless read
    status, out, _ = _run(["validate", str(path)])
    assert status == 2
    assert out.splitlines()[0] == (
        f"{path}: 300 MiB: larger than 256 MiB, the limit for one document: not read"
    )


# --------------------------------------------------------------------------- schema diff


@pytest.fixture
def schema_sides(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """OLD and NEW, the packaged schemas exported twice; whatever the test locks under
    NEW is unlocked afterwards."""
    old, new = tmp_path / "old", tmp_path / "new"
    export_schemas(old)
    export_schemas(new)
    yield old, new
    _unlock(new)


def _unlock(folder: Path) -> None:
    folder.chmod(0o755)
    for child in folder.iterdir():
        if child.is_dir() and not child.is_symlink():
            _unlock(child)


def _schema_diff(*args: object) -> tuple[int, str, str]:
    return _run(["schema", "diff", *map(str, args), "--mode", "full"], WITHOUT_DAC)


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs util-linux setpriv")
@pytest.mark.parametrize("mode", [0o000, 0o300, 0o100], ids=["000", "300", "100"])
def test_a_schema_folder_it_cannot_list_is_exit_2_not_a_removed_kind(
    schema_sides: tuple[Path, Path], mode: int
) -> None:
    """Bundle's schema moved into a subfolder NEW's reader cannot list: it used to be
    passed over without a word, and Bundle reported removed (KIND_REMOVED, exit 1)."""
    old, new = schema_sides
    version = new / "kernelindex.dev" / "v1alpha1"
    hidden = version / "hidden"
    hidden.mkdir()
    (version / "bundle.schema.json").rename(hidden / "bundle.schema.json")
    hidden.chmod(mode)
    status, out, err = _schema_diff(old, new)
    assert (status, out) == (2, "")
    assert err == f"kernelindex schema diff: {hidden}: cannot read directory: permission denied\n"


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs util-linux setpriv")
def test_a_schema_folder_it_cannot_list_is_never_compatible(
    schema_sides: tuple[Path, Path],
) -> None:
    """A folder of other kinds (another version) NEW's reader cannot list: it used to
    be passed over and the verdict was "compatible", exit 0."""
    old, new = schema_sides
    beta = new / "kernelindex.dev" / "v1beta1"
    beta.mkdir()
    shutil.copy(new / "kernelindex.dev" / "v1alpha1" / "workload.schema.json", beta)
    beta.chmod(0)
    status, out, err = _schema_diff(old, new)
    assert (status, out) == (2, "")
    assert err == f"kernelindex schema diff: {beta}: cannot read directory: permission denied\n"
    status, out, err = _schema_diff(old, new / "kernelindex.dev")
    assert (status, out) == (2, "")
    assert err == f"kernelindex schema diff: {beta}: cannot read directory: permission denied\n"


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs util-linux setpriv")
@pytest.mark.parametrize("mode", [0o000, 0o600], ids=["000", "600"])
def test_a_schema_in_a_folder_it_cannot_search_is_named(
    schema_sides: tuple[Path, Path], mode: int
) -> None:
    """A schema file (or a folder) inside a folder that cannot be searched: it used to
    be reported as "cannot write output: Permission denied"."""
    old, new = schema_sides
    version = new / "kernelindex.dev" / "v1alpha1"
    named = version / "workload.schema.json"
    version.chmod(mode)
    status, out, err = _schema_diff(old / "kernelindex.dev" / "v1alpha1" / named.name, named)
    assert (status, out) == (2, "")
    assert err == f"kernelindex schema diff: {named}: permission denied\n"
    (new / "kernelindex.dev").chmod(mode)
    status, out, err = _schema_diff(old, version)
    assert (status, out) == (2, "")
    assert err == f"kernelindex schema diff: {version}: permission denied\n"


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs util-linux setpriv")
def test_a_schema_folder_it_cannot_read_at_all_is_named(schema_sides: tuple[Path, Path]) -> None:
    """It used to say "no *.schema.json files in this folder"."""
    old, new = schema_sides
    new.chmod(0)
    status, out, err = _schema_diff(old, new)
    assert (status, out) == (2, "")
    assert err == f"kernelindex schema diff: {new}: cannot read directory: permission denied\n"


# --------------------------------------------------------------------------- output


def _forged(tmp_path: Path) -> Path:
    bundle = json.loads(sorted(SEEDS.glob("*.json"))[0].read_text("utf-8"))
    bundle["run"]["metadata"]["name"] = "x\nsha256:0000  BenchmarkRun  forged\x1b[2J"
    bundle["run"]["spec"]["bogus\n\u202e"] = "é"
    path = tmp_path / "new\nline\x1b.json"
    path.write_text(json.dumps(bundle), encoding="utf-8")
    return path


def test_nothing_from_input_can_forge_a_line(tmp_path: Path) -> None:
    path = _forged(tmp_path)
    escaped = str(path).replace("\n", "\\n").replace("\x1b", "\\x1b")
    status, out, _ = _run(["digest", str(path)])
    assert status == 0
    lines = out.splitlines()
    assert len(lines) == 3
    assert lines[0].endswith("  BenchmarkRun  x\\nsha256:0000  BenchmarkRun  forged\\x1b[2J")
    status, out, _ = _run(["validate", str(path)])
    assert status == 1
    lines = out.splitlines()
    assert len(lines) == 3
    assert all(re.match(rf"{re.escape(escaped)}:\d+:\d+: /run/", line) for line in lines[:2])
    assert "/run/spec/bogus\\n\\u202e: unknown field" in lines[1]
    assert "\x1b" not in out


def test_output_stays_correct_when_only_ascii_can_be_written(tmp_path: Path) -> None:
    path = _forged(tmp_path)
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    status, out, _ = _run(["validate", "--format", "json", str(path)], env=env)
    assert status == 1
    report = json.loads(out)
    assert report["invalid"] == 1
    assert any("\u202e" in problem["pointer"] for problem in report["problems"])
    status, out, _ = _run(["validate", str(path)], env=env)
    assert status == 1 and out.isascii() and len(out.splitlines()) == 3


def test_a_closed_stdout_is_a_quiet_exit(big_jsonl: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"broken": \n' * 20_000, encoding="utf-8")
    for jobs in ("1", "2"):
        process = _start(["validate", "--jobs", jobs, str(bad)])
        assert process.stdout is not None
        process.stdout.readline()
        process.stdout.close()  # as `| head -1` does
        status, _, err = finish(process)
        assert (status, err) == (141, "")


def test_a_full_stdout_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"broken": \n' * 20_000, encoding="utf-8")
    with open("/dev/full", "wb") as full:
        process = _start(["validate", str(bad)], stdout=full)
        status, _, err = finish(process)
    assert status == 2
    assert err == "kernelindex: error: cannot write output: No space left on device\n"
