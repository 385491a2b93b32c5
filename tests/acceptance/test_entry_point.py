"""The real entry point in a real process: exit statuses, stdin, no traceback.

Kept to a handful: each start-up costs about a second (CliRunner covers the rest).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .support import INVALID, VALID, count_items, example_files, run_subprocess


def test_valid_examples_exit_0() -> None:
    run = run_subprocess(["validate", VALID])
    assert run.exit_code == 0, run.output
    files = example_files(VALID)
    items = sum(count_items(p) for p in files)
    assert run.stdout == f"{items} valid, 0 invalid in {len(files)} files\n"
    assert run.stderr == ""


def test_invalid_exit_1_and_unreadable_exit_2(tmp_path: Path) -> None:
    invalid = run_subprocess(["validate", "p20-above-median.json"], cwd=INVALID)
    assert invalid.exit_code == 1
    assert invalid.stdout.splitlines()[0].startswith(
        "p20-above-median.json:25:9: /spec/measurements/0/value: statistics out of order"
    )
    missing = run_subprocess(["validate", tmp_path / "missing.json", INVALID / "nan.json"])
    assert missing.exit_code == 2
    assert len(missing.stdout.splitlines()) == 3


def test_stdin_jsonl_with_strict_refs_and_a_deep_document() -> None:
    """JSONL on stdin: references resolve across lines; a 100,000-deep line is refused
    at its line, and the lines after it are still read."""
    stream = (VALID / "refs" / "stream.jsonl").read_bytes()
    deep = b"[" * 100_000 + b"]" * 100_000 + b"\n"
    run = run_subprocess(["validate", "--strict-refs", "-"], input=deep + stream)
    assert run.exit_code == 2, run.output
    lines = run.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("<stdin>:1:257: /0/0/")
    assert "nested deeper than" in lines[0]
    assert lines[1] == "5 valid, 0 invalid, 1 unreadable in 1 file"


def test_usage_error_exit_2() -> None:
    run = run_subprocess(["validate"])
    assert run.exit_code == 2
    assert "Usage:" in run.stderr
    assert "Missing argument" in run.stderr


def test_console_script() -> None:
    """The installed ``kernelindex`` script, as users run it."""
    script = shutil.which("kernelindex", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("kernelindex console script not installed next to this Python")
    run = run_subprocess([script, "digest", VALID / "workload.json"], module=False)
    assert run.exit_code == 0
    assert run.stdout.endswith(
        "  Workload  geglu-backward-batch8-hidden4096-intermediate11008-seq4096-bf16\n"
    )


def test_the_exit_skips_collecting_what_lived_to_the_end() -> None:
    """``main`` freezes the surviving objects in an exit handler (the final collections
    then skip them: tens of milliseconds of every run); output is complete regardless.
    An exit handler registered before ``main`` runs after its own, and sees the freeze."""
    code = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: sys.stderr.write(f'frozen {gc.get_freeze_count() > 0}\\n'))\n"
        "from kernelindex_sdk.cli.main import main\n"
        f"main(['validate', {str(VALID)!r}])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith(" invalid in " + f"{len(example_files(VALID))} files\n")
    assert done.stderr == "frozen True\n"
    # A library user's process is left alone: importing the CLI registers nothing.
    quiet = subprocess.run(
        [sys.executable, "-c", code.replace(f"main(['validate', {str(VALID)!r}])\n", "")],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert quiet.stderr == "frozen False\n"
