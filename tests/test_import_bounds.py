"""What every importer does at the edges of its input, whatever the source (#29).

* An import that keeps nothing — an input with no entries, or every entry refused —
  writes nothing (no empty ``DIR/<source>.jsonl`` that ``validate`` rejects and that
  would refuse every later import into DIR), says so in one line and exits 1.
* A finite number that no record can hold once converted (``1e308`` ms is infinite in
  ns) refuses its entry in one line; the other entries are written.
* nvbench's ``axes[].values`` that is not an array is one line, not a ``TypeError``.
* Numbers written as text are read by one grammar (``bench_adapters.common.numbers``):
  ``1_000``, Arabic-Indic digits, surrounding white space are not numbers anywhere.
* More entries in one import than :data:`MAX_ENTRIES` refuse the file in one line,
  before memory grows with them (run under an address-space limit).

Each runs the real command in its own process, on real files, where the exit status,
the one line or the memory is what is checked.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from import_checks import validate_strict
from liger_rows import good_rows, row, write_csv
from profiles import variants

from bench_adapters import kernelbench, nvbench
from bench_adapters.common import importing
from bench_adapters.common.importing import MAX_ENTRIES, UnreadableSource
from bench_adapters.common.numbers import decimal, integer
from bench_adapters.common.writer import Layout, write_records
from bench_adapters.liger import import_csv
from bench_adapters.liger.source import RowError, parse_measurement

EXAMPLES = Path(__file__).resolve().parent / "examples"
NVBENCH_EDGE = EXAMPLES / "nvbench" / "edge_cases.json"
KERNELBENCH_GOOD = EXAMPLES / "kernelbench" / "A100_Modal"
COMMAND = [sys.executable, "-m", "kernelindex_sdk.cli.main", "import"]


def run_import(
    source: str, paths: Sequence[Path], out: Path, *args: str, prefix: Sequence[str] = ()
) -> tuple[int, str]:
    """Run ``kernelindex import SOURCE PATHS --out OUT`` in its own process."""
    result = subprocess.run(
        [*prefix, *COMMAND, source, *map(str, paths), "--out", str(out), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.stdout == ""
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, result.stderr


def nvbench_file(path: Path, states: Sequence[Any], **changes: Any) -> Path:
    """An nvbench 1.0.0 file: the edge sample's meta and first device, one benchmark."""
    edge = json.loads(NVBENCH_EDGE.read_text(encoding="utf-8"))
    data: dict[str, Any] = {
        "meta": edge["meta"],
        "devices": edge["devices"][:1],
        "benchmarks": [
            {
                "name": "bench",
                "axes": [{"name": "N", "type": "int64", "values": []}],
                "states": list(states),
            }
        ],
    }
    data.update(changes)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def nv_state(n: int, mean: str = "0.001", **summaries: str) -> dict[str, Any]:
    """One state of device 0 with axis N = n, its GPU mean and any other float64 tags."""
    tags = {"nv/cold/time/gpu/mean": mean, **summaries}
    return {
        "name": f"N={n}",
        "device": 0,
        "axis_values": [{"name": "N", "type": "int64", "value": str(n)}],
        "summaries": [
            {"tag": tag, "data": [{"name": "value", "type": "float64", "value": value}]}
            for tag, value in tags.items()
        ],
        "is_skipped": False,
    }


def kb_file(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def kb_entry(mean: Any = 1.5, **changes: Any) -> dict[str, Any]:
    entry = {"mean": mean, "std": 0.01, "min": 1.4, "max": 1.6, "num_trials": 100}
    return {**entry, "hardware": "NVIDIA A100-SXM4-40GB", "device": "cuda:0", **changes}


# --------------------------------------------------------------------------- nothing kept


def _nothing_kept_inputs(tmp: Path) -> dict[str, tuple[str, list[Path]]]:
    """Inputs that keep nothing, by case: (source, paths)."""
    torch = "H100_Modal/baseline_time_torch.json"
    return {
        "liger header only": ("liger", [write_csv(tmp / "header.csv", [])]),
        "liger every row refused": (
            "liger",
            [write_csv(tmp / "bad.csv", [row(y_value_50="x"), row(x_value="1e20")])],
        ),
        "kernelbench {}": ("kernelbench", [kb_file(tmp / "empty" / torch, {})]),
        "kernelbench level null": (
            "kernelbench",
            [kb_file(tmp / "null" / torch, {"level1": None})],
        ),
        "nvbench no devices": (
            "nvbench",
            [nvbench_file(tmp / "nodev.json", [], devices=[], benchmarks=[])],
        ),
        "nvbench every state refused": (
            "nvbench",
            [nvbench_file(tmp / "nodev2.json", [nv_state(1)], devices=[])],
        ),
    }


NOTHING_KEPT = [
    "liger header only",
    "liger every row refused",
    "kernelbench {}",
    "kernelbench level null",
    "nvbench no devices",
    "nvbench every state refused",
]
NOUN = {"liger": "row", "nvbench": "state", "kernelbench": "entry"}


@pytest.mark.parametrize(
    ("case", "layout"),
    # Each case in the quick run once, the layouts in turn; both layouts under slow.
    variants(
        [(case, layout) for case in NOTHING_KEPT for layout in ("jsonl", "bundles")],
        quick={2 * i + i % 2 for i in range(len(NOTHING_KEPT))},
        several=True,
    ),
)
def test_an_import_that_keeps_nothing_writes_nothing_and_says_so(
    tmp_path: Path, case: str, layout: Layout
) -> None:
    source, paths = _nothing_kept_inputs(tmp_path)[case]
    out = tmp_path / "out"
    status, stderr = run_import(source, paths, out, "--layout", layout)
    assert status == 1, stderr
    assert f"kernelindex import {source}: no {NOUN[source]} imported: nothing written" in stderr
    assert not out.exists(), "nothing kept: no stream, no bundle, not even the folder"
    # The folder is not blocked: a good import into it is not refused.
    if source == "liger":
        import_csv([write_csv(tmp_path / "good.csv", good_rows(2))], out, layout=layout)
    elif source == "nvbench":
        nvbench.import_files([NVBENCH_EDGE], out, layout=layout)
    else:
        kernelbench.import_paths([KERNELBENCH_GOOD], out, layout=layout)
    assert validate_strict(out) == []


def test_a_stream_of_no_records_is_not_written(tmp_path: Path) -> None:
    result = write_records([], {}, tmp_path, "jsonl", jsonl_name="x.jsonl")
    assert result.written == [] and result.unchanged == []
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------- numbers too large


def test_a_finite_but_huge_liger_value_refuses_its_row_only(tmp_path: Path) -> None:
    rows = [*good_rows(2), row(x_value="8192", y_value_50="1e308", y_value_80="1e308")]
    csv = write_csv(tmp_path / "in.csv", rows)
    status, stderr = run_import("liger", [csv], tmp_path / "out", "--layout", "jsonl")
    assert status == 1
    assert f"{csv}:4: y_value_50: 1e+308 is too large to record" in stderr.splitlines()
    assert validate_strict(tmp_path / "out") == []
    assert sum('"BenchmarkRun"' in line for line in (tmp_path / "out" / "liger.jsonl").open()) == 2


def test_a_finite_but_huge_nvbench_mean_or_noise_refuses_its_state_only(tmp_path: Path) -> None:
    noise = "nv/cold/time/gpu/stdev/relative"
    states = [nv_state(1), nv_state(2, mean="1e308"), nv_state(3, **{noise: "1e308"})]
    path = nvbench_file(tmp_path / "run.json", states)
    status, stderr = run_import("nvbench", [path], tmp_path / "out", "--layout", "jsonl")
    assert status == 1
    lines = stderr.splitlines()
    mean = f"{path}: /benchmarks/0/states/1/summaries: nv/cold/time/gpu/mean = 1e+308 s"
    assert f"{mean} is too large to record" in lines
    deviation = f"{path}: /benchmarks/0/states/2/summaries: stddev = 1e+305 s"
    assert f"{deviation} is too large to record" in lines
    assert validate_strict(tmp_path / "out") == []
    assert (
        sum('"BenchmarkRun"' in line for line in (tmp_path / "out" / "nvbench.jsonl").open()) == 1
    )


@pytest.mark.parametrize("key", ["mean", "std", "min", "max"])
def test_a_finite_but_huge_kernelbench_value_refuses_its_entry_only(
    tmp_path: Path, key: str
) -> None:
    problems = {"1_A.py": kb_entry(), "2_B.py": kb_entry(**{key: 1e308})}
    path = kb_file(tmp_path / "A100_Modal" / "baseline_time_torch.json", {"level1": problems})
    status, stderr = run_import("kernelbench", [path], tmp_path / "out", "--layout", "jsonl")
    assert status == 1
    refused = f"{path}: /level1/2_B.py/{key}: {key} = 1e+308 ms is too large to record"
    assert refused in stderr.splitlines()
    assert validate_strict(tmp_path / "out") == []
    runs = (tmp_path / "out" / "kernelbench.jsonl").read_text("utf-8").count('"BenchmarkRun"')
    assert runs == 1


# ---------------------------------------------------------------- nvbench axes[].values


@pytest.mark.parametrize("values", [1.5, -1, True, "1,2"])
def test_nvbench_axis_values_that_are_not_an_array_are_one_line(
    tmp_path: Path, values: Any
) -> None:
    path = nvbench_file(tmp_path / "run.json", [nv_state(1)])
    data = json.loads(path.read_text("utf-8"))
    data["benchmarks"][0]["axes"][0]["values"] = values
    path.write_text(json.dumps(data), encoding="utf-8")
    status, stderr = run_import("nvbench", [path], tmp_path / "out")
    assert status == 1
    got = {float: "number", int: "number", bool: "boolean", str: "string"}[type(values)]
    expected = f"{path}: /benchmarks/0/axes/0/values: expected an array, got {got}"
    assert stderr.splitlines()[0] == expected


# --------------------------------------------------------------------- the number grammar

NOT_NUMBERS = ["1_000", "\u0661\u0662", " 0.001", "0.001\n", "0.001 ", "infinity", "0x10", ""]


@pytest.mark.parametrize("text", NOT_NUMBERS)
def test_one_grammar_refuses_what_python_would_read(text: str) -> None:
    assert decimal(text) is None and integer(text) is None
    with pytest.raises(RowError, match="not a number"):
        parse_measurement("y_value_50", text)


@pytest.mark.parametrize("text", ["1_000", "\u0661\u0662", " 0.001", "0.001\n"])
def test_nvbench_reads_numbers_by_the_liger_grammar(tmp_path: Path, text: str) -> None:
    """A float64 mean, an int64 sample count and an int64 axis value written so are
    refused, as the Liger importer refuses such a cell."""
    with pytest.raises(RowError):
        parse_measurement("y_value_50", text)
    mean = nv_state(1, mean=text)
    samples = nv_state(2)
    samples["summaries"].append(
        {"tag": "nv/cold/sample_size", "data": [{"name": "value", "type": "int64", "value": text}]}
    )
    axis = nv_state(3)
    axis["axis_values"][0]["value"] = text
    path = nvbench_file(tmp_path / "run.json", [mean, samples, axis, nv_state(4)])
    conversion = nvbench.convert([path])
    found = {problem.pointer: problem.message for problem in conversion.summary.problems}
    assert found == {
        "/benchmarks/0/states/0/summaries/0/data/0/value": f"expected a number, got {text!r}",
        "/benchmarks/0/states/1/summaries/1/data/0/value": f"expected an int64, got {text!r}",
        "/benchmarks/0/states/2/axis_values/0/value": f"expected a whole number, got {text!r}",
    }
    assert len(conversion.runs) == 1


@pytest.mark.parametrize("text", ["1_000", "\u0661\u0662", " 0.5", "0.5\n"])
def test_kernelbench_reads_numbers_by_the_liger_grammar(tmp_path: Path, text: str) -> None:
    problems = {"1_A.py": kb_entry(mean=text), "2_B.py": kb_entry()}
    path = kb_file(tmp_path / "A100_Modal" / "baseline_time_torch.json", {"level1": problems})
    conversion = kernelbench.convert([path])
    (problem,) = conversion.summary.problems
    assert (problem.pointer, problem.message) == (
        "/level1/1_A.py/mean",
        f"expected a number, got {text!r}",
    )
    assert len(conversion.runs) == 1


def test_nvbench_infinite_noise_is_still_read_as_nvbench_writes_it() -> None:
    assert decimal("inf", non_finite=True) == float("inf")
    assert decimal("inf") is None


# ---------------------------------------------------------------- entries and memory

#: The address space an import of MAX_ENTRIES + 1 tiny entries gets: enough to parse
#: the file and refuse it; mapping them all (about 1 GB) would not fit.
ADDRESS_SPACE = str(1 << 30)


def _many_nvbench_states(path: Path, count: int) -> Path:
    nvbench_file(path, [])
    head, _, tail = path.read_text("utf-8").partition('"states": []')
    state = (
        '{"name":"s","device":0,"axis_values":[{"name":"N","type":"int64","value":"%d"}],'
        '"summaries":[{"tag":"nv/cold/time/gpu/mean","data":[{"name":"value",'
        '"type":"float64","value":"0.001"}]}],"is_skipped":false}'
    )
    with path.open("w", encoding="utf-8") as out:
        out.write(head + '"states": [')
        out.write(",".join(state % i for i in range(count)))
        out.write("]" + tail)
    return path


def _many_kernelbench_entries(path: Path, count: int) -> Path:
    path.parent.mkdir(parents=True)
    entry = '"%d_P.py":{"mean":0.5,"num_trials":10,"hardware":"NVIDIA A100-SXM4-40GB"}'
    with path.open("w", encoding="utf-8") as out:
        out.write('{"level1":{' + ",".join(entry % (i + 1) for i in range(count)) + "}}")
    return path


@pytest.mark.parametrize(
    ("source", "count", "address_space"),
    [
        ("nvbench", MAX_ENTRIES + 1, ADDRESS_SPACE),
        pytest.param("kernelbench", MAX_ENTRIES + 1, ADDRESS_SPACE, marks=pytest.mark.slow),
        # The case: a million entries (210 MB, 125 MB) under a 6 GB limit; before
        # the limit, 5.4 GB then a MemoryError traceback, and 261 s and 9.8 GB.
        pytest.param("nvbench", 10**6, str(6 << 30), marks=pytest.mark.slow),
        pytest.param("kernelbench", 10**6, str(6 << 30), marks=pytest.mark.slow),
    ],
)
def test_more_entries_than_the_limit_refuse_the_file_in_bounded_memory(
    tmp_path: Path, source: str, count: int, address_space: str
) -> None:
    if source == "nvbench":
        path = _many_nvbench_states(tmp_path / "many.json", count)
        noun = "states"
    else:
        path = _many_kernelbench_entries(tmp_path / "H_torch" / "baseline_time_torch.json", count)
        noun = "entries"
    out = tmp_path / "out"
    prefix = ["prlimit", f"--as={address_space}"]
    status, stderr = run_import(source, [path], out, "--layout", "jsonl", prefix=prefix)
    assert status == 2, stderr
    assert stderr.splitlines() == [
        f"{path}: {count:,} {noun} in this file: more than {MAX_ENTRIES:,} {noun} in one "
        "import, the limit (each is held in memory until the write): not read; import the "
        "files in parts"
    ]
    assert not out.exists()


def test_the_limit_counts_every_file_of_the_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(importing, "MAX_ENTRIES", 5)
    three = {"level1": {f"{i}_P.py": kb_entry() for i in range(1, 4)}}
    first = kb_file(tmp_path / "A100_Modal" / "baseline_time_torch.json", three)
    second = kb_file(
        tmp_path / "A100_Modal" / "baseline_time_torch_compile_inductor_default.json",
        copy.deepcopy(three),
    )
    assert len(kernelbench.convert([first]).runs) == 3
    with pytest.raises(UnreadableSource) as raised:
        kernelbench.convert([first, second])
    problem = raised.value.problem
    assert problem.source == str(second)
    assert problem.message.startswith("3 entries in this file (6 with the files before it)")


def test_the_number_grammar_is_written_once() -> None:
    """No importer keeps its own copy of the grammar (liger/source.py and
    liger/export.py each had one before it moved to common/numbers.py)."""
    package = Path(__file__).resolve().parent.parent / "bench_adapters"
    grammar = r"[0-9]+\.?[0-9]*"
    holders = [p.name for p in package.rglob("*.py") if grammar in p.read_text("utf-8")]
    assert holders == ["numbers.py"]
