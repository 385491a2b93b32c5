"""``scripts/device-fidelity`` on a CPU: the acceptance rule, the table, the archive,
the upstream script's call caught on its way to do_bench, and the whole script with
stand-ins for both harnesses (``--fake``), as a real process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tarfile
import time
import types
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples

import kernelindex_sdk as ki
from bench_adapters.liger_bench import fidelity
from bench_adapters.liger_bench.fidelity import Figure, agreement, agreement_table, pack

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "device-fidelity"

ms = st.floats(min_value=0.01, max_value=100.0, allow_nan=False)


def _figures(medians: list[float], gpu: float | None = None) -> list[Figure]:
    return [Figure(m, m * 0.99, m * 1.01, gpu) for m in medians]


@settings(max_examples=examples(100), deadline=None)
@given(ours=st.lists(ms, min_size=1, max_size=5), theirs=st.lists(ms, min_size=1, max_size=5))
def test_gpu_bound_kernels_agree_within_3_percent_or_the_noisier_side_s_half_range(
    ours: list[float], theirs: list[float]
) -> None:
    row = agreement("k", "backward", _figures(ours), _figures(theirs))
    median = sorted(ours)[len(ours) // 2] if len(ours) % 2 else None
    noise = max((max(ours) - min(ours)) / 2, (max(theirs) - min(theirs)) / 2)
    assert row.basis == "median" and row.rounds == (len(ours), len(theirs))
    assert row.ours is not None and row.theirs is not None
    if median is not None:
        assert row.ours == median
    assert row.allowed == max(0.03 * row.theirs, noise)
    assert row.agree == (abs(row.ours - row.theirs) <= row.allowed)


@settings(max_examples=examples(100), deadline=None)
@given(median=ms, gpu_ours=ms, gpu_theirs=ms)
def test_host_bound_kernels_are_judged_by_their_gpu_only_figures(
    median: float, gpu_ours: float, gpu_theirs: float
) -> None:
    ours = _figures([median], gpu_ours)
    theirs = _figures([median], gpu_theirs)
    row = agreement("k", "backward", ours, theirs)
    host_bound = median > 2 * gpu_ours or median > 2 * gpu_theirs
    assert row.basis == ("gpu-only" if host_bound else "median")
    if host_bound:
        assert row.allowed == max(0.1 * gpu_theirs, 0.001)
        assert row.agree == (abs(gpu_ours - gpu_theirs) <= row.allowed)
    else:
        assert row.agree is True  # the same medians


def test_the_rule_at_its_edges() -> None:
    assert agreement("k", "full", _figures([103.0]), _figures([100.0])).agree is True
    assert agreement("k", "full", _figures([103.5]), _figures([100.0])).agree is False
    # The noisier side's half range widens it: rounds of 96..104 allow 4.
    assert agreement("k", "full", _figures([103.9]), _figures([96.0, 100.0, 104.0])).agree
    # 1 µs floor for tiny GPU-only figures: 0.0085 vs 0.0094 ms agree.
    host = agreement("k", "backward", _figures([0.117], 0.0085), _figures([0.0106], 0.0094))
    assert host.basis == "gpu-only" and host.agree is True
    # Nothing to compare: undecided, never a silent pass.
    assert agreement("k", "full", [], _figures([1.0])).agree is None
    bare = agreement("k", "backward", _figures([0.1], 0.01), _figures([0.1]))
    assert bare.basis == "gpu-only" and bare.agree is None
    # Fewer rounds than asked for on a side (a stopped process): shown, not judged.
    short = agreement("k", "full", _figures([1.0, 1.0]), _figures([1.0]), wanted=2)
    assert short.agree is None and short.ours == short.theirs == 1.0


def test_the_table_escapes_what_it_prints() -> None:
    row = agreement("a|b", "*full*", _figures([1.0]), _figures([1.0]))
    table = agreement_table([row])
    assert "a\\|b" in table and "\\*full\\*" in table and "| agree |" in table
    assert "undecided" in agreement_table([agreement("k", "full", [], [])])


def test_pack_writes_one_archive_atomically(tmp_path: Path) -> None:
    folder = tmp_path / "fidelity"
    (folder / "kernelindex").mkdir(parents=True)
    (folder / "kernelindex" / "a.json").write_text("{}")
    (folder / "rounds.jsonl").write_text("{}\n")
    archive = pack(folder, tmp_path / "fidelity.tgz")
    with tarfile.open(archive) as tar:
        assert sorted(tar.getnames()) == ["fidelity/kernelindex/a.json", "fidelity/rounds.jsonl"]
    assert not (tmp_path / "fidelity.tgz.part").exists()


def test_a_torn_last_round_is_left_out(tmp_path: Path) -> None:
    path = tmp_path / "rounds.jsonl"
    line = {"kernel": "geglu", "pass": "backward", "side": "upstream", "round": 0}
    whole = json.dumps({**line, "median": 1.0, "p20": 0.9, "p80": 1.1, "gpu_only": None})
    path.write_text(whole + "\n" + whole[:20])
    found = fidelity.read_rounds(path)
    assert found == {
        ("geglu", "backward"): {"upstream": [Figure(1.0, 0.9, 1.1)], "kernelindex": []}
    }


# --------------------------------------------------------------------------- the upstream side

UTILS = """
import dataclasses

@dataclasses.dataclass
class SingleBenchmarkRunInput:
    x: int
    kernel_provider: str
    kernel_operation_mode: str = ""
    extra_benchmark_config: dict = None

@dataclasses.dataclass
class SingleBenchmarkRunOutput:
    y_20: float
    y_50: float
    y_80: float
"""
SCRIPT_TEXT = """
import triton
from utils import SingleBenchmarkRunOutput
from test.chunked_loss.test_cosine_loss import HFCosineLoss  # as the distillation script does

CALLS = []

def bench_speed_relu_squared(input):
    CALLS.append(input)
    x = object()
    ms_50, ms_20, ms_80 = triton.testing.do_bench(lambda: "dy", quantiles=[0.5, 0.2, 0.8],
                                                  grad_to_none=[x], rep=500)
    return SingleBenchmarkRunOutput(y_20=ms_20, y_50=ms_50, y_80=ms_80)
"""


def test_the_upstream_side_calls_the_script_and_replays_its_callable_as_a_graph(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "relu_squared"
    folder.mkdir()
    (folder / "utils.py").write_text(UTILS)
    (folder / "benchmark_relu_squared.py").write_text(SCRIPT_TEXT)
    graphs: list[Any] = []

    def do_bench(fn: Any, **options: Any) -> Any:
        assert fn() == "dy"
        return [0.117, 0.110, 0.130]

    def do_bench_cudagraph(fn: Any, **options: Any) -> Any:
        graphs.append((fn(), len(options["grad_to_none"]), options["return_mode"]))
        return [0.0085] * 10

    testing = types.SimpleNamespace(do_bench=do_bench, do_bench_cudagraph=do_bench_cudagraph)
    monkeypatch.setitem(sys.modules, "triton", types.SimpleNamespace(testing=testing))
    monkeypatch.setitem(sys.modules, "triton.testing", testing)
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(bfloat16="bf16"))
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in ("utils", "benchmark_relu_squared"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    item = fidelity.seed_items(["relu_squared"])[0]
    side = fidelity.UpstreamSide(item, tmp_path)
    figure = side.round()
    assert figure == Figure(0.117, 0.110, 0.130, 0.0085)
    assert graphs == [("dy", 1, "all")]
    asked = side.module.CALLS[0]
    assert (asked.x, asked.kernel_provider, asked.kernel_operation_mode) == (
        512,
        "liger",
        "backward",
    )
    assert asked.extra_benchmark_config == {"M": 4096, "dtype": "bf16"}
    assert testing.do_bench is do_bench  # put back


# --------------------------------------------------------------------------- the script


def _script(out: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "OUT": str(out), "PYTHON": sys.executable, **env},
        timeout=120,
        check=False,
    )


def test_the_script_runs_both_sides_imports_tabulates_and_packs(tmp_path: Path) -> None:
    done = _script(
        tmp_path, "--fake", "--rounds", "2", "--kernel", "relu_squared", "--kernel", "geglu"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["device-fidelity.log", "fidelity.tgz"]
    log = (tmp_path / "device-fidelity.log").read_text()
    assert "relu_squared round 2 kernelindex: median 0.117 ms, GPU-only 0.0085 ms" in log
    unpacked = tmp_path / "unpacked"
    with tarfile.open(tmp_path / "fidelity.tgz") as tar:
        tar.extractall(unpacked, filter="data")
    work = unpacked / "fidelity"
    ours = sorted((work / "kernelindex").glob("*.json"))
    theirs = sorted((work / "upstream").glob("*.json"))
    assert len(ours) == len(theirs) == 4
    for path in ours + theirs:
        assert ki.validate(json.loads(path.read_text())) == []
    table = (work / "agreement.md").read_text()
    assert "| relu\\_squared | backward | gpu-only | 0.0085 ms | 0.0085 ms |" in table
    rows = json.loads((work / "agreement.json").read_text())
    assert [r["agree"] for r in rows] == [True, True]
    flags = [json.loads(p.read_text())["run"]["spec"].get("qualityFlags") for p in ours]
    assert flags.count(["host-bound"]) == 2  # ReLU²'s two rounds


def test_the_script_packs_what_there_is_when_it_is_stopped(tmp_path: Path) -> None:
    """Stopped mid-run (SIGTERM to its process group, as a timeout would): one archive."""
    env = {**os.environ, "OUT": str(tmp_path), "PYTHON": sys.executable}
    args = [str(SCRIPT), "--fake", "--kernel", "relu_squared", "--rounds", "100000"]
    child = subprocess.Popen(
        args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        rounds = tmp_path / "fidelity" / "rounds.jsonl"
        deadline = time.monotonic() + 60
        while not (rounds.exists() and rounds.stat().st_size) and time.monotonic() < deadline:
            time.sleep(0.05)
        os.killpg(child.pid, signal.SIGTERM)
        status = child.wait(timeout=60)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
    assert status == 143
    with tarfile.open(tmp_path / "fidelity.tgz") as tar:
        assert {"fidelity/upstream.csv", "fidelity/rounds.jsonl"} <= set(tar.getnames())
    assert not (tmp_path / "fidelity").exists()
    assert "packed what was there" in (tmp_path / "device-fidelity.log").read_text()


def test_a_kernel_past_its_timeout_is_stopped_and_left_undecided(tmp_path: Path) -> None:
    done = _script(tmp_path, "--fake", "--kernel", "geglu", "--kernel-timeout", "0.05")
    assert done.returncode == 124
    with tarfile.open(tmp_path / "fidelity.tgz") as tar:
        table = tar.extractfile("fidelity/agreement.md")
        assert table is not None and b"undecided" in table.read()


def test_the_script_s_dry_run_and_usage_errors(tmp_path: Path) -> None:
    done = _script(tmp_path, "--dry-run", "--upstream", str(REPO / "../shared/liger-upstream"))
    assert done.returncode == 0 and "nothing was run" in done.stdout
    assert (
        "llama4_rope/backward/hidden8192-kv_heads8-q_heads32-seq16384-bf16: 5 rounds" in done.stdout
    )
    bad = _script(tmp_path / "b", "--kernel", "softmax")
    assert bad.returncode == 2 and "known kernels are" in bad.stdout
    (tmp_path / "c" / "fidelity").mkdir(parents=True)
    (tmp_path / "c" / "fidelity" / "x").write_text("mine")
    taken = _script(tmp_path / "c", "--fake")
    assert taken.returncode == 2 and "exists already; give another OUT" in taken.stdout
    assert (tmp_path / "c" / "fidelity" / "x").read_text() == "mine"
    assert not (tmp_path / "c" / "fidelity.tgz").exists()
    # The cross-check itself refuses a folder that is not empty, too.
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "y").write_text("mine")
    own = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench_adapters.liger_bench.fidelity",
            "--fake",
            "--out",
            str(tmp_path / "d"),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert own.returncode == 2 and "exists and is not empty" in own.stderr
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == ["y"]
