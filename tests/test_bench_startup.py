"""``benchmarks/bench_startup.py``, the start-up ratio: a smoke run, and its refusal
to time a command that rejects the file."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import seed_paths

pytest.importorskip("jsonschema_rs")

ROOT = Path(__file__).resolve().parents[1]


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_startup.py"), "--tree", f"here={ROOT}",
         "--repeats", "2", *args],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip


def test_the_startup_benchmark_gives_validate_as_a_multiple_of_the_interpreter() -> None:
    done = _bench(str(seed_paths()[0]))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 interleaved repeats" in done.stdout
    rows = dict(
        re.findall(r"^\| (.+?) \| [0-9.]+ ms \| [0-9.]+ ms \| ([0-9.]+)×;", done.stdout, re.M)
    )
    assert set(rows) == {"python -c pass", "validate one file, here"}
    assert rows["python -c pass"] == "1.00"
    assert float(rows["validate one file, here"]) > 1.0


def test_nothing_is_timed_when_validate_rejects_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"apiVersion": "kernelindex.dev/v1alpha1", "kind": "Nope"}', encoding="utf-8")
    done = _bench(str(bad))
    assert done.returncode == 1
    assert "exited 1" in done.stderr and "×" not in done.stdout
