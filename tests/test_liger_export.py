"""``kernelindex export liger``: records back to Liger's CSV (#11).

The law: importing a Liger CSV and exporting the records gives back the source's
distinct data lines byte for byte — on the shared CSV, on odd spellings of our own, and
on generated CSVs (a property test). Runs not imported from a CSV (``bench liger``'s)
get the row computed from their structured fields.
"""

from __future__ import annotations

import csv
import io
import json
import string
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import shared_data
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from liger_rows import CELLS, HEADER, encode, good_rows, row, write_csv
from profiles import examples

from bench_adapters.cli import run_liger_export
from bench_adapters.liger import LIGER_HEADER, import_csv
from bench_adapters.liger.export import Exporter, csv_bytes
from bench_adapters.liger_bench.assemble import Assembler
from bench_adapters.liger_bench.catalog import load_bench_catalog
from bench_adapters.liger_bench.plan import Request, plan
from bench_adapters.liger_bench.probes import DeviceInfo, TimerSettings
from bench_adapters.liger_bench.runner import Outcome

EXAMPLES = Path(__file__).resolve().parent / "examples" / "liger"


def data_lines(text: str) -> set[str]:
    """The distinct records of a CSV text, without line endings (records may span lines)."""
    records: list[str] = []
    pending = ""
    for line in io.StringIO(text, newline="").readlines():
        pending += line
        if pending.count('"') % 2 == 0:
            records.append(pending.removesuffix("\n").removesuffix("\r"))
            pending = ""
    return set(records[1:]) - {""}


def exported(directory: Path) -> list[str]:
    exporter = Exporter()
    exporter.read([str(directory)])
    assert exporter.summary.problems == []
    return exporter.rows()


def round_trip(tmp_path: Path, source: Path, layout: str = "jsonl") -> tuple[set[str], set[str]]:
    out = tmp_path / f"out-{source.stem}-{layout}"
    summary = import_csv([source], out, layout=layout)  # type: ignore[arg-type]
    assert summary.problems == [], summary.problems
    return set(exported(out)), data_lines(source.read_bytes().decode("utf-8"))


# --- the law on real and hand-made CSVs ---------------------------------------------


def test_the_shared_csv_comes_back_byte_for_byte(tmp_path: Path) -> None:
    source = shared_data.find("liger", "all_benchmark_data.csv")
    if source is None:
        pytest.skip("shared data liger/all_benchmark_data.csv not present")
    out = tmp_path / "records"
    import_csv([source], out, layout="jsonl")
    err = io.StringIO()
    assert run_liger_export([str(out)], str(tmp_path / "back.csv"), err=err) == 0, err.getvalue()
    back = (tmp_path / "back.csv").read_bytes()
    original = source.read_bytes()
    assert back.split(b"\r\n")[0] == original.split(b"\r\n")[0], "Liger's header"
    assert data_lines(back.decode()) == data_lines(original.decode())
    assert "rows written               2448" in err.getvalue()
    # What Liger's visualizer does with it: filter, json.loads the config, group.
    rows = list(csv.DictReader(io.StringIO(back.decode(), newline="")))
    assert {r["kernel_provider"] for r in rows if r["kernel_name"] == "geglu"} >= {"liger"}
    assert all(isinstance(json.loads(r["extra_benchmark_config_str"]), dict) for r in rows)


@pytest.mark.parametrize("layout", ["bundles", "jsonl"])
@pytest.mark.parametrize("name", ["good.csv", "amd.csv", "model_config.csv", "unknown.csv"])
def test_example_csvs_come_back(tmp_path: Path, name: str, layout: str) -> None:
    back, source = round_trip(tmp_path, EXAMPLES / name, layout)
    assert back == source


def test_odd_spellings_come_back(tmp_path: Path) -> None:
    names = list(LIGER_HEADER)
    rows = [
        row(x_value="4096.0", y_value_50="5", y_value_20="4", y_value_80="6"),  # numbers
        row(x_value="2048", gpu_name="nvidia  H100 80GB HBM3"),  # vendor word, spaces
        row(x_value="1024", timestamp="2025-01-10T08:00:00.250Z", liger_version=""),
        row(x_value="512", kernel_name=" rms_norm ", x_label='a\r\nlabel, "quoted"'),
        row(x_value="256", extra_benchmark_config_str='{"dtype":"torch.bfloat16",  "M":2048}'),
        encode([CELLS[n] if n != "x_value" else "128" for n in names], csv.QUOTE_ALL),
        # Two sweeps reaching one workload: the second row's spelling rides its run.
        row(x_name="T", x_label="tokens", x_value="64", extra_benchmark_config_str='{"H": 64}'),
        row(
            x_name="H",
            x_label="hidden",
            x_value="64",
            extra_benchmark_config_str='{"T": 64}',
            timestamp="2025-01-10 08:00:01",
        ),
    ]
    source = write_csv(tmp_path / "odd.csv", rows, ending="\n")
    back, expected = round_trip(tmp_path, source)
    assert back == expected == set(rows)


def test_reordered_columns_come_back_under_liger_header(tmp_path: Path) -> None:
    fields = next(csv.reader([row()]))
    order = list(reversed(range(len(fields))))
    text = encode([LIGER_HEADER[i] for i in order] + ["note"]) + "\n"
    text += encode([fields[i] for i in order] + ["extra"]) + "\n"
    (tmp_path / "reordered.csv").write_text(text, "utf-8")
    back, _ = round_trip(tmp_path, tmp_path / "reordered.csv")
    assert back == {row()}


# --- runs measured by kernelindex bench liger ---------------------------------------

H200 = DeviceInfo(
    name="NVIDIA H200",
    capability=(9, 0),
    memory_bytes=150_754_820_096,
    software={"cuda": "13.0", "torch": "2.11.0", "triton": "3.6.0", "liger-kernel": "0.8.5"},
)


def bench_bundles(overrides: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Bundles exactly as ``bench liger`` assembles them: geglu at T=4096, speed and memory."""
    catalog = load_bench_catalog()
    request = Request(
        kernels=("geglu",),
        passes=("backward",),
        metrics=("speed", "memory"),
        x_values=(4096,),
        overrides=overrides or {},
    )
    assembler = Assembler(catalog.liger, H200, TimerSettings(), 10, "0.1.0")
    bundles = []
    for item in plan(request, catalog):
        values = (70_400_000, 70_513_954, 70_600_000)
        if item.metric == "memory":
            values = (1_000_000_000, 1_048_576_000, 1_100_000_000)
        passed = Outcome(item, "liger", "passed", None, values, {}, "2026-01-02T03:04:05.678Z")
        failed = Outcome(item, "huggingface", "oom", "out of memory", None, {}, passed.observed_at)
        bundles += [assembler.bundle(passed), assembler.bundle(failed)]
    return bundles


def test_bench_runs_get_the_row_liger_would_write(tmp_path: Path) -> None:
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(bench_bundles({"bsz": 4})), "utf-8")
    out, err = io.BytesIO(), io.StringIO()
    assert run_liger_export([str(path)], "-", out=out, err=err) == 0, err.getvalue()
    assert "left out, not passed       2 oom" in err.getvalue()
    rows = list(csv.DictReader(io.StringIO(out.getvalue().decode(), newline="")))
    assert [r["metric_name"] for r in rows] == ["memory", "speed"]
    memory, speed = rows
    template = load_bench_catalog().kernels["geglu"].sweep.config
    for found in rows:
        assert json.loads(found["extra_benchmark_config_str"]) == {**template, "bsz": 4}
        assert (found["kernel_name"], found["kernel_provider"]) == ("geglu", "liger")
        assert (found["kernel_operation_mode"], found["x_name"]) == ("backward", "T")
        assert (found["x_label"], found["x_value"]) == ("sequence length", "4096")
        assert found["gpu_name"] == "NVIDIA H200"
        assert found["timestamp"] == "2026-01-02 03:04:05"
        assert found["liger_version"] == "0.8.5"
    assert speed["metric_unit"] == "ms" and memory["metric_unit"] == "MB"
    assert abs(float(speed["y_value_50"]) * 1e6 - 70_513_954) <= 0.5
    assert abs(float(speed["y_value_20"]) * 1e6 - 70_400_000) <= 0.5
    assert abs(float(memory["y_value_80"]) * 2**20 - 1_100_000_000) <= 0.5


def test_a_bench_row_imports_to_the_same_workload(tmp_path: Path) -> None:
    """The computed row is what Liger would say: importing it gives the run's workload."""
    bundles = bench_bundles()
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(bundles), "utf-8")
    assert run_liger_export([str(path)], str(tmp_path / "b.csv"), err=io.StringIO()) == 0
    summary = import_csv([tmp_path / "b.csv"], tmp_path / "again", layout="jsonl")
    assert summary.problems == [] and summary.runs == 2
    workloads = [
        json.loads(line)
        for line in (tmp_path / "again" / "liger.jsonl").read_text("utf-8").splitlines()
        if '"kind":"Workload"' in line
    ]
    assert [w["spec"] for w in workloads] == [bundles[0]["workload"]["spec"]]


# --- the command line ---------------------------------------------------------------


def test_export_refuses_what_it_must(tmp_path: Path) -> None:
    source = write_csv(tmp_path / "a.csv", good_rows(2))
    records = tmp_path / "records"
    import_csv([source], records, layout="jsonl")
    err = io.StringIO()
    assert run_liger_export([str(records)], "", err=err) == 2
    target = tmp_path / "out.csv"
    target.write_text("mine", "utf-8")
    assert run_liger_export([str(records)], str(target), err=err) == 2
    assert "exists with other content" in err.getvalue()
    assert target.read_text("utf-8") == "mine"
    assert run_liger_export([str(records)], str(target), force=True, err=err) == 0
    assert data_lines(target.read_bytes().decode()) == data_lines(source.read_bytes().decode())
    err = io.StringIO()
    missing = tmp_path / "missing"
    assert run_liger_export([str(records), str(missing)], str(tmp_path / "x.csv"), err=err) == 2
    assert err.getvalue().startswith(f"{missing}: no such file or directory")
    assert not (tmp_path / "x.csv").exists(), "nothing written when input is unreadable"


def test_invalid_records_are_reported_and_left_out(tmp_path: Path) -> None:
    source = write_csv(tmp_path / "a.csv", good_rows(2))
    records = tmp_path / "records"
    import_csv([source], records, layout="jsonl")
    lines = (records / "liger.jsonl").read_text("utf-8").splitlines()
    broken = json.loads(lines[-1])
    broken["spec"]["observedAt"] = "yesterday"
    (records / "liger.jsonl").write_text("\n".join([*lines[:-1], json.dumps(broken)]) + "\n")
    stdin = io.BytesIO((records / "liger.jsonl").read_bytes())
    out, err = io.BytesIO(), io.StringIO()
    assert run_liger_export(["-"], "-", out=out, err=err, stdin=stdin) == 1
    assert err.getvalue().startswith(f"<stdin>:{len(lines)}: /spec/observedAt: ")
    assert len(data_lines(out.getvalue().decode())) == 1


# --- the law, on generated CSVs -------------------------------------------------------

_TEXT = st.text(
    string.ascii_letters + string.digits + " _-/.,\"'µ·", min_size=1, max_size=12
).filter(
    str.strip  # a cell of spaces only is empty: refused, not imported
)
_LABEL = st.text(string.ascii_letters + ' ,"\n\r·', max_size=12)
_IDENT = st.text(string.ascii_letters + "_", min_size=1, max_size=8)
_JSON_SCALAR = st.one_of(
    st.integers(-(10**6), 10**6),
    st.floats(-1e6, 1e6, allow_nan=False).filter(lambda f: f != 0 or str(f) == "0.0"),
    st.booleans(),
    st.none(),
    st.text(string.ascii_letters + " .", max_size=10),
    st.sampled_from(["torch.bfloat16", "torch.float32", "fp16"]),
)
_CONFIG = st.dictionaries(
    st.one_of(st.sampled_from(["bsz", "B", "T", "H", "hidden_size", "dtype", "M", "mode"]), _IDENT),
    st.one_of(_JSON_SCALAR, st.lists(_JSON_SCALAR, max_size=3)),
    max_size=5,
)
_UNITS = {"speed": ["ms", "us", "ns", "s"], "memory": ["MB", "MiB", "KB", "GB", "bytes"]}


@st.composite
def _y_values(draw: st.DrawFn) -> list[str]:
    values = sorted(draw(st.lists(st.floats(0, 1e3, allow_nan=False), min_size=3, max_size=3)))
    spell = draw(st.sampled_from([repr, "{:.3f}".format, "{:e}".format, "{:g}".format]))
    return [spell(value) for value in values]


@st.composite
def _x_value(draw: st.DrawFn) -> str:
    number = draw(st.integers(1, 2**40))
    return draw(st.sampled_from([str(number), f"{number}.0", f"{number / 7!r}", "llama_3_8b"]))


@st.composite
def liger_rows(draw: st.DrawFn, index: int) -> list[str]:
    metric = draw(st.sampled_from(["speed", "memory"]))
    y20, y50, y80 = draw(_y_values())
    moment = datetime(2024, 1, 1) + timedelta(minutes=index)
    stamp = moment.strftime(draw(st.sampled_from(["%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S"])))
    stamp += draw(st.sampled_from(["", ".5", ".125", "Z", "+00:00"]))
    config = draw(_CONFIG)
    separators = draw(st.sampled_from([(", ", ": "), (",", ":"), (" , ", " : ")]))
    config_text = draw(st.sampled_from(["", "null", json.dumps(config, separators=separators)]))
    cells = {
        "kernel_name": draw(
            st.one_of(st.sampled_from(["geglu", "rms_norm", "llama4_rope"]), _TEXT)
        ),
        "kernel_provider": draw(st.one_of(st.sampled_from(["liger", "huggingface"]), _TEXT)),
        "kernel_operation_mode": draw(st.sampled_from(["forward", "backward", "full"])),
        "metric_name": metric,
        "metric_unit": draw(st.sampled_from(_UNITS[metric])),
        "x_name": draw(st.one_of(st.sampled_from(["T", "H", "V", "BT", "seq_len"]), _IDENT)),
        "x_label": draw(_LABEL),
        "x_value": draw(_x_value()),
        "y_value_50": y50,
        "y_value_20": y20,
        "y_value_80": y80,
        "extra_benchmark_config_str": config_text,
        "gpu_name": draw(
            st.one_of(
                st.sampled_from(
                    ["NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3", "AMD Instinct MI300X"]
                ),
                _TEXT,
            )
        ),
        "timestamp": stamp,
        "liger_version": draw(st.sampled_from(["", "0.2.1", "0.8.5"])),
    }
    quoting = draw(st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_MINIMAL, csv.QUOTE_ALL]))
    return [encode([cells[name] for name in LIGER_HEADER], quoting)]


@st.composite
def liger_csvs(draw: st.DrawFn) -> tuple[list[str], str]:
    count = draw(st.integers(1, 6))
    rows = [draw(liger_rows(index))[0] for index in range(count)]
    return rows, draw(st.sampled_from(["\r\n", "\n"]))


@settings(
    max_examples=examples(100),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(generated=liger_csvs())
def test_import_then_export_gives_the_source_rows(
    tmp_path: Path, generated: tuple[list[str], str]
) -> None:
    rows, ending = generated
    source = tmp_path / "generated.csv"
    source.write_bytes(("".join(line + ending for line in [HEADER, *rows])).encode("utf-8"))
    out = tmp_path / "records"
    for leftover in out.glob("*"):
        leftover.unlink()
    summary = import_csv([source], out, layout="jsonl")
    assert summary.problems == [], summary.problems
    lines = exported(out)
    assert set(lines) == set(rows)
    assert data_lines(csv_bytes(lines).decode("utf-8")) == set(rows)
