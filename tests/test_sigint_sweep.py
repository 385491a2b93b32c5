"""``scripts/sigint-sweep``: Ctrl-C at random moments of a real run, each outcome named."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "sigint-sweep"
ONE_VALID = str(sorted((ROOT / "tests" / "examples" / "valid" / "seeds").glob("*.json"))[0])


def _script() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("sigint_sweep", str(SCRIPT))
    spec = importlib.util.spec_from_loader("sigint_sweep", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


OURS_TRACEBACK = (
    'Traceback (most recent call last):\n  File "/x/kernelindex_sdk/cli/main.py", line 1\n'
    "KeyboardInterrupt\n"
)
STARTUP_TRACEBACK = (
    'Traceback (most recent call last):\n  File "/venv/bin/kernelindex", line 3\n'
    '  File "/usr/lib/python3.11/re/__init__.py", line 1\nKeyboardInterrupt\n'
)


@pytest.mark.parametrize(
    ("status", "err", "normal", "outcome"),
    [
        (130, "kernelindex: interrupted\n", 0, "interrupted"),
        (130, "\nkernelindex: interrupted\n", 1, "interrupted"),
        (0, "", 0, "finished"),
        (1, "", 1, "finished"),
        (-2, "", 0, "default action"),
        (-2, "kernelindex compare: note: ...\n", 0, "default action"),  # at exit
        (-2, STARTUP_TRACEBACK, 0, "before kernelindex"),
        (1, OURS_TRACEBACK, 1, "BAD"),  # a traceback in our code is never "finished"
        (130, "kernelindex: interrupted\nmore\n", 0, "BAD"),
        (1, "", 0, "BAD"),  # another status than the timed run's
        (0, "kernelindex: interrupted\n", 0, "BAD"),
    ],
)
def test_each_outcome_is_named(status: int, err: str, normal: int, outcome: str) -> None:
    assert _script()._outcome(status, err, normal) == outcome


def test_a_sweep_of_validate_names_every_outcome_and_finds_nothing_bad() -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--tries", "4", "--window", "0.3", "--", "validate",
         ONE_VALID],
        capture_output=True, text=True, check=False, timeout=120, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    head, summary = done.stdout.strip().splitlines()
    assert f"validate {ONE_VALID}: exit 0 in " in head and head.endswith(" s; 4 tries")
    counted = {part.rsplit(" ", 1)[0]: int(part.rsplit(" ", 1)[1]) for part in summary.split(", ")}
    assert sum(counted.values()) == 4
    assert set(counted) <= {"interrupted", "finished", "before kernelindex", "default action"}
