"""``kernelindex ls PATH...``: what a folder holds (issue #28).

The library (:func:`~kernelindex_sdk.compare.inventory.take_inventory`) on records built
here; the command in-process, as real processes with faults (invalid records, missing
paths, a folder it may not read), and on the shared KernelBench and Liger data.
"""

from __future__ import annotations

import csv
import json
import os
import random
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import shared_data
from beforeafter_records import RunSpec, records_for, write_jsonl
from click.testing import CliRunner
from compare_corpus import corpus, write
from hypothesis import given
from hypothesis import strategies as st
from strategies import law_settings

from kernelindex_sdk.base.recordformat import OBSERVED_AT_UNKNOWN, UNKNOWN_OBSERVED_AT
from kernelindex_sdk.cli.app import cli
from kernelindex_sdk.cli.report.inventory import inventory_json
from kernelindex_sdk.compare import load_records, resolve_runs
from kernelindex_sdk.compare.inventory import take_inventory

KERNELINDEX = [sys.executable, "-m", "kernelindex_sdk.cli.main"]


def ki(*args: str) -> subprocess.CompletedProcess[str]:
    """``kernelindex ARGS...`` as a real process."""
    return subprocess.run([*KERNELINDEX, *args], capture_output=True, text=True, check=False)


EXAMPLES = Path(__file__).resolve().parent / "examples" / "compare"


def undated(records: list[dict[str, Any]], name: str) -> None:
    """Make run ``name`` one whose source recorded no time, as importers write it."""
    (run,) = [r for r in records if r["metadata"]["name"] == name]
    run["spec"]["observedAt"] = UNKNOWN_OBSERVED_AT
    run["spec"]["qualityFlags"] = [OBSERVED_AT_UNKNOWN]


def dated(records: list[dict[str, Any]], name: str, when: str) -> None:
    (run,) = [r for r in records if r["metadata"]["name"] == name]
    run["spec"]["observedAt"] = when


def sample(tmp_path: Path) -> Path:
    """Three geglu shapes: liger 2× faster, OOM, absent; one run undated, two dated."""
    records = corpus([100_000, 90_000, 50_000], [50_000, "oom", None])
    undated(records, "hf-3")
    dated(records, "hf-1", "2024-09-03T17:38:37+02:00")
    dated(records, "hf-2", "2025-01-02T00:00:00Z")
    write(tmp_path, records, files=2)
    return tmp_path


def inventory_of(path: Path) -> dict[str, Any]:
    loaded = load_records([str(path)])
    runs, _ = resolve_runs(loaded.index)
    return inventory_json(take_inventory(loaded.index, runs))


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["ls", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


# --------------------------------------------------------------------------- library


def test_counts_by_kind_status_and_what_runs_are_of(tmp_path: Path) -> None:
    found = inventory_of(sample(tmp_path))
    assert found["kinds"] == {
        "BenchmarkRun": 5,
        "Workload": 3,
        "Implementation": 2,
        "BenchmarkProtocol": 1,
        "ExecutionEnvironment": 1,
    }
    assert found["records"] == 12 and found["runs"] == 5
    assert found["status"] == {"passed": 4, "oom": 1}
    assert found["metrics"] == {"latency": 5}  # the OOM run's metric is its protocol's
    assert found["passes"] == {"forward": 5}
    assert found["kernels"] == {"geglu": 5}
    assert found["gpus"] == {"NVIDIA H100 80GB HBM3": 5}
    assert found["providers"] == {"huggingface": 3, "liger": 2}
    assert found["implementations"] == {"huggingface": 3, "liger 0.5.0": 2}
    assert found["protocols"] == {"example-do-bench-forward": 5}
    assert found["qualityFlags"] == {OBSERVED_AT_UNKNOWN: 1}
    assert found["notGiven"] == {}


def test_the_noise_runs_record_is_counted_as_compare_reads_it(tmp_path: Path) -> None:
    forms = ("quantiles", "collapsed", "stddev", "one-sample", "none", "quantiles")
    specs = [RunSpec(seq=seq, noise=form) for seq, form in enumerate(forms)]
    specs.append(RunSpec(seq=99, status="oom"))  # no result: no noise to speak of
    write_jsonl(tmp_path / "runs.jsonl", [records_for(spec) for spec in specs])
    found = inventory_of(tmp_path)
    assert found["noise"] == {"quantiles": 2, "stddev": 1, "none": 3}
    assert found["noNoise"] == {
        "collapsed quantiles": 1,
        "no spread recorded": 1,
        "one sample": 1,
    }
    code, out, _ = invoke(str(tmp_path))
    assert code == 0
    lines = out.splitlines()
    why = lines.index("no noise (passed runs, why) (3)")
    assert [line.split("  ")[1] for line in lines[why + 1 : why + 4]] == [
        "collapsed quantiles",
        "no spread recorded",
        "one sample",
    ]
    assert lines[lines.index("noise (passed runs) (3)") + 1].split() == ["quantiles", "2"]


def test_a_run_without_a_time_is_undated_never_1970(tmp_path: Path) -> None:
    found = inventory_of(sample(tmp_path))["observed"]
    # The corpus's other runs are observed 2025-01-01T12:00Z; the range is theirs only.
    assert found == {
        "first": "2024-09-03T15:38:37Z",
        "last": "2025-01-02T00:00:00Z",
        "undated": 1,
    }


def test_only_undated_runs_have_no_range(tmp_path: Path) -> None:
    records = corpus([100_000], [None])
    undated(records, "hf-1")
    write(tmp_path, records)
    assert inventory_of(tmp_path)["observed"] == {"first": None, "last": None, "undated": 1}


def test_runs_without_their_records_are_counted_as_such(tmp_path: Path) -> None:
    runs_only = [r for r in corpus([100_000], [50_000]) if r["kind"] == "BenchmarkRun"]
    write(tmp_path, runs_only)
    found = inventory_of(tmp_path)
    assert found["kinds"] == {"BenchmarkRun": 2}
    assert found["notGiven"] == {
        "Workload": 2,
        "Implementation": 2,
        "BenchmarkProtocol": 2,
        "ExecutionEnvironment": 2,
    }
    assert found["kernels"] == {} and found["gpus"] == {}


@law_settings(max_examples=20)
@given(
    st.lists(st.integers(min_value=1, max_value=10**9), min_size=1, max_size=6),
    st.integers(min_value=1, max_value=4),
    st.randoms(use_true_random=False),
)
def test_the_inventory_does_not_depend_on_order_files_or_repeats(
    values: list[int], files: int, rnd: random.Random
) -> None:
    records = corpus(values, [v // 2 or 1 for v in values])
    with tempfile.TemporaryDirectory() as folder:
        write(Path(folder), records)
        expected = inventory_of(Path(folder))
    shuffled = records + records[: rnd.randint(0, len(records))]  # some given twice
    rnd.shuffle(shuffled)
    with tempfile.TemporaryDirectory() as folder:
        write(Path(folder), shuffled, files)
        again = inventory_of(Path(folder))
    assert {k: v for k, v in again.items() if k != "duplicateRuns"} == {
        k: v for k, v in expected.items() if k != "duplicateRuns"
    }
    assert expected["runs"] == 2 * len(values)


# --------------------------------------------------------------------------- the command


def test_text_and_json(tmp_path: Path) -> None:
    sample(tmp_path)
    code, out, err = invoke(str(tmp_path))
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "records 12"
    assert "runs 5" in lines
    assert (
        "observed 2024-09-03T15:38:37Z – 2025-01-02T00:00:00Z; 1 undated (observed_at_unknown)"
        in lines
    )
    assert "1970" not in out
    kernels = lines.index("kernels (1)")
    assert lines[kernels + 1].split() == ["geglu", "5"]
    code, out, _ = invoke(str(tmp_path), "--format", "json")
    assert code == 0 and json.loads(out) == inventory_of(tmp_path)


def test_filters_and_their_typos(tmp_path: Path) -> None:
    sample(tmp_path)
    code, out, _ = invoke(str(tmp_path), "--gpu", "h100", "--metric", "latency", "--format", "json")
    assert code == 0 and json.loads(out)["runs"] == 5
    code, out, err = invoke(str(tmp_path), "--kernel", "gelgu")
    assert (code, out) == (2, "")
    assert (
        err
        == "kernelindex ls: --kernel 'gelgu' matches nothing in the input; did you mean 'geglu'?\n"
    )
    code, out, err = invoke(str(tmp_path), "--gpu", "a10O")
    assert (code, out) == (2, "") and "--gpu 'a10O'" in err
    code, out, err = invoke(str(tmp_path), "--pass", "backward")
    assert (code, out) == (1, "") and "no run matches the filters" in err
    assert invoke(str(tmp_path), "--metric", "throughput")[0] == 2


def test_invalid_records_one_line_each_exit_1(tmp_path: Path) -> None:
    sample(tmp_path)
    (tmp_path / "bad.json").write_text(
        json.dumps(
            {
                "apiVersion": "kernelindex.dev/v1alpha1",
                "kind": "Workload",
                "metadata": {"name": "x"},
                "spec": {},
            }
        ),
        encoding="utf-8",
    )
    code, out, err = invoke(str(tmp_path), "--format", "json")
    assert code == 1
    assert json.loads(out)["records"] == 12  # the invalid one is left out
    problems = [line for line in err.splitlines() if not line.startswith("kernelindex ls:")]
    assert problems and all(
        line.startswith(str(tmp_path / "bad.json") + ":1:91: /spec") for line in problems
    )
    assert "1 invalid item left out" in err


def test_real_processes_unreadable_input_exits_2(tmp_path: Path) -> None:
    (tmp_path / "good").mkdir()
    sample(tmp_path / "good")
    (tmp_path / "garbage.json").write_bytes(b"\xff\xfe not json")
    proc = ki("ls", str(tmp_path / "good"), str(tmp_path / "garbage.json"), str(tmp_path / "nope"))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "garbage.json" in proc.stderr and "nope" in proc.stderr
    assert proc.stdout.startswith("records 12\n")  # what could be read is still listed
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = subprocess.run(
        [*KERNELINDEX, "ls", str(empty)], capture_output=True, text=True, check=False
    )
    assert (proc.returncode, proc.stdout) == (2, "")
    assert "no .json, .jsonl or .ndjson files found" in proc.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="drops root's capabilities with setpriv")
def test_a_folder_it_may_not_read_is_unreadable(tmp_path: Path) -> None:
    (tmp_path / "good").mkdir()
    sample(tmp_path / "good")
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "x.json").write_text("{}", encoding="utf-8")
    locked.chmod(0)
    try:
        proc = subprocess.run(
            ["setpriv", "--bounding-set=-dac_override,-dac_read_search",
             "--inh-caps=-dac_override,-dac_read_search", "--",
             *KERNELINDEX, "ls", str(tmp_path)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
    finally:
        locked.chmod(0o755)
    assert proc.returncode == 2, proc.stderr
    assert "locked" in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout.startswith("records 12\n")


def test_closed_stdout_is_quiet(tmp_path: Path) -> None:
    sample(tmp_path)
    proc = subprocess.Popen(
        [*KERNELINDEX, "ls", str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait() in (0, 141) and b"Traceback" not in err


# --------------------------------------------------------------------------- shared data


def test_kernelbench_runs_are_undated_not_from_1970(tmp_path: Path) -> None:
    folder = shared_data.require("kernelbench", "H100_Modal")
    subprocess.run(
        [*KERNELINDEX, "import", "kernelbench", str(folder), "--out", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    proc = subprocess.run(
        [*KERNELINDEX, "ls", str(tmp_path), "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    entries = sum(
        len(problems)
        for name in (
            "baseline_time_torch.json",
            "baseline_time_torch_compile_inductor_default.json",
        )
        for problems in json.loads((folder / name).read_text(encoding="utf-8")).values()
    )
    assert found["runs"] == entries
    assert found["observed"] == {"first": None, "last": None, "undated": entries}
    assert found["qualityFlags"].get(OBSERVED_AT_UNKNOWN) == entries
    assert found["gpus"] == {"NVIDIA H100 80GB HBM3": entries}
    assert set(found["implementations"]) == {"torch", "torch_compile_inductor_default"}


def test_liger_csv_inventory_matches_the_csv(tmp_path: Path) -> None:
    csv_path = shared_data.require("liger", "all_benchmark_data.csv")
    imported = ki("import", "liger", str(csv_path), "--out", str(tmp_path), "--layout", "jsonl")
    assert imported.returncode == 0, imported.stderr
    proc = ki("ls", str(tmp_path), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    with csv_path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert found["runs"] == len(rows) and found["status"] == {"passed": len(rows)}
    assert found["kernels"] == dict(sorted(Counter(r["kernel_name"] for r in rows).items()))
    metrics = Counter(r["metric_name"] for r in rows)
    assert found["metrics"] == {"latency": metrics["speed"], "peak_memory": metrics["memory"]}
    assert found["gpus"] and sum(found["gpus"].values()) == len(rows)
    # The finding, said before any comparison: runs whose quantiles collapsed.
    collapsed = sum(r["y_value_20"] == r["y_value_50"] == r["y_value_80"] for r in rows)
    assert found["noNoise"] == {"collapsed quantiles": collapsed}
    assert found["noise"] == {"quantiles": len(rows) - collapsed, "none": collapsed}
    # The CSV's timestamps are UTC without an offset: the range is theirs.
    stamps = sorted(r["timestamp"] for r in rows)
    assert found["observed"] == {
        "first": stamps[0].replace(" ", "T") + "Z",
        "last": stamps[-1].replace(" ", "T") + "Z",
        "undated": 0,
    }


def test_stdin_and_a_full_disk(tmp_path: Path) -> None:
    sample(tmp_path)
    data = "".join(p.read_text(encoding="utf-8") for p in sorted(tmp_path.glob("*.jsonl")))
    proc = subprocess.run(
        [*KERNELINDEX, "ls", "-", "--format", "json"],
        input=data, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == inventory_of(tmp_path)
    with open("/dev/full", "w", encoding="utf-8") as full:
        proc = subprocess.run(
            [*KERNELINDEX, "ls", str(tmp_path)], stdout=full, stderr=subprocess.PIPE,
            text=True, check=False,
        )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "kernelindex: error: cannot write output: No space left on device"
    ]
