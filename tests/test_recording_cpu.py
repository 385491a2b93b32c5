"""The CPU clock, honest labels, the table and the gate of ``kernel_bench``, on a CPU.

Real timing throughout: small pure-Python functions timed by
:class:`~bench_adapters.recording.timing.WallClockTimer`, and the pytest plugin run in
real pytest sessions (pytester, in a subprocess) with few, short samples.
"""

from __future__ import annotations

import gc
import json
import re
import statistics
import subprocess
from pathlib import Path
from typing import Any

import pytest
from acceptance.support import PLUGIN_MODULE, run_subprocess
from hypothesis import given
from hypothesis import strategies as st
from profiles import variants

import kernelindex_sdk as ki
from bench_adapters.common.names import slug
from bench_adapters.recording import environment as env
from bench_adapters.recording.bundles import write_bundle
from bench_adapters.recording.describe import implementation_of, workload_for
from bench_adapters.recording.recorder import record
from bench_adapters.recording.session import Entry, results_table
from bench_adapters.recording.timing import (
    DoBenchTimer,
    FakeTimer,
    WallClockSettings,
    WallClockTimer,
    injected,
    quantile,
)

pytest_plugins = ["pytester"]

#: Few, short samples: real timing, cheap enough for the quick suite.
QUICK = WallClockSettings(warmup_ms=1.0, min_sample_ms=0.2, samples=7)
QUICK_OPTIONS = (
    "--kernelindex-samples=9",
    "--kernelindex-min-sample-ms=0.3",
    "--kernelindex-warmup-ms=2",
)
NO_GPU = env.environment_record(
    env.probe(
        0,
        env.Sources(
            nvml=lambda: (_ for _ in ()).throw(ModuleNotFoundError("pynvml")),
            nvidia_smi=lambda argv: (_ for _ in ()).throw(FileNotFoundError("nvidia-smi")),
            torch=lambda index: (_ for _ in ()).throw(ImportError("torch")),
        ),
    )
)


def work(n: int) -> int:
    return sum(i * i for i in range(n))


# --------------------------------------------------------------------------- the clock


def test_the_cpu_clock_calibrates_batches_and_keeps_every_sample() -> None:
    timer = WallClockTimer(QUICK)
    ms = timer.time(lambda: work(20), [])
    sampled = timer.last
    assert sampled is not None
    assert len(sampled.samples_ns) == QUICK.samples
    assert sampled.calls_per_sample > 1  # one call is far below a 0.2 ms sample
    assert sampled.warmup_calls >= 1 and sampled.resolution_ns >= 1
    assert ms[1] <= ms[0] <= ms[2]  # p20 <= median <= p80, in the settings' order
    ordered = sorted(sampled.samples_ns)
    assert ms[0] == pytest.approx(statistics.median(ordered) / 1e6)


def test_the_cpu_clock_notes_and_restores_the_gc_state() -> None:
    assert gc.isenabled()
    off = WallClockTimer(
        WallClockSettings(warmup_ms=0, min_sample_ms=0.1, samples=2, disable_gc=True)
    )
    off.time(lambda: None, [])
    assert off.last is not None and off.last.gc_enabled is False
    assert gc.isenabled()
    on = WallClockTimer(WallClockSettings(warmup_ms=0, min_sample_ms=0.1, samples=2))
    on.time(lambda: None, [])
    assert on.last is not None and on.last.gc_enabled is True


@given(st.lists(st.floats(0, 1e9), min_size=1, max_size=30), st.floats(0, 1), st.floats(0, 1))
def test_quantiles_are_ordered_and_the_middle_one_is_the_median(
    values: list[float], q1: float, q2: float
) -> None:
    ordered = sorted(values)
    low, high = sorted((q1, q2))
    assert ordered[0] <= quantile(ordered, low) <= quantile(ordered, high) <= ordered[-1]
    assert quantile(ordered, 0.5) == pytest.approx(statistics.median(ordered))


def test_a_cpu_recording_says_wall_clock_and_its_samples() -> None:
    recording = record(
        work,
        50,
        workload=workload_for("work", (50,)),
        implementation=implementation_of(work),
        protocol=QUICK,
        environment=NO_GPU,
    )
    assert recording.status == "passed" and recording.output == work(50)
    assert ki.validate(recording.bundle) == []
    assert recording.timer == "wall_clock" and recording.injected is None
    measurement = recording.bundle["protocol"]["spec"]["measurement"]
    assert measurement["timer"] == "wall_clock" and measurement["repetitions"] == 7
    assert measurement["harnessSettings"]["clock"] == "time.perf_counter_ns"
    spec = recording.bundle["run"]["spec"]
    assert "qualityFlags" not in spec
    timing = spec["timing"]
    assert timing["samples"] == 7 and recording.sampled is not None
    latency = timing["latencyNs"]
    assert latency["min"] <= latency["p20"] <= latency["median"] <= latency["p80"] <= latency["max"]
    assert spec["sourceNative"]["metrics"]["calls_per_sample"] == recording.sampled.calls_per_sample


def test_only_the_real_timers_are_not_injected() -> None:
    class Wrapped(WallClockTimer):
        pass

    assert injected(DoBenchTimer()) is None and injected(WallClockTimer()) is None
    assert injected(FakeTimer()) == "bench_adapters.recording.timing.FakeTimer"
    assert injected(Wrapped()) is not None  # a subclass may time anything: injected


def test_a_failed_run_through_an_injected_timer_is_flagged_too() -> None:
    recording = record(
        work,
        5,
        workload=workload_for("work", (5,)),
        implementation=implementation_of(work),
        reference=lambda n: -1,
        timer=FakeTimer(),
        environment=NO_GPU,
    )
    spec = recording.bundle["run"]["spec"]
    assert spec["status"] == "failed" and spec["qualityFlags"] == ["injected_timer"]
    assert recording.bundle["protocol"]["spec"]["measurement"]["timer"] == "unknown"


def _faked_records(folder: Path, times: int = 1) -> None:
    for _ in range(times):
        recording = record(
            work,
            400,
            workload=workload_for("work", (400,)),
            implementation=implementation_of(work),
            timer=FakeTimer(),
            environment=NO_GPU,
        )
        write_bundle(folder, recording.bundle)


def test_validate_ls_and_compare_show_a_run_of_an_injected_timer(tmp_path: Path) -> None:
    faked = tmp_path / "faked"
    _faked_records(faked, times=2)
    checked = run_subprocess(["validate", "-v", faked])
    assert checked.exit_code == 0
    assert checked.stdout.count("ok (Bundle record-injected-timer-work-") == 2
    listed = run_subprocess(["ls", faked])
    assert re.search(r"quality flags \(1\)\n +injected_timer +2", listed.stdout), listed.stdout
    compared = run_subprocess(["compare", faked])
    assert compared.exit_code == 0, compared.output
    assert "injected timer: not a measurement" in compared.stdout
    as_json = json.loads(run_subprocess(["compare", "--format", "json", faked]).stdout)
    assert '"injectedTimer": true' in json.dumps(as_json)


def test_compare_against_refuses_runs_of_an_injected_timer(tmp_path: Path) -> None:
    faked = tmp_path / "faked"
    _faked_records(faked)
    real = tmp_path / "real"
    measured = record(
        work,
        400,
        workload=workload_for("work", (400,)),
        implementation=implementation_of(work),
        protocol=QUICK,
        environment=NO_GPU,
    )
    write_bundle(real, measured.bundle)
    clean = run_subprocess(["compare", "--against", real, real])
    assert clean.exit_code == 0, clean.output
    for reference, candidate in ((faked, real), (real, faked)):
        judged = run_subprocess(["compare", "--against", reference, candidate])
        assert judged.exit_code == 1, judged.output
        assert "1 run timed by an injected timer: not measurements" in judged.output
    both = run_subprocess(["compare", "--against", faked, faked])
    assert both.exit_code == 1
    assert "[injected timer: not a measurement]" in both.stdout
    assert "2 runs timed by an injected timer" in both.output
    as_json = run_subprocess(["compare", "--against", faked, real, "--format", "json"])
    assert as_json.exit_code == 1 and '"injectedTimer": true' in as_json.stdout


def test_the_results_table_is_one_line_per_measurement_fastest_first() -> None:
    def recorded(fn: Any, n: int, timer: Any = None) -> Any:
        return record(
            fn,
            n,
            workload=workload_for("work", (n,)),
            implementation=implementation_of(fn),
            protocol=None if timer else QUICK,
            timer=timer,
            environment=NO_GPU,
        )

    entries = [
        Entry("test_slow[\x1b[31mred\nline]", recorded(work, 2000)),
        Entry("test_fast", recorded(work, 10)),
        Entry("test_faked", recorded(work, 10, FakeTimer([5.0, 4.0, 6.0]))),
        Entry("test_failed", recorded(lambda n: 1 // 0, 1)),
    ]
    lines = results_table(entries)
    assert len(lines) == 2 + len(entries)
    assert all("\n" not in line and "\x1b" not in line for line in lines)
    names = [line.split()[0] for line in lines[2:]]
    assert names[0] == "test_fast" and names[2] == "test_faked"
    assert names[-1] == "test_failed"
    assert lines[-1].split()[1] == "FAILED" and "ZeroDivisionError" in lines[-1]
    assert lines[4].endswith("unknown (injected FakeTimer)")
    assert lines[2].endswith("wall_clock") and " 7 " in lines[2]


# --------------------------------------------------------------------------- implementation


def test_code_of_this_repository_is_named_with_its_distribution_and_commit() -> None:
    spec = implementation_of(slug)["spec"]
    assert spec["entryPoint"] == "bench_adapters.common.names.slug"
    assert spec["package"]["name"] == "kernelindex-sdk" and spec["package"]["version"]
    source = spec["source"]
    assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?", source["revision"])
    assert source["path"] == "bench_adapters/common/names.py"


def test_the_standard_library_is_python_at_its_version() -> None:
    import platform

    spec = implementation_of(json.loads)["spec"]
    assert spec["package"] == {"name": "python", "version": platform.python_version()}
    assert spec["entryPoint"] == "json.loads" and "source" not in spec


def test_a_repository_is_named_without_credentials_and_dirty_when_changed(
    tmp_path: Path,
) -> None:
    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(tmp_path), *args], capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    git("remote", "add", "origin", "https://user:secret@example.com/team/kernels.git")
    module = tmp_path / "fastkernel_mod.py"
    module.write_text("def kernel(x):\n    return x\n")
    git("add", ".")
    git("commit", "-qm", "one")
    commit = git("rev-parse", "HEAD")
    module.write_text("def kernel(x):\n    return x + 0\n")  # changed, not committed
    namespace: dict[str, Any] = {"__name__": "fastkernel_mod"}
    code = compile(module.read_text(), str(module), "exec")
    exec(code, namespace)
    spec = implementation_of(namespace["kernel"])["spec"]
    assert spec["source"] == {
        "repository": "https://example.com/team/kernels.git",
        "revision": f"{commit}-dirty",
        "path": "fastkernel_mod.py",
    }
    assert "secret" not in json.dumps(spec)
    assert spec["entryPoint"] == "fastkernel_mod.kernel"


# --------------------------------------------------------------------------- pytest sessions

TESTS = """
import os

N = int(os.environ.get("KI_WORK", "400"))

def work(n):
    total = 0
    for i in range(n * N // 400):
        total += i * i
    return total

def test_work(kernel_bench):
    assert kernel_bench(work, 400) == work(400)

def test_sorted(kernel_bench):
    kernel_bench.measure(sorted, [3, 1, 2], timer="cpu")
"""

CONFTEST_FAKE = """
import pytest
from bench_adapters.recording.timing import FakeTimer

@pytest.fixture
def kernel_bench_timer():
    return FakeTimer([0.5, 0.4, 0.6])
"""


def _pytest(pytester: pytest.Pytester, *args: str, work: int = 400) -> Any:
    """A pytest session in its own process with kernelindex's plugin alone (as
    ``test_recording.py``'s sessions)."""
    pytester._monkeypatch.setenv("KI_WORK", str(work))
    pytester._monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    return pytester.runpytest_subprocess("-p", PLUGIN_MODULE, *QUICK_OPTIONS, *args)


def test_without_cuda_the_fixture_times_with_the_cpu_clock_and_shows_a_table(
    pytester: pytest.Pytester,
) -> None:
    if env.gpu_available()[0]:
        pytest.skip("this machine has CUDA: the fixture times with do_bench")
    pytester.makepyfile(test_cpu_kernels=TESTS)
    out = pytester.path / "records"
    result = _pytest(pytester, f"--kernelindex-out={out}")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*kernelindex: 2 measurements*",
            "name*median*p20–p80*samples*ops/s*timer",
            "test_*wall_clock",
            "test_*wall_clock",
        ]
    )
    result.stdout.fnmatch_lines(["test_work * 9 * wall_clock"])
    done = run_subprocess(["validate", "--strict-refs", out])
    assert done.exit_code == 0, done.output
    bundles = [json.loads(f.read_text()) for f in sorted(out.glob("*.json"))]
    assert {b["protocol"]["spec"]["measurement"]["timer"] for b in bundles} == {"wall_clock"}
    entries = {b["implementation"]["spec"]["entryPoint"] for b in bundles}
    assert entries == {"test_cpu_kernels.work", "builtins.sorted"}


def _verdict(result: Any, kernel: str) -> str:
    for line in result.stdout.lines:
        if f" {kernel} · forward" in line and line.split()[0] in (
            "SLOWER",
            "UNSURE",
            "FASTER",
            "SAME",
        ):
            return str(line.split()[0]).lower()
    raise AssertionError(f"no verdict for {kernel}:\n" + result.stdout.str())


#: Between two sessions a shared machine's speed drifts by tens of per cent: the gate's
#: threshold is set above that drift (the laws are the gate's, not this machine's).
GATE = ("--kernelindex-timer=cpu", "--kernelindex-threshold=50%")


def _reference(pytester: pytest.Pytester) -> Path:
    pytester.makepyfile(test_cpu_kernels=TESTS)
    reference = pytester.path / "reference"
    made = _pytest(pytester, "--kernelindex-timer=cpu", f"--kernelindex-out={reference}")
    made.assert_outcomes(passed=2)
    return reference


def test_the_gate_law_five_times_the_work_is_slower(pytester: pytest.Pytester) -> None:
    reference = _reference(pytester)
    gate = (*GATE, f"--kernelindex-compare={reference}", "--kernelindex-out=candidate")
    for _ in range(3):  # a burst of other work can widen the noise: unsure, then retry
        slower = _pytest(pytester, *gate, work=2000)
        if _verdict(slower, "work") != "unsure":
            break
    assert _verdict(slower, "work") == "slower", slower.stdout.str()
    assert slower.ret == 1
    # The unchanged test beside it may also come out slower on a busy machine: the law
    # is about the test made slower, whose verdict is asserted above.
    slower.stdout.re_match_lines([r".*kernelindex gate FAILED: [12] slower.*"])
    slower.assert_outcomes(passed=2)  # the tests passed; the session failed on the gate
    # The verdicts name the files the session wrote.
    slower.stdout.fnmatch_lines(["    candidate  * candidate/record-work-*.json"])


@pytest.mark.slow
def test_the_gate_law_the_same_test_unchanged_is_not_slower(pytester: pytest.Pytester) -> None:
    reference = _reference(pytester)
    for _ in range(3):  # other work in a burst can slow one session down: retry
        same = _pytest(pytester, *GATE, f"--kernelindex-compare={reference}")
        if same.ret == 0:
            break
    assert same.ret == 0, same.stdout.str()
    assert _verdict(same, "work") in ("same", "unsure")
    same.stdout.fnmatch_lines(["*kernelindex gate passed: no regression*"])


def test_the_gate_refuses_runs_of_an_injected_timer(pytester: pytest.Pytester) -> None:
    reference = pytester.path / "reference"
    _faked_records(reference)
    pytester.makeconftest(CONFTEST_FAKE)
    pytester.makepyfile(test_cpu_kernels=TESTS.split("def test_sorted")[0])
    judged = _pytest(pytester, f"--kernelindex-compare={reference}")
    judged.assert_outcomes(passed=1)
    assert judged.ret == 1
    # Both sides' runs (the reference's and the session's) are refused.
    judged.stdout.fnmatch_lines(["*kernelindex gate FAILED:*2 runs timed by an injected timer*"])


@pytest.mark.parametrize(
    ("option", "message"),
    variants(
        [
            ("--kernelindex-compare=nowhere", "*--kernelindex-compare 'nowhere': no such file*"),
            ("--kernelindex-fail-on=worse", "*--kernelindex-fail-on 'worse': not a verdict*"),
            ("--kernelindex-threshold=5", "*--kernelindex-threshold '5': give a fraction*"),
            ("--kernelindex-samples=0", "*kernelindex: samples must be >= 1*"),
            (
                "--kernelindex-compare=. -n 2",
                "*--kernelindex-compare judges * one process: add -n 0*",
            ),
        ],
        quick={0, 4},
        several=True,
    ),
)
def test_a_bad_option_is_one_line_and_a_usage_error(
    pytester: pytest.Pytester, option: str, message: str
) -> None:
    pytester.makepyfile(test_cpu_kernels=TESTS)
    if option.startswith("--kernelindex-fail-on") or option.startswith("--kernelindex-thr"):
        option = f"{option} --kernelindex-compare=."
    xdist = () if " -n " in option else ("-p", "no:xdist")
    result = pytester.runpytest_subprocess("-p", "no:randomly", *xdist, *option.split())
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert "Traceback" not in result.stderr.str()
