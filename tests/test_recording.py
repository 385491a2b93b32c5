"""The recorder (``record``), its helpers and the ``kernel_bench`` pytest fixture, on a CPU.

Everything but the timing: the timer is injected through the documented seam
(:class:`~bench_adapters.recording.timing.FakeTimer`, whose records say so), the
callables are plain Python (torch is not needed for the check, the statuses, the
records or the writing), and the pytest plugin runs in real pytest sessions
(pytester, in a subprocess).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from acceptance.support import PLUGIN_MODULE, run_subprocess

import kernelindex_sdk as ki
from bench_adapters.recording import environment as env
from bench_adapters.recording.bundles import InvalidBundle, write_bundle
from bench_adapters.recording.describe import implementation_for, workload_for
from bench_adapters.recording.recorder import protocol_record, record
from bench_adapters.recording.timing import FakeTimer, TimerSettings

pytest_plugins = ["pytester"]

ENVIRONMENT = env.environment_record(
    env.probe(
        0,
        env.Sources(
            nvml=lambda: (_ for _ in ()).throw(ModuleNotFoundError("pynvml")),
            nvidia_smi=lambda argv: (_ for _ in ()).throw(FileNotFoundError("nvidia-smi")),
            torch=lambda index: (_ for _ in ()).throw(ImportError("torch")),
        ),
    )
)


def add(a: int, b: int) -> int:
    return a + b


def _record(fn: Any = add, *args: Any, **options: Any) -> Any:
    options.setdefault("timer", FakeTimer([0.25, 0.2, 0.3]))
    return record(
        fn,
        *(args or (2, 3)),
        workload=workload_for("add", args or (2, 3)),
        implementation=implementation_for("attrs", fn=fn),
        environment=ENVIRONMENT,
        **options,
    )


def test_a_passed_run_is_a_valid_linked_bundle_with_the_timers_quantiles() -> None:
    timer = FakeTimer([0.25, 0.2, 0.3])
    recording = _record(timer=timer, reference=lambda a, b: 5)
    assert recording.status == "passed" and recording.output == 5
    assert timer.calls == 3
    bundle = recording.bundle
    assert ki.validate(bundle) == []
    spec = bundle["run"]["spec"]
    assert spec["timing"] == {"latencyNs": {"median": 250_000}, "primaryStatistic": "median"}
    assert [(m["statistic"], m["value"]) for m in spec["measurements"]] == [
        ("p20", 200_000),
        ("p80", 300_000),
    ]
    assert spec["protocolDigest"] == ki.digest(bundle["protocol"])
    assert spec["environmentDigest"] == ki.digest(bundle["environment"])
    assert spec["workloadDigest"] == ki.digest(bundle["workload"])
    assert spec["implementationDigest"] == ki.digest(bundle["implementation"])
    assert "first_call_ms" in spec["sourceNative"]["metrics"]
    # The fake timer measured nothing: the run and its protocol say so.
    assert spec["qualityFlags"] == ["injected_timer"]
    assert recording.injected == "bench_adapters.recording.timing.FakeTimer"
    assert recording.timer == "unknown"
    measurement = bundle["protocol"]["spec"]["measurement"]
    assert measurement == {
        "timer": "unknown",
        "primaryStatistic": "median",
        "quantiles": [0.5, 0.2, 0.8],
        "repetitionMs": 100.0,
        "flushL2Cache": True,
        "warmupMs": 25.0,
        "harnessSettings": {
            "injectedTimer": "bench_adapters.recording.timing.FakeTimer",
            "claimedTimer": "cuda_events",
        },
    }
    notes = bundle["protocol"]["spec"]["comparability"]["notes"]
    assert "not a measurement" in notes and "do_bench(" not in notes


def test_do_bench_settings_become_the_protocol() -> None:
    measurement = protocol_record(TimerSettings(), "1.0")["spec"]["measurement"]
    assert measurement == {
        "timer": "cuda_events",
        "primaryStatistic": "median",
        "quantiles": [0.5, 0.2, 0.8],
        "repetitionMs": 100.0,
        "flushL2Cache": True,
        "warmupMs": 25.0,
    }


def test_cuda_graph_settings_become_the_protocol() -> None:
    settings = TimerSettings(rep_ms=50.0, cuda_graph=True, flush_l2=False)
    protocol = protocol_record(settings, "1.0")
    measurement = protocol["spec"]["measurement"]
    assert measurement["timer"] == "cuda_graph" and measurement["flushL2Cache"] is False
    assert "warmupMs" not in measurement
    assert ki.validate(protocol) == []
    recording = _record(timer=FakeTimer(settings=settings))
    faked = recording.bundle["protocol"]["spec"]["measurement"]
    assert faked["timer"] == "unknown" and faked["harnessSettings"]["claimedTimer"] == "cuda_graph"
    assert ki.validate(recording.bundle) == []


def test_settings_do_bench_cannot_honour_are_refused() -> None:
    with pytest.raises(ValueError, match="always flushes"):
        TimerSettings(flush_l2=False)
    with pytest.raises(ValueError, match="median"):
        TimerSettings(quantiles=(0.2, 0.8))


def test_a_wrong_output_is_a_failed_run_never_timed() -> None:
    timer = FakeTimer()
    recording = _record(timer=timer, reference=lambda a, b: 6)
    assert recording.status == "failed"
    assert timer.calls == 0
    spec = recording.bundle["run"]["spec"]
    assert spec["status"] == "failed" and "timing" not in spec
    assert spec["reason"] == "output differs from the reference: 5 != reference 6"
    assert ki.validate(recording.bundle) == []


def test_a_reference_value_is_compared_too() -> None:
    assert _record(reference=5).status == "passed"
    assert _record(reference=4).status == "failed"


@pytest.mark.parametrize(
    "error",
    [MemoryError("cannot allocate"), RuntimeError("CUDA out of memory. Tried to allocate 2 GiB")],
)
def test_out_of_memory_is_status_oom(error: Exception) -> None:
    def kernel(a: int, b: int) -> int:
        raise error

    recording = _record(kernel)
    assert recording.status == "oom"
    assert recording.bundle["run"]["spec"]["reason"].startswith(
        "out of memory while running the first call"
    )
    assert ki.validate(recording.bundle) == []


def test_an_error_while_timing_is_failed_with_the_stage() -> None:
    calls = []

    def kernel(a: int, b: int) -> int:
        calls.append(1)
        if len(calls) > 1:
            raise ValueError("bad launch")
        return a + b

    recording = _record(kernel)
    assert recording.status == "failed"
    assert recording.reason == "error while timing: ValueError: bad launch"


def test_workload_from_tensor_shapes_and_dtypes() -> None:
    x = SimpleNamespace(shape=(4096, 1024), dtype="torch.bfloat16")
    w = SimpleNamespace(shape=(1024,), dtype="torch.float32")
    workload = workload_for("rms_norm", (x, w), {"eps": 1e-6}, pass_="forward")
    assert workload["spec"] == {
        "kernel": "rms_norm",
        "pass": "forward",
        "parameters": {"arg0": "4096x1024", "arg1": "1024", "arg1_dtype": "fp32", "eps": 1e-6},
        "dtype": "bf16",
    }
    assert ki.validate(workload) == []


def test_implementation_from_a_package_name_and_its_installed_version() -> None:
    import importlib.metadata

    record_ = implementation_for("attrs", fn=add, backend="triton")
    spec = record_["spec"]
    assert spec["package"] == {"name": "attrs", "version": importlib.metadata.version("attrs")}
    assert spec["entryPoint"] == "test_recording.add"
    assert ki.validate(record_) == []
    absent = implementation_for("surely-not-installed-pkg")
    assert absent["spec"]["package"] == {"name": "surely-not-installed-pkg"}


def test_write_bundle_validates_first_and_writes_once(tmp_path: Path) -> None:
    recording = _record()
    path = write_bundle(tmp_path / "out", recording.bundle)
    assert json.loads(path.read_text()) == recording.bundle
    done = run_subprocess(["validate", "--strict-refs", tmp_path / "out"])
    assert done.exit_code == 0, done.output
    broken = dict(recording.bundle)
    broken["workload"] = {**broken["workload"], "spec": {"kernel": "Not A Slug"}}
    with pytest.raises(InvalidBundle):
        write_bundle(tmp_path / "refused", broken)
    assert not (tmp_path / "refused").exists() or not list((tmp_path / "refused").iterdir())


# --------------------------------------------------------------------------- the fixture

CONFTEST_FAKE = """
import pytest
from bench_adapters.recording.timing import FakeTimer

@pytest.fixture
def kernel_bench_timer():
    return FakeTimer([0.5, 0.4, 0.6])
"""

TESTS = """
def add(a, b):
    return a + b

def test_measured(kernel_bench):
    assert kernel_bench(add, 2, 3) == 5

def test_checked(kernel_bench):
    kernel_bench.measure(add, 2, 3, kernel="add", reference=lambda a, b: 5)

def test_wrong(kernel_bench):
    kernel_bench.measure(add, 2, 3, reference=lambda a, b: 6)

def test_not_measured():
    assert True
"""


def _run_pytest(pytester: pytest.Pytester, *args: str) -> Any:
    """A pytest session in its own process with kernelindex's plugin alone, named by its
    module: the other plugins installed (hypothesis, playwright, xdist) would take most
    of its time to load; the entry point has a test of its own."""
    pytester._monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    return pytester.runpytest_subprocess("-p", PLUGIN_MODULE, *args)


@pytest.fixture
def faked(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project whose kernels' tests the fake timer measures."""
    pytester.makeconftest(CONFTEST_FAKE)
    pytester.makepyfile(test_kernels=TESTS)
    return pytester


def test_fixture_with_a_fake_timer_writes_one_valid_bundle_per_measured_test(
    faked: pytest.Pytester,
) -> None:
    out = faked.path / "records"
    result = _run_pytest(faked, f"--kernelindex-out={out}")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*kernel_bench: failed: output differs from the reference*"])
    files = sorted(out.glob("*.json"))
    assert len(files) == 3  # two passed runs and the failed one: written all the same
    runs = [json.loads(f.read_text())["run"]["spec"] for f in files]
    assert sorted(run["status"] for run in runs) == ["failed", "passed", "passed"]
    assert all(run["qualityFlags"] == ["injected_timer"] for run in runs)
    done = run_subprocess(["validate", "--strict-refs", out])
    assert done.exit_code == 0, done.output
    # The table at the end names the timer: injected, never a clock it did not use.
    result.stdout.fnmatch_lines(
        ["*kernelindex: 3 measurements*", "name*median*p20–p80*samples*ops/s*timer*"]
    )
    result.stdout.fnmatch_lines(["test_measured *500.0 µs*unknown (injected FakeTimer)"])


def test_fixture_output_that_cannot_be_written_fails_the_test_in_one_line(
    faked: pytest.Pytester,
) -> None:
    blocker = faked.path / "records"
    blocker.write_text("a file, not a folder\n")
    result = _run_pytest(faked, f"--kernelindex-out={blocker}", "-k", "test_measured")
    result.assert_outcomes(failed=1, deselected=3)
    result.stdout.fnmatch_lines(["*kernel_bench: --kernelindex-out: *cannot write*"])
    assert "Traceback" not in result.stdout.str()
    assert "During handling" not in result.stdout.str()
    assert blocker.read_text() == "a file, not a folder\n"


def test_fixture_asked_for_cuda_without_it_skips_with_the_reason(
    pytester: pytest.Pytester,
) -> None:
    if env.gpu_available()[0]:
        pytest.skip("this machine has CUDA")
    pytester.makepyfile(test_kernels=TESTS)
    out = pytester.path / "records"
    result = _run_pytest(pytester, f"--kernelindex-out={out}", "--kernelindex-timer=gpu", "-rs")
    result.assert_outcomes(passed=1, skipped=3)
    result.stdout.fnmatch_lines(["*kernel_bench needs a CUDA device*"])
    assert not out.exists()


def test_the_plugin_is_registered_by_its_entry_point() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--help", "-p", "no:randomly"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "--kernelindex-out=DIR" in done.stdout


# --------------------------------------------------------------------------- with torch


def test_tensor_outputs_are_compared_with_torchs_tolerances() -> None:
    torch = pytest.importorskip("torch", reason="comparing tensors needs torch (the liger extra)")
    x = torch.ones(8, 8)
    assert _record(lambda a, b: a + b, x, x, reference=lambda a, b: 2 * a).status == "passed"
    wrong = _record(lambda a, b: a + b, x, x, reference=lambda a, b: 3 * a)
    assert wrong.status == "failed" and "Mismatched elements" in wrong.reason
    workload = workload_for("add", (x.to(torch.bfloat16), x))
    assert workload["spec"]["dtype"] == "bf16"
    assert workload["spec"]["parameters"]["arg1_dtype"] == "fp32"
