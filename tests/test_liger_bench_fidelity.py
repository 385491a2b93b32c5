"""``bench liger`` times what Liger's own scripts time, and records what a run saw.

On a CPU, with stand-ins: the callable each kernel's pass times and its arguments
(a fake ``torch`` records every autograd call), the call style in the protocol and its
digest, the warm-up and rep of Liger's script, the GPU-only figure and the host-bound
rule, the samples behind the quantiles, the gate's tolerance and largest error, and
NVML's readings while the calls were timed.
"""

from __future__ import annotations

import subprocess
import sys
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nvml_fake import FakeNvml
from profiles import examples
from test_liger_bench import H200, FakeBackend, FakeTimer, make_tools, seed_item

import kernelindex_sdk as ki
from bench_adapters.liger.catalog import load_catalog
from bench_adapters.liger_bench.assemble import Assembler
from bench_adapters.liger_bench.calls import KERNELINDEX, UPSTREAM, timed_call
from bench_adapters.liger_bench.catalog import CallSpec, load_bench_catalog
from bench_adapters.liger_bench.probes import TimerSettings
from bench_adapters.liger_bench.runner import Runner, Tools
from bench_adapters.liger_bench.setups import Case
from bench_adapters.liger_bench.torch_backend import TorchPrepared
from bench_adapters.recording import hostbound
from bench_adapters.recording.observe import NvmlMonitor, Watch, summary

REPO = Path(__file__).resolve().parent.parent

# --------------------------------------------------------------------------- a fake torch


@attrs.define(eq=False)
class T:
    """A tensor stand-in: a name, a size, and the ``.grad`` do_bench resets."""

    name: str
    size: int = 4
    grad: Any = None
    dtype: str = "bf16"
    device: str = "cpu"

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.size,)

    def numel(self) -> int:
        return self.size

    def to(self, dtype: Any) -> T:
        return self


class FakeTorch:
    """Records every autograd call the timed callable makes, with its arguments."""

    float32 = "fp32"

    def __init__(self) -> None:
        self.log: list[tuple[Any, ...]] = []
        self.autograd = types.SimpleNamespace(grad=self._grad, backward=self._backward)

    def _grad(self, outputs: Any, inputs: Any, grads: Any, **options: Any) -> None:
        self.log.append(("autograd.grad", _names(outputs), _names(inputs), _names(grads), options))

    def _backward(self, outputs: Any, grads: Any = None, **options: Any) -> None:
        self.log.append(("autograd.backward", _names(outputs), _names(grads), options))

    def Generator(self, device: Any) -> Any:
        return types.SimpleNamespace(manual_seed=lambda seed: None)

    def randn(self, shape: Any, **options: Any) -> T:
        return T("dy")

    def ones_like(self, tensor: T) -> T:
        return T("ones", 1)

    def randn_like(self, tensor: T) -> T:
        return T("fresh")


def _names(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, (tuple, list)):
        return tuple(_names(v) for v in value)
    return value.name


#: Each kernel's leaves as its setup names them, and its forward's outputs.
LEAVES = {
    "geglu": ["x", "gate_proj.weight", "up_proj.weight", "down_proj.weight"],
    "llama4_rope": ["q", "k"],
    "distill_cosine_loss": ["student_input", "student_weight"],
    "relu_squared": ["x"],
}
OUTPUTS = {"llama4_rope": ("q_out", "k_out"), "distill_cosine_loss": ("loss",)}


def timed(kernel: str, pass_: str, style: str) -> tuple[FakeTorch, list[str]]:
    """Build ``kernel``'s ``pass_`` as ``style`` times it, call it once; the autograd
    calls it made and the leaves whose ``.grad`` do_bench would reset."""
    torch = FakeTorch()
    leaves = [(name, T(name)) for name in LEAVES[kernel]]
    outputs = OUTPUTS.get(kernel, ("y",))

    def forward() -> Any:
        made = tuple(T(name, 1 if name == "loss" else 4) for name in outputs)
        return made if len(made) > 1 else made[0]

    call = timed_call(load_bench_catalog().kernels[kernel], pass_, style)
    device = types.SimpleNamespace(type="cpu")
    prepared = TorchPrepared(torch, Case(forward, leaves), pass_, 0, device)
    fn, grads = prepared.timed(call.spec)
    torch.log.clear()  # what set-up did is not timed
    fn()
    return torch, [grad.name for grad in grads]


# --------------------------------------------------------------------------- which call


@pytest.mark.parametrize(
    ("kernel", "pass_", "call", "resets"),
    [
        # Liger's scripts at the seeds' commits (../shared/liger-upstream/README.md).
        (
            "llama4_rope",
            "backward",
            (
                "autograd.grad",
                ("q_out", "k_out"),
                ("q", "k"),
                ("dy", "dy"),
                {"allow_unused": True, "retain_graph": True},
            ),
            ["q", "k"],
        ),
        (
            "llama4_rope",
            "full",
            (
                "autograd.grad",
                ("q_out", "k_out"),
                ("q", "k"),
                ("dy", "dy"),
                {"allow_unused": True, "retain_graph": False},
            ),
            ["q", "k"],
        ),
        (
            "distill_cosine_loss",
            "full",
            ("autograd.backward", ("loss",), None, {"retain_graph": False}),
            [],  # nothing reset: the student's gradients accumulate
        ),
        (
            "geglu",
            "backward",
            ("autograd.backward", ("y",), ("dy",), {"retain_graph": True}),
            ["x"],  # the three weights' gradients accumulate
        ),
        (
            "geglu",
            "full",
            ("autograd.backward", ("y",), ("fresh",), {"retain_graph": True}),
            ["x"],
        ),
        (
            "relu_squared",
            "backward",
            ("autograd.backward", ("y",), ("dy",), {"retain_graph": True}),
            ["x"],
        ),
    ],
)
def test_the_upstream_style_times_the_call_of_liger_s_own_script(
    kernel: str, pass_: str, call: tuple[Any, ...], resets: list[str]
) -> None:
    torch, grads = timed(kernel, pass_, UPSTREAM)
    assert torch.log == [call]
    assert grads == resets


@pytest.mark.parametrize("kernel", sorted(LEAVES))
@pytest.mark.parametrize("pass_", ["forward", "backward", "full"])
def test_the_kernelindex_style_keeps_one_call_for_every_kernel(kernel: str, pass_: str) -> None:
    torch, grads = timed(kernel, pass_, KERNELINDEX)
    if pass_ == "forward":
        assert torch.log == [] and grads == []
        return
    upstream = tuple("ones" if o == "loss" else "dy" for o in OUTPUTS.get(kernel, ("y",)))
    retain = {"retain_graph": pass_ == "backward"}
    assert torch.log == [("autograd.backward", OUTPUTS.get(kernel, ("y",)), upstream, retain)]
    assert grads == LEAVES[kernel]  # every input and parameter reset


@pytest.mark.parametrize("kernel", sorted(LEAVES))
def test_every_upstream_forward_times_the_forward_alone(kernel: str) -> None:
    torch, grads = timed(kernel, "forward", UPSTREAM)
    spec = load_bench_catalog().kernels[kernel].upstream
    assert spec is not None and torch.log == []
    assert grads == list(spec.passes["forward"].grad_to_none or ())


def test_a_reset_of_a_leaf_the_setup_lacks_is_an_error() -> None:
    prepared = TorchPrepared(
        FakeTorch(),
        Case(lambda: T("y"), [("x", T("x"))]),
        "backward",
        0,
        types.SimpleNamespace(type="cpu"),
    )
    with pytest.raises(LookupError, match="no leaf named q"):
        prepared.timed(CallSpec("backward", grad_to_none=("q",)))


# --------------------------------------------------------------------------- timer and protocol


class SettingsTimer(FakeTimer):
    """Records the settings it timed with, and says how many samples it took."""

    def __init__(self, samples: int | None = None, ms: Any = None) -> None:
        super().__init__(ms)
        self.seen: list[TimerSettings] = []
        self.samples = samples

    def time(self, fn: Callable[[], object], grad_to_none: Sequence[Any]) -> tuple[float, ...]:
        self.seen.append(self.settings)
        return super().time(fn, grad_to_none)


@pytest.mark.parametrize(
    ("kernel", "rep"),
    [
        ("geglu", 10.0),
        ("llama4_rope", 400.0),
        ("distill_cosine_loss", 100.0),
        ("relu_squared", 500.0),
    ],
)
def test_the_upstream_style_uses_the_script_s_rep_and_says_so(kernel: str, rep: float) -> None:
    timer = SettingsTimer(samples=37)
    outcome = Runner(make_tools(timer=timer)).run_one(seed_item(kernel), "liger")
    assert outcome.status == "passed"
    assert [(s.warmup_ms, s.rep_ms) for s in timer.seen] == [(25.0, rep)]
    assert timer.settings == TimerSettings()  # the sweep's timer is left as it was
    bundle = Assembler(load_catalog(), H200, TimerSettings(), 10, "0.1.0").bundle(outcome)
    assert ki.validate(bundle) == []
    measurement = bundle["protocol"]["spec"]["measurement"]
    assert measurement["repetitionMs"] == rep
    settings_ = measurement["harnessSettings"]
    assert settings_["callStyle"] == "upstream" and settings_["upstreamScript"].endswith(
        load_bench_catalog().kernels[kernel].upstream.commit[:8]  # type: ignore[union-attr]
    )
    assert bundle["protocol"]["metadata"]["name"].startswith(
        f"kernelindex-bench-liger-upstream-{kernel.replace('_', '-')}-do-bench-"
    )
    # The number of samples behind the quantiles.
    assert bundle["run"]["spec"]["timing"]["samples"] == 37


def test_protocols_timing_different_calls_have_different_digests() -> None:
    def protocol_digest(style: str, kernel: str = "llama4_rope") -> str:
        tools = attrs.evolve(make_tools(), call_style=style)
        outcome = Runner(tools).run_one(seed_item(kernel), "liger")
        bundle = Assembler(load_catalog(), H200, TimerSettings(), 10, "0.1.0").bundle(outcome)
        return str(bundle["run"]["spec"]["protocolDigest"])

    upstream, kernelindex = protocol_digest(UPSTREAM), protocol_digest(KERNELINDEX)
    assert upstream != kernelindex
    # Two kernels' upstream calls differ too; one kernel's providers share theirs.
    assert protocol_digest(UPSTREAM, "relu_squared") != upstream
    tools = make_tools()
    liger, reference = (
        Runner(tools).run_one(seed_item("llama4_rope"), provider)
        for provider in ("liger", "huggingface")
    )
    assembler = Assembler(load_catalog(), H200, TimerSettings(), 10, "0.1.0")
    digests = {assembler.bundle(o)["run"]["spec"]["protocolDigest"] for o in (liger, reference)}
    assert len(digests) == 1


# --------------------------------------------------------------------------- GPU-only, host-bound


class GraphTimer(FakeTimer):
    def __init__(self, median: float, fail: bool = False) -> None:
        super().__init__({"liger": (median, median * 0.9, median * 1.1)})
        self.settings = hostbound.graph_settings()
        self.fail = fail
        self.samples = 10

    def time(self, fn: Callable[[], object], grad_to_none: Sequence[Any]) -> tuple[float, ...]:
        if self.fail:
            raise RuntimeError("cudaErrorStreamCaptureInvalidated")
        return super().time(fn, grad_to_none)


def _run(median: float, gpu: float | None, fail: bool = False) -> Any:
    timer = FakeTimer({"liger": (median, median * 0.9, median * 1.1)})
    tools = make_tools(timer=timer)
    if gpu is not None:
        tools = attrs.evolve(tools, gpu_timer=GraphTimer(gpu, fail))
    outcome = Runner(tools).run_one(seed_item("relu_squared"), "liger")
    bundle = Assembler(load_catalog(), H200, TimerSettings(), 10, "0.1.0").bundle(outcome)
    return outcome, bundle


positive = st.floats(min_value=1e-4, max_value=100.0, allow_nan=False)


@settings(max_examples=examples(100), deadline=None)
@given(median=positive, gpu=positive)
def test_a_run_is_host_bound_exactly_when_its_median_is_over_twice_the_gpu_s_time(
    median: float, gpu: float
) -> None:
    assert hostbound.is_host_bound(median, gpu) == (median > 2 * gpu)
    _, bundle = _run(median, gpu)
    assert ki.validate(bundle) == []
    flags = bundle["run"]["spec"].get("qualityFlags", [])
    assert (hostbound.HOST_BOUND in flags) == (median > 2 * gpu)
    metrics = bundle["run"]["spec"]["sourceNative"]["metrics"]
    assert metrics["gpu_only_ms_50"] == gpu and metrics["gpu_only_samples"] == 10
    assert metrics["gpu_only_ms_20"] == gpu * 0.9 and metrics["gpu_only_ms_80"] == gpu * 1.1


def test_the_relu_squared_h200_figures_are_host_bound() -> None:
    """The 2026-12-04 H200 run: 0.117 ms median, 0.0085 ms as a CUDA graph replay."""
    outcome, bundle = _run(0.1168, 0.0085)
    assert bundle["run"]["spec"]["qualityFlags"] == ["host-bound"]
    from bench_adapters.liger_bench.bench import format_median

    assert format_median(outcome) == "0.1168 ms host-bound (GPU 0.0085 ms)"


def test_a_graph_that_cannot_be_captured_flags_the_run_and_never_fails_it() -> None:
    outcome, bundle = _run(0.1, 0.01, fail=True)
    assert outcome.status == "passed"
    assert bundle["run"]["spec"]["qualityFlags"] == ["gpu-only-unmeasured"]
    assert not any(
        k.startswith("gpu_only") for k in bundle["run"]["spec"]["sourceNative"]["metrics"]
    )
    _, without = _run(0.1, None)  # no GPU-only timer: nothing said either way
    assert "qualityFlags" not in without["run"]["spec"]


# --------------------------------------------------------------------------- NVML while timed


def _nvml(**device: Any) -> FakeNvml:
    nvml = FakeNvml.from_file("h200-nvml.json")
    nvml.answers["devices"][0].update(
        {
            "nvmlDeviceGetClockInfo": {"1": 1980, "2": 3201},
            "nvmlDeviceGetTemperature": 41,
            "nvmlDeviceGetPowerUsage": 123_456,
            "nvmlDeviceGetCurrentClocksEventReasons": 4,
            **device,
        }
    )
    return nvml


def test_nvml_readings_are_summarized_and_refused_ones_left_out() -> None:
    nvml = _nvml()
    monitor = NvmlMonitor(0, nvml=lambda: nvml)
    assert monitor.sample() == {
        "sm_clock_mhz": 1980,
        "mem_clock_mhz": 3201,
        "temperature_c": 41,
        "power_w": pytest.approx(123.456),
        "throttle_reasons": 4,
    }
    refused = _nvml(nvmlDeviceGetPowerUsage={"error": "NVMLError_NotSupported"})
    assert "power_w" not in NvmlMonitor(0, nvml=lambda: refused).sample()
    samples = [
        {"sm_clock_mhz": 1980, "temperature_c": 40, "throttle_reasons": 0},
        {"sm_clock_mhz": 1755, "temperature_c": 47, "throttle_reasons": 4, "power_w": 300.5},
        {"sm_clock_mhz": 1980, "throttle_reasons": 1},
    ]
    assert summary(samples) == {
        "nvml_sm_clock_mhz_min": 1755,
        "nvml_sm_clock_mhz_max": 1980,
        "nvml_temperature_c_max": 47,
        "nvml_power_w_max": 300.5,
        "nvml_throttle_reasons": 5,
        "nvml_samples": 3,
    }
    assert summary([]) == {} and summary([{}]) == {}


class Counting:
    def __init__(self, fail_after: int | None = None) -> None:
        self.count = 0
        self.fail_after = fail_after

    def sample(self) -> dict[str, float]:
        self.count += 1
        if self.fail_after is not None and self.count > self.fail_after:
            raise RuntimeError("NVML went away")
        return {"sm_clock_mhz": 1000 + self.count}


def test_a_watch_samples_on_entry_and_exit_and_survives_a_failing_monitor() -> None:
    monitor = Counting()
    with Watch(monitor, interval=0) as watch:
        pass
    assert monitor.count == 2 and watch.summary()["nvml_samples"] == 2
    broken = Counting(fail_after=1)
    with Watch(broken, interval=0) as watch:
        pass
    assert len(watch.samples) == 1


def test_the_run_records_what_nvml_saw_while_it_was_timed() -> None:
    nvml = _nvml()
    tools = attrs.evolve(
        make_tools(), monitor=NvmlMonitor(0, nvml=lambda: nvml), monitor_interval=0
    )
    outcome = Runner(tools).run_one(seed_item("geglu"), "liger")
    metrics = Assembler(load_catalog(), H200, TimerSettings(), 10, "0.1.0").bundle(outcome)["run"][
        "spec"
    ]["sourceNative"]["metrics"]
    assert metrics["nvml_sm_clock_mhz_min"] == metrics["nvml_sm_clock_mhz_max"] == 1980
    assert metrics["nvml_throttle_reasons"] == 4 and metrics["nvml_samples"] == 2


# --------------------------------------------------------------------------- gate, memory, CLI


def test_the_gate_s_tolerance_and_largest_error_are_recorded() -> None:
    backend = FakeBackend(outputs={"liger": [1.0, 2.0, 3.01], "torch": [1.0, 2.0, 3.0]})
    outcome = Runner(make_tools(backend)).run_one(seed_item("relu_squared"), "liger")
    assert outcome.status == "passed"
    assert outcome.native["gate_atol"] == 0.05 and outcome.native["gate_rtol"] == 0.05
    assert outcome.native["gate_max_abs_error"] == pytest.approx(0.01)
    assert outcome.native["gate_max_error_ratio"] == pytest.approx(0.2)


def test_cli_help_names_the_call_style_and_refuses_an_unknown_one() -> None:
    help_ = subprocess.run(
        [sys.executable, "-m", "kernelindex_sdk.cli.main", "bench", "liger", "--help"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert help_.returncode == 0 and "--call-style [upstream|kernelindex]" in help_.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "kernelindex_sdk.cli.main", "bench", "liger", "--kernel", "geglu",
         "--call-style", "liger", "--dry-run"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )  # fmt: skip
    assert bad.returncode == 2 and "'liger' is not one of 'upstream', 'kernelindex'" in bad.stderr


def test_cli_passes_the_call_style_and_whether_timing_was_asked_for(tmp_path: Path) -> None:
    from bench_adapters.bench_cli import BenchLigerOptions, run_bench_liger

    seen: list[Any] = []

    def factory(settings: Any) -> Tools:
        seen.append(settings)
        return make_tools()

    for options in (
        BenchLigerOptions(kernels=("relu_squared",), passes=("backward",), x_values=(512,)),
        BenchLigerOptions(
            kernels=("relu_squared",),
            passes=("backward",),
            x_values=(512,),
            rep_ms=7.0,
            call_style="kernelindex",
        ),
    ):
        out = tmp_path / str(len(seen))
        options = attrs.evolve(options, out=str(out))
        assert run_bench_liger(options, tools_factory=factory) == 0
    assert [(s.call_style, s.fixed_timing, s.timer.rep_ms) for s in seen] == [
        ("upstream", False, 100.0),
        ("kernelindex", True, 7.0),
    ]


def test_device_memory_has_one_source_the_environment_record_s(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """NVML's total, as the environment record states it; never torch's smaller figure."""
    from bench_adapters.liger_bench.probes import CudaDevice
    from bench_adapters.recording import environment

    props = types.SimpleNamespace(name="NVIDIA H200", major=9, minor=0, total_memory=150109880320)
    fake = types.SimpleNamespace(
        cuda=types.SimpleNamespace(get_device_properties=lambda index: props),
        version=types.SimpleNamespace(cuda="13.0"),
    )
    monkeypatch.setattr(CudaDevice, "_torch", lambda self: fake)
    nvml = FakeNvml.from_file("h200-nvml.json")
    info = CudaDevice(sources=environment.Sources(nvml=lambda: nvml)).describe()
    assert info.memory_bytes == 150754820096
    from bench_adapters.liger_bench.assemble import environment_record

    assert (
        environment_record(info, load_catalog())["spec"]["hardware"]["memoryBytes"] == 150754820096
    )


@pytest.mark.parametrize("all_supported", [True, False])
def test_do_bench_timer_counts_its_samples_and_takes_quantiles_as_triton_does(
    monkeypatch: pytest.MonkeyPatch, all_supported: bool
) -> None:
    """``return_mode="all"``: every sample, the quantiles interpolated as do_bench's;
    a triton that cannot return its samples is asked for the quantiles instead."""
    from bench_adapters.recording.timing import DoBenchTimer

    asked: list[dict[str, Any]] = []

    def do_bench(fn: Any, **options: Any) -> Any:
        asked.append(options)
        if options.get("return_mode") == "all":
            if not all_supported:
                raise AssertionError("return_mode")
            return [4.0, 1.0, 3.0, 2.0, 5.0]
        return [3.0, 1.8, 4.2]

    testing = types.SimpleNamespace(do_bench=do_bench)
    monkeypatch.setitem(sys.modules, "triton", types.SimpleNamespace(testing=testing))
    monkeypatch.setitem(sys.modules, "triton.testing", testing)
    timer = DoBenchTimer(TimerSettings(warmup_ms=25.0, rep_ms=400.0))
    ms = timer.time(lambda: None, [])
    assert ms == (3.0, 1.8, 4.2)
    assert timer.samples == (5 if all_supported else None)
    assert asked[0] == {
        "warmup": 25.0,
        "rep": 400.0,
        "grad_to_none": None,
        "quantiles": None,
        "return_mode": "all",
    }


# --------------------------------------------------------------------------- host-bound shown


def _write_runs(folder: Path, runs: list[tuple[str, float, float, str]]) -> None:
    """Bundles of ReLU² backward: (provider, median ms, GPU-only ms, driver) each; the
    driver makes the environment (the host) differ."""
    from bench_adapters.recording.bundles import write_bundle

    for provider, median, gpu, driver in runs:
        timer = FakeTimer({provider: (median, median * 0.95, median * 1.05)})
        graph = GraphTimer(gpu)
        graph.ms = {provider: (gpu, gpu * 0.95, gpu * 1.05)}
        tools = attrs.evolve(make_tools(timer=timer), gpu_timer=graph)
        outcome = Runner(tools).run_one(seed_item("relu_squared"), provider)
        info = attrs.evolve(H200, software={**H200.software, "driver": driver})
        write_bundle(
            folder, Assembler(load_catalog(), info, TimerSettings(), 10, "0.1.0").bundle(outcome)
        )


def _kernelindex(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kernelindex_sdk.cli.main", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )


def test_ls_and_compare_show_a_host_bound_run_and_say_what_it_means(tmp_path: Path) -> None:
    _write_runs(
        tmp_path,
        [("liger", 0.117, 0.0085, "580.159.04"), ("torch", 0.0975, 0.09, "580.100.00")],
    )
    listed = _kernelindex("ls", str(tmp_path))
    assert listed.returncode == 0 and "host-bound" in listed.stdout
    for fmt in ("text", "markdown"):
        shown = _kernelindex("compare", str(tmp_path), "--format", fmt, "--by-shape")
        assert shown.returncode == 0, shown.stderr
        assert "‡" in shown.stdout and "host-bound: the median is over twice" in shown.stdout
        assert "host-bound runs beside runs of another environment" in shown.stdout
    plain = _kernelindex("compare", str(tmp_path))
    assert "117.0 µs‡" in plain.stdout and "97.50 µs‡" not in plain.stdout


def test_compare_against_never_pairs_host_bound_runs_of_two_hosts_silently(tmp_path: Path) -> None:
    reference, candidate, same_host = tmp_path / "ref", tmp_path / "cand", tmp_path / "same"
    _write_runs(reference, [("liger", 0.0106, 0.0085, "550.90.07")])
    _write_runs(candidate, [("liger", 0.117, 0.0085, "580.159.04")])
    _write_runs(same_host, [("liger", 0.120, 0.0085, "550.90.07")])
    for fmt in ("text", "markdown", "json", "csv"):
        paired = _kernelindex(
            "compare", "--against", str(reference), str(candidate), "--format", fmt
        )
        assert paired.returncode in (0, 1), paired.stderr
        assert "the candidate host-bound" in paired.stdout
        assert "different environments, so the ratio is the hosts'" in paired.stdout
    one_host = _kernelindex("compare", "--against", str(reference), str(same_host))
    assert "the candidate host-bound" in one_host.stdout
    assert "different environments" not in one_host.stdout


def test_gpu_check_takes_the_call_style_and_the_style_s_timing_unless_asked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from bench_adapters.liger_bench.gpu_check import bench_settings, parse_args

    default = bench_settings(parse_args([]))
    assert (default.call_style, default.fixed_timing) == ("upstream", False)
    asked = bench_settings(parse_args(["--call-style", "kernelindex", "--rep-ms", "50"]))
    assert (asked.call_style, asked.fixed_timing, asked.timer.rep_ms) == ("kernelindex", True, 50.0)
    with pytest.raises(SystemExit) as stop:
        parse_args(["--call-style", "liger"])
    assert stop.value.code == 2
    assert "invalid choice: 'liger'" in capsys.readouterr().err
