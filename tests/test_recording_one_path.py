"""``record()`` and ``kernelindex bench liger`` measure through one path (issue #31).

Both run :func:`bench_adapters.recording.measure.measure`: the same error gives the
same reason in both, out of memory is one rule, the protocol states the settings of
the timer (and memory probe) that measured, and a failure of the correctness check
itself is a failed run, never a crashed sweep. The stand-ins are ``test_liger_bench``'s
and the recorder's seam (:class:`~bench_adapters.recording.timing.FakeTimer`); no
torch, no GPU.
"""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import Any

import attrs
import pytest
from test_liger_bench import FakeBackend, FakeMemory, FakeTimer, make_tools, seed_item
from test_recording import _record

import kernelindex_sdk as ki
from bench_adapters.liger.catalog import load_catalog
from bench_adapters.liger_bench.assemble import Assembler
from bench_adapters.liger_bench.bench import BenchSettings, run_bench
from bench_adapters.liger_bench.catalog import load_bench_catalog
from bench_adapters.liger_bench.probes import CudaDevice, TimerSettings
from bench_adapters.liger_bench.runner import Runner
from bench_adapters.recording import measure
from bench_adapters.recording import timing as recorder_timing

#: An error text longer than a reason quotes.
LONG = "CUDA error: an illegal memory access was encountered " + "x" * 900


def test_the_same_error_while_timing_is_the_same_reason_in_both() -> None:
    """One classification and one description: bench liger's timer error and record()'s."""

    class Broken(recorder_timing.FakeTimer):
        def time(self, fn: Any, grad_to_none: Any) -> tuple[float, ...]:
            raise RuntimeError(LONG)

    recording = _record(timer=Broken())
    timer = FakeTimer()
    timer.raise_for["liger"] = RuntimeError(LONG)
    outcome = Runner(make_tools(timer=timer)).run_one(seed_item("relu_squared"), "liger")
    assert recording.status == outcome.status == "failed"
    assert recording.reason == outcome.reason
    assert outcome.reason is not None and outcome.reason.endswith("x…")
    assert len(outcome.reason) == len("error while timing: RuntimeError: ") + 600 + 1


def test_a_check_that_raises_is_a_failed_run_not_a_crashed_sweep() -> None:
    """The gate runs as the check step: an error comparing is the run's, with its stage."""

    class Raising(FakeBackend):
        def compare(self, actual: Any, expected: Any, tolerance: Any) -> str | None:
            raise ValueError("shapes (4096, 512) and (4096, 511) differ")

    timer = FakeTimer()
    item = seed_item("relu_squared")
    outcomes = Runner(make_tools(Raising(), timer)).run([item])
    assert [o.status for o in outcomes] == ["failed", "passed"]  # liger, then torch
    assert outcomes[0].reason == (
        "error while checking against the reference: "
        "ValueError: shapes (4096, 512) and (4096, 511) differ"
    )
    assert outcomes[0].native == {"first_call_ms": 1500.0}
    assert [provider for provider, _ in timer.calls] == ["torch"]  # never timed


def test_the_cuda_device_has_the_recorders_out_of_memory_rule() -> None:
    errors = [
        MemoryError("cannot allocate"),
        RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"),
        RuntimeError("out of resource: shared memory"),
    ]
    device = CudaDevice()
    assert [device.is_out_of_memory(e) for e in errors] == [
        measure.is_out_of_memory(e) for e in errors
    ]
    assert [measure.is_out_of_memory(e) for e in errors] == [True, True, False]


def test_a_cuda_graph_timer_is_what_bench_liger_states() -> None:
    """The protocol's measurement comes from the timer's settings, as record()'s does."""
    settings = TimerSettings(rep_ms=50.0, cuda_graph=True, flush_l2=False)
    assembler = Assembler(load_catalog(), make_tools().device.describe(), settings, 10, "0.1.0")
    protocol = assembler.protocol("speed", "backward")
    spec = protocol["spec"]
    assert spec["measurement"] == {
        "timer": "cuda_graph",
        "primaryStatistic": "median",
        "quantiles": [0.5, 0.2, 0.8],
        "repetitionMs": 50.0,
        "flushL2Cache": False,
        "gradToNone": True,
        "harnessSettings": {
            "callStyle": "kernelindex",
            "timedCall": "torch.autograd.backward(outputs, dy, retain_graph=True)",
            "gradToNone": "every leaf",
            "otherGradients": "none accumulated",
        },
    }
    notes = spec["comparability"]["notes"]
    assert "do_bench_cudagraph(rep=50" in notes and "L2 cache not flushed" in notes
    assert "CUDA events" not in notes
    assert ki.validate(protocol) == []


def test_run_bench_states_the_settings_of_the_tools_that_measured(tmp_path: Path) -> None:
    """BenchSettings builds the real tools; injected ones are what the protocol states."""
    catalog = load_bench_catalog()
    item = seed_item("relu_squared", providers=("torch",))
    timer = FakeTimer()
    timer.settings = TimerSettings(warmup_ms=5.0, rep_ms=20.0)
    # Warm-up and rep asked for: the upstream call style does not replace them.
    tools = attrs.evolve(make_tools(timer=timer, memory=FakeMemory([100, 200])), fixed_timing=True)
    written = run_bench(
        [item, attrs.evolve(item, metric="memory")], catalog, tmp_path, tools, BenchSettings()
    )
    speed, memory = (entry.bundle["protocol"]["spec"]["measurement"] for entry in written)
    assert (speed["warmupMs"], speed["repetitionMs"]) == (5.0, 20.0)
    assert memory["repetitions"] == FakeMemory.repetitions == 4
    # Not asked for: the style's own (Liger's ReLU² script: warmup 25, rep 500).
    free = run_bench(
        [item], catalog, tmp_path / "free", attrs.evolve(tools, fixed_timing=False), BenchSettings()
    )
    stated = free[0].bundle["protocol"]["spec"]["measurement"]
    assert (stated["warmupMs"], stated["repetitionMs"]) == (25.0, 500.0)
    assert timer.settings == TimerSettings(warmup_ms=5.0, rep_ms=20.0)  # the sweep's, unchanged


@pytest.mark.parametrize("metric", ["speed", "memory"])
def test_bench_liger_measures_through_the_recorders_sequence(
    monkeypatch: pytest.MonkeyPatch, metric: str
) -> None:
    """The device is synchronized around a gated first call: measure()'s doing, which
    the Liger loop never did on its own."""
    calls: list[str] = []
    monkeypatch.setattr(measure, "synchronize", lambda: calls.append("sync"))
    outcome = Runner(make_tools()).run_one(seed_item("relu_squared", metric=metric), "liger")
    assert outcome.status == "passed"
    assert calls == ["sync", "sync"]


def test_measure_drops_the_checked_output_before_measuring_when_asked() -> None:
    """A peak-memory probe must not count the first call's results: bench liger drops them."""

    class Results:
        pass

    made: list[weakref.ref[Results]] = []
    alive_while_measured: list[bool] = []

    def first() -> Results:
        results = Results()
        made.append(weakref.ref(results))
        return results

    def probe(fn: Any, grads: Any) -> list[int]:
        alive_while_measured.append(made[-1]() is not None)
        return [1]

    def run(**options: Any) -> measure.Measured:
        return measure.measure(
            measure.Step("preparing", lambda: (lambda: None, [])),
            measure.Step("probing", probe),
            first_call=measure.Step("first", first),
            check=measure.Step("checking", lambda output: None),
            **options,
        )

    kept, dropped = run(), run(keep_output=False)
    assert alive_while_measured == [True, False]
    assert isinstance(kept.output, Results) and dropped.output is None
    assert kept.status == dropped.status == "passed" and kept.values == (1,)
    with pytest.raises(ValueError, match="first_call"):
        measure.measure(
            measure.Step("preparing", lambda: (lambda: None, [])),
            measure.Step("probing", probe),
            check=measure.Step("checking", lambda output: None),
        )
