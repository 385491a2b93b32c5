"""``export liger`` writes what the records hold (#29).

* A run imported from a CSV and edited afterwards (its timing, its time) exported its
  stale source row, exit 0. Now the row is checked against the run: what the run no
  longer says is written from the run's values, with a warning.
* A run without ``sourceNative`` whose workload two of Liger's sweeps reach (Llama-4
  RoPE's ``T`` and ``H`` sweeps) was filed under the bench catalog's one sweep: 24 of
  the 64 RoPE rows of the shared CSV named another x and config than the source, so
  Liger's visualizer drew them on the wrong plot. Now the sweep the record names (its
  ``liger-csv/`` labels) is used, when it gives back the run's workload.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import shared_data
from liger_rows import encode, row, write_csv

from bench_adapters.liger import import_csv
from bench_adapters.liger.export import Exporter

EXAMPLES = Path(__file__).resolve().parent / "examples" / "liger"
EXPORT = [sys.executable, "-m", "kernelindex_sdk.cli.main", "export", "liger"]


def export(records: Path) -> tuple[int, list[dict[str, str]], list[str]]:
    """``kernelindex export liger RECORDS --out -`` as a process: status, rows, stderr lines."""
    done = subprocess.run([*EXPORT, str(records), "--out", "-"], capture_output=True, timeout=120)
    err = done.stderr.decode("utf-8")
    assert "Traceback" not in err
    rows = list(csv.DictReader(io.StringIO(done.stdout.decode("utf-8"), newline="")))
    return done.returncode, rows, err.splitlines()


def edit_stream(stream: Path, edit: Any) -> None:
    """Rewrite a JSON Lines stream, each record through ``edit`` (in place)."""
    lines = []
    for line in stream.read_text("utf-8").splitlines():
        record = json.loads(line)
        edit(record)
        lines.append(json.dumps(record, separators=(",", ":")))
    stream.write_text("\n".join(lines) + "\n", "utf-8")


def runs(record: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if record["kind"] == "BenchmarkRun":
        yield record["spec"]


# --- item 13: an edited run exports its own values -------------------------------------


def test_an_edited_run_exports_its_own_values_and_says_so(tmp_path: Path) -> None:
    edited_line = encode(next(csv.reader([row(x_value="2048")])), csv.QUOTE_ALL)
    untouched = row(x_value="1024")
    source = write_csv(tmp_path / "a.csv", [untouched, edited_line])
    records = tmp_path / "records"
    assert import_csv([source], records, layout="jsonl").problems == []
    stream = records / "liger.jsonl"
    assert "liger-csv/line" in stream.read_text("utf-8"), "the odd quoting rides a label"

    def slower(record: dict[str, Any]) -> None:
        for spec in runs(record):
            if "liger-csv/line" in record["metadata"].get("labels", {}):  # the x=2048 run
                spec["timing"]["latencyNs"]["median"] = 50_500  # was 50_000 (0.05 ms)
                spec["observedAt"] = "2025-01-10T09:30:00.000Z"

    edit_stream(stream, slower)
    status, rows, err = export(records)
    assert status == 0, err
    by_x = {r["x_value"]: r for r in rows}
    edited = by_x["2048"]
    assert edited["y_value_50"] == repr(50_500 / 1e6), "the run's median, not sourceNative's"
    assert (edited["y_value_20"], edited["y_value_80"]) == (repr(0.049), repr(0.051))
    assert edited["timestamp"] == "2025-01-10 09:30:00"
    warnings = [line for line in err if "warning:" in line]
    assert len(warnings) == 1 and warnings[0].startswith(f"{stream}:")
    assert "the run's values no longer match its source row" in warnings[0]
    assert "stale source rows          1" in err
    # The untouched run still gives back its source row byte for byte.
    exporter = Exporter()
    exporter.read([str(records)])
    assert untouched in exporter.rows()


def test_an_edited_run_read_from_a_store_is_said_too(tmp_path: Path) -> None:
    """A warning about a run read from a store (no line to place it on) is printed, as
    the same run's from a file is: none is held back once the rows are written."""
    pytest.importorskip("duckdb")
    source = write_csv(tmp_path / "a.csv", [row(x_value="1024")])
    records = tmp_path / "records"
    assert import_csv([source], records, layout="jsonl").problems == []

    def slower(record: dict[str, Any]) -> None:
        for spec in runs(record):
            spec["timing"]["latencyNs"]["median"] = 50_500

    edit_stream(records / "liger.jsonl", slower)
    store = tmp_path / "runs.kistore"
    added = subprocess.run(
        [*EXPORT[:3], "store", "add", str(records), "--store", str(store)],
        capture_output=True,
        timeout=120,
    )
    assert added.returncode == 0, added.stderr
    (records / "liger.jsonl").unlink()  # nothing left to place the warning on a line of
    status, _, err = export(store)
    assert status == 0, err
    warnings = [line for line in err if "warning:" in line]
    assert len(warnings) == 1 and "no longer match its source row" in warnings[0], err
    assert "stale source rows          1" in err


def test_a_run_moved_to_other_records_exports_theirs(tmp_path: Path) -> None:
    """The provider and GPU a row says come from the run's implementation and
    environment, even where the import kept a spelling label (``nvidia`` in lower case)."""
    odd = row(x_value="1024", gpu_name="nvidia  H100 80GB HBM3")
    other = row(x_value="2048", kernel_provider="huggingface", gpu_name="NVIDIA A100-SXM4-80GB")
    source = write_csv(tmp_path / "a.csv", [odd, other])
    records = tmp_path / "records"
    assert import_csv([source], records, layout="jsonl").problems == []
    stream = records / "liger.jsonl"
    lines = stream.read_text("utf-8").splitlines()
    moved_to = next(
        json.loads(line)["spec"]
        for line in lines
        if '"kind":"BenchmarkRun"' in line and "/huggingface/" in line
    )

    def move(record: dict[str, Any]) -> None:
        labels = record["metadata"].get("labels", {})
        for spec in runs(record):
            if "liger-csv/gpu_name" in labels:  # the odd row's run
                for field in ("environmentDigest", "implementationDigest"):
                    spec[field] = moved_to[field]

    edit_stream(stream, move)
    status, rows, err = export(records)
    assert status == 0, err
    moved = next(r for r in rows if r["x_value"] == "1024")
    assert (moved["kernel_provider"], moved["gpu_name"]) == ("huggingface", "NVIDIA A100-SXM4-80GB")
    warnings = [line for line in err if "warning:" in line]
    assert len(warnings) == 1 and "the run's provider, GPU no longer match" in warnings[0]


# --- item 14: a workload two sweeps reach is exported under the sweep it was in ----------


def strip_source_native(record: dict[str, Any]) -> None:
    for spec in runs(record):
        del spec["sourceNative"]


def sweep_rows(rows: list[dict[str, str]], kernel: str) -> list[tuple[Any, ...]]:
    """What the visualizer plots a row by: kernel, provider, mode, metric, x, config."""
    return sorted(
        (
            r["kernel_provider"],
            r["kernel_operation_mode"],
            r["metric_name"],
            r["x_name"],
            r["x_label"],
            r["x_value"],
            json.dumps(json.loads(r["extra_benchmark_config_str"]), sort_keys=True),
            round(float(r["y_value_50"]), 6),
        )
        for r in rows
        if r["kernel_name"] == kernel
    )


def source_rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text("utf-8"), newline="")))


def check_sweeps(tmp_path: Path, source: Path, kernel: str) -> None:
    """Import, strip ``sourceNative``, export: ``kernel``'s rows are the source's."""
    records = tmp_path / "records"
    assert import_csv([source], records, layout="jsonl").problems == []
    edit_stream(records / "liger.jsonl", strip_source_native)
    status, rows, err = export(records)
    expected = sweep_rows(source_rows(source), kernel)
    assert expected, f"no {kernel} rows in {source}"
    assert sweep_rows(rows, kernel) == expected
    # Every run carries the labels of its row, so every kernel is expressible.
    assert status == 0, err


def test_a_workload_of_two_sweeps_keeps_its_sweep(tmp_path: Path) -> None:
    check_sweeps(tmp_path, EXAMPLES / "two_sweeps.csv", "llama4_rope")


def test_the_shared_rope_sweeps_keep_their_axes(tmp_path: Path) -> None:
    source = shared_data.find("liger", "all_benchmark_data.csv")
    if source is None:
        pytest.skip("shared data liger/all_benchmark_data.csv not present")
    check_sweeps(tmp_path, source, "llama4_rope")
