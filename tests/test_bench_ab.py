"""``benchmarks/bench_ab.py``, the interleaved A/B behind the end-to-end figures:
a smoke run on a few lines, and its refusal to time commands that reject the input."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import seed_paths

pytest.importorskip("jsonschema_rs")
pytest.importorskip("orjson")

ROOT = Path(__file__).resolve().parents[1]


def _lines(path: Path, extra: str = "") -> Path:
    bundles = [json.loads(p.read_text(encoding="utf-8")) for p in seed_paths()]
    text = "".join(json.dumps(b, separators=(",", ":"), ensure_ascii=False) + "\n" for b in bundles)
    path.write_text(text * 3 + extra, encoding="utf-8")
    return path


def _bench(lines: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_ab.py"), "--tree", f"here={ROOT}",
         "--lines", str(lines), "--repeats", "2", *args],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip


def test_the_ab_benchmark_times_each_checkout_against_the_bare_loop(tmp_path: Path) -> None:
    done = _bench(_lines(tmp_path / "l.jsonl"), "--count", "10")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "10 JSON Lines bundles, 2 interleaved repeats" in done.stdout
    rows = dict(re.findall(r"^\| (.+?) \|.*\| ([0-9.]+)× \|$", done.stdout, re.MULTILINE))
    assert set(rows) == {"validate --jobs 1, here", "bare loop"}
    assert rows["bare loop"] == "1.00"


def test_nothing_is_timed_when_a_command_rejects_a_line(tmp_path: Path) -> None:
    done = _bench(_lines(tmp_path / "l.jsonl", extra='{"run": {}, "run": {}}\n'))
    assert done.returncode == 1
    assert "nothing timed" in done.stdout and "×" not in done.stdout


def _folder(path: Path, extra: str | None = None) -> Path:
    path.mkdir()
    for seed in seed_paths():
        (path / seed.name).write_bytes(seed.read_bytes())
    if extra is not None:
        (path / "zz-extra.json").write_text(extra, encoding="utf-8")
    return path


def test_files_mode_times_folder_and_one_file_per_checkout(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "files")
    # One repeat: each starts ajv twice where benchmarks/node_modules has it (~1 s each).
    done = _bench(
        _lines(tmp_path / "l.jsonl"), "--count", "4", "--files", str(folder), "--repeats", "1"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{folder}: 4 files, 1 interleaved repeats" in done.stdout
    rows = dict(re.findall(r"^\| (.+?) \| ([0-9.]+) s \|", done.stdout, re.MULTILINE))
    assert {"validate 4 files, here", "validate one file, here", "python -c pass"} <= set(rows)
    if (ROOT / "benchmarks" / "node_modules" / ".bin" / "ajv").exists():
        assert {"ajv-cli, 4 files", "ajv-cli, one file"} <= set(rows)
        ratio = re.search(
            r"^\| validate 4 files, here \| [0-9.]+ s \| ([0-9.]+)× \| [0-9.]+ s \| ([0-9.]+)× \|$",
            done.stdout, re.MULTILINE,
        )  # fmt: skip
        assert ratio is not None


def test_files_mode_times_nothing_when_a_file_is_rejected(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "files", extra='{"run": {}, "run": {}}')
    done = _bench(_lines(tmp_path / "l.jsonl"), "--count", "4", "--files", str(folder))
    assert done.returncode == 1
    assert "does not accept every file: nothing timed" in done.stdout
    assert f"{folder}: " not in done.stdout


def test_the_writers_benchmark_prints_a_ratio_per_writer_and_checkout(tmp_path: Path) -> None:
    """``benchmarks/bench_writers.py``, the writers table: each writer's lines
    validated by each checkout, as a ratio to the bare loop in the same repeat."""
    writers = 'orjson.dumps;json.dumps(d);json.dumps(separators=(",", ":"))'
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_writers.py"), "--tree", f"here={ROOT}",
         "--lines", str(_lines(tmp_path / "l.jsonl")), "--count", "6", "--repeats", "1",
         "--writers", writers],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    rows = re.findall(r"^\| `(.+?)` \| ([0-9.]+)× \| ([0-9.]+) s \|$", done.stdout, re.MULTILINE)
    assert [row[0] for row in rows] == writers.split(";")
    # Headed by the command that made it, so a pasted table says how to make it again.
    assert done.stdout.startswith("`python benchmarks/bench_writers.py --tree here=")
    assert "| writer of the JSON Lines | here | bare loop |" in done.stdout


def test_the_per_kind_bare_loop_checks_records_one_per_line(tmp_path: Path) -> None:
    """``bare_loop_kinds.py``, the peer of records one per line, validates what
    ``make_record_lines.py`` makes (``import liger --layout jsonl`` of a CSV copied): it
    accepts every record and refuses one of no kind or broken in its schema."""
    lines = tmp_path / "records.jsonl"
    made = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "make_record_lines.py"), "--copies", "2",
         "--csv", str(ROOT / "tests" / "examples" / "liger" / "good.csv"), str(lines)],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    kinds = {json.loads(line)["kind"] for line in lines.read_text().splitlines()}
    assert {"BenchmarkRun", "Workload", "BenchmarkProtocol"} <= kinds
    schemas = tmp_path / "schemas"
    subprocess.run(
        [sys.executable, "-m", "kernelindex_sdk.cli.main", "schema", "export", "--bundled",
         str(schemas)],
        capture_output=True, check=True, timeout=120,
    )  # fmt: skip
    folder = schemas / "kernelindex.dev" / "v1alpha1"

    def bare(path: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / "bare_loop_kinds.py"), str(folder),
             str(path)],
            capture_output=True, text=True, check=False, timeout=120,
        )  # fmt: skip

    valid = bare(lines)
    count = len(lines.read_text().splitlines())
    assert (valid.returncode, valid.stdout) == (0, f"{count} valid, 0 invalid\n")
    first = json.loads(lines.read_text().splitlines()[0])
    broken = tmp_path / "broken.jsonl"
    odd = [{**first, "kind": "Nothing"}, {**first, "spec": 1}]
    broken.write_text("".join(json.dumps(record) + "\n" for record in odd))
    refused = bare(broken)
    assert (refused.returncode, refused.stdout) == (1, "0 valid, 2 invalid\n")
