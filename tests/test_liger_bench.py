"""``kernelindex bench liger`` on a CPU: planning, the correctness gate, the sweep loop,
record assembly and environment capture, with the device, kernels, timer and memory
probe injected. Nothing here needs torch, triton, liger-kernel or a GPU.
"""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import attrs
import pytest

import kernelindex_sdk as ki
from bench_adapters.bench_cli import BenchLigerOptions, run_bench_liger
from bench_adapters.liger.catalog import load_catalog
from bench_adapters.liger.mapper import Mapper
from bench_adapters.liger.source import LigerCsv, LigerRow
from bench_adapters.liger_bench import gate
from bench_adapters.liger_bench.assemble import (
    FAMILY,
    SOURCE,
    Assembler,
    environment_record,
    protocol_record,
)
from bench_adapters.liger_bench.bench import BenchSettings, run_bench, summary_rows
from bench_adapters.liger_bench.catalog import (
    BenchCatalogError,
    CallSpec,
    Tolerance,
    load_bench_catalog,
    parse_catalog,
)
from bench_adapters.liger_bench.plan import (
    PlanError,
    PlannedItem,
    Request,
    Workload,
    parse_overrides,
    plan,
    seed_request,
)
from bench_adapters.liger_bench.probes import (
    DeviceInfo,
    NoDevice,
    TimerSettings,
    package_versions,
    quantile,
)
from bench_adapters.liger_bench.runner import Runner, Tools
from bench_adapters.liger_bench.setups import SETUPS

REPO = Path(__file__).resolve().parent.parent

#: The Liger CSV rows the four published seeds were imported from (shared/liger):
#: kernel, mode, x name, x label, x value, y50, y20, y80, config, GPU, timestamp, release.
_SEED_CELLS = [
    ("geglu", "backward", "T", "sequence length", "4096",
     "70.51395416259766", "70.51395416259766", "70.51395416259766",
     {"bsz": 8, "hidden_size": 4096, "intermediate_size": 11008,
      "hidden_act": "gelu_pytorch_tanh", "dtype": "torch.bfloat16"},
     "NVIDIA A100-SXM4-80GB", "2024-09-03 15:38:37", "0.2.1"),
    ("llama4_rope", "backward", "T", "sequence length", "16384",
     "0.4175359904766083", "0.41705599427223206", "0.4181375920772552",
     {"dtype": "torch.bfloat16", "hidden_size": 8192, "num_q_heads": 32, "num_kv_heads": 8},
     "NVIDIA H100 80GB HBM3", "2025-08-07 21:42:15", "0.6.1"),
    ("distill_cosine_loss", "full", "BT", "B x T", "1024",
     "14.654463768005371", "14.63398380279541", "14.68006420135498",
     {"H": 4096, "V": 128256, "mode": "forward", "dtype": "torch.bfloat16", "bias": False,
      "weight_hard_loss": 0.5, "weight_soft_loss": 0.5, "ignore_index": -100},
     "NVIDIA A100-SXM4-80GB", "2025-06-27 09:21:16", "0.5.10"),
    ("relu_squared", "backward", "N", "hidden size", "512",
     "0.01056000031530857", "0.01033599954098463", "0.03440000116825104",
     {"M": 4096, "dtype": "torch.bfloat16"},
     "NVIDIA H100 80GB HBM3", "2026-03-27 06:09:42", "0.7.0"),
]  # fmt: skip
CSV_HEADER = (
    "kernel_name,kernel_provider,kernel_operation_mode,metric_name,metric_unit,x_name,"
    "x_label,x_value,y_value_50,y_value_20,y_value_80,extra_benchmark_config_str,gpu_name,"
    "timestamp,liger_version"
)


def _csv_line(cells: tuple[Any, ...]) -> str:
    kernel, mode, x_name, x_label, x_value, y50, y20, y80, config, gpu, stamp, release = cells
    row = [kernel, "liger", mode, "speed", "ms", x_name, x_label, x_value, y50, y20, y80,
           json.dumps(config), gpu, stamp, release]  # fmt: skip
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow(row)
    return buffer.getvalue()


SEED_ROWS = [_csv_line(cells) for cells in _SEED_CELLS]

SEED_SLUGS = {
    "geglu": "batch8-hidden4096-intermediate11008-seq4096-bf16",
    "llama4_rope": "hidden8192-kv_heads8-q_heads32-seq16384-bf16",
    "distill_cosine_loss": "hidden4096-tokens1024-vocab128256-bf16",
    "relu_squared": "hidden512-rows4096-bf16",
}

H200 = DeviceInfo(
    name="NVIDIA H200",
    capability=(9, 0),
    memory_bytes=150_754_820_096,
    software={
        "driver": "580.159.03",
        "cuda": "13.0",
        "torch": "2.11.0+cu130",
        "triton": "3.6.0",
        "liger-kernel": "0.8.5",
        "transformers": "4.57.1",
        "python": "3.12.3",
    },
)


# --------------------------------------------------------------------------- stand-ins


class FakeOOM(Exception):
    """What the fake device calls out of memory."""


class FakeDevice:
    def __init__(self, info: DeviceInfo = H200) -> None:
        self.info = info
        self.released = 0
        self.described = 0

    def require(self) -> None:
        pass

    def describe(self) -> DeviceInfo:
        self.described += 1
        return self.info

    def is_out_of_memory(self, error: BaseException) -> bool:
        return isinstance(error, FakeOOM)

    def release(self) -> None:
        self.released += 1


@attrs.define
class FakePrepared:
    provider: str
    results_value: list[tuple[str, Any]]
    fail_at: str | None = None
    error: Exception | None = None
    #: The call spec each timed() was asked for.
    calls: list[CallSpec | None] = attrs.field(factory=list)

    def results(self) -> gate.Results:
        if self.fail_at == "results" and self.error is not None:
            raise self.error
        return self.results_value

    def timed(self, call: CallSpec | None = None) -> tuple[Callable[[], object], Sequence[Any]]:
        self.calls.append(call)
        return (lambda: self.provider), [f"grad-of-{self.provider}"]


class FakeBackend:
    """Providers whose 'tensors' are lists of floats; behaviour per provider is scripted."""

    def __init__(
        self,
        *,
        outputs: dict[str, list[float]] | None = None,
        missing: dict[str, str] | None = None,
        errors: dict[str, tuple[str, Exception]] | None = None,
    ) -> None:
        self.outputs = outputs or {}
        self.missing_modules = missing or {}
        self.errors = errors or {}
        self.prepared: list[tuple[str, str, int]] = []

    def missing(self, kernel: Any, provider: str) -> str | None:
        return self.missing_modules.get(provider)

    def prepare(self, workload: Workload, provider: str, seed: int) -> FakePrepared:
        self.prepared.append((workload.label, provider, seed))
        stage, error = self.errors.get(provider, (None, None))
        if stage == "prepare" and error is not None:
            raise error
        values = self.outputs.get(provider, [1.0, 2.0, 3.0])
        return FakePrepared(provider, [("output", values)], fail_at=stage, error=error)

    def compare(self, actual: Any, expected: Any, tolerance: Tolerance) -> str | None:
        worst = max(abs(a - e) for a, e in zip(actual, expected, strict=True))
        return None if worst <= tolerance.atol else f"max |difference| {worst:g}"

    def worst(self, actual: Any, expected: Any, tolerance: Tolerance) -> tuple[float, float]:
        worst = max(abs(a - e) for a, e in zip(actual, expected, strict=True))
        return worst, worst / tolerance.atol


class FakeTimer:
    def __init__(self, ms: dict[str, tuple[float, float, float]] | None = None) -> None:
        self.settings = TimerSettings()
        self.ms = ms or {}
        self.calls: list[tuple[object, list[Any]]] = []
        self.raise_for: dict[str, Exception] = {}

    def time(self, fn: Callable[[], object], grad_to_none: Sequence[Any]) -> tuple[float, ...]:
        provider = str(fn())
        self.calls.append((provider, list(grad_to_none)))
        if provider in self.raise_for:
            raise self.raise_for[provider]
        return self.ms.get(provider, (2.0, 1.5, 2.5))


class FakeMemory:
    repetitions = 4

    def __init__(self, peaks: list[int] | None = None) -> None:
        self.values = peaks or [100, 400, 200, 300]

    def peaks(self, fn: Callable[[], object]) -> list[int]:
        fn()
        return list(self.values)


FIXED_NOW = datetime(2026, 11, 29, 12, 0, 0, 123456, tzinfo=timezone.utc)


class Ticking:
    """A stopwatch that advances ``step`` seconds at every reading."""

    def __init__(self, step: float = 1.5) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def make_tools(
    backend: FakeBackend | None = None,
    timer: FakeTimer | None = None,
    memory: FakeMemory | None = None,
    device: FakeDevice | None = None,
) -> Tools:
    return Tools(
        device=device or FakeDevice(),
        backend=backend or FakeBackend(),
        timer=timer or FakeTimer(),
        memory=memory or FakeMemory(),
        clock=lambda: FIXED_NOW,
        stopwatch=Ticking(),
    )


def seed_item(kernel: str, metric: str = "speed", providers: tuple[str, ...] = ()) -> PlannedItem:
    catalog = load_bench_catalog()
    spec = catalog.kernels[kernel].sweep
    assert spec.seed_pass is not None and spec.seed_x is not None
    items = plan(
        Request(
            kernels=(kernel,),
            passes=(spec.seed_pass,),
            x_values=(spec.seed_x,),
            metrics=(metric,),
            providers=providers,
        ),
        catalog,
    )
    assert len(items) == 1
    return items[0]


def importer_records(row_text: str) -> tuple[dict[str, Any], Mapper]:
    """The importer's run for one CSV row (under the seeds' header) and its mapper."""
    rows = list(LigerCsv("seed.csv", CSV_HEADER + "\n" + row_text + "\n").rows())
    assert len(rows) == 1 and isinstance(rows[0], LigerRow)
    mapper = Mapper()
    return mapper.map_row(rows[0]).run, mapper


# --------------------------------------------------------------------------- catalog


def test_catalog_covers_the_four_seed_kernels_with_a_setup_and_a_reference() -> None:
    catalog = load_bench_catalog()
    assert set(SEED_SLUGS) <= set(catalog.kernels)
    for kernel in catalog.kernels.values():
        assert kernel.setup in SETUPS, kernel.name
        assert "liger" in kernel.providers and kernel.gated("liger")
        assert kernel.references and not kernel.gated(kernel.references[0])
        assert kernel.default_providers[0] == "liger"
        assert kernel.sweep.seed_x in kernel.sweep.values  # all four have a seed


def test_catalog_entries_must_agree_with_the_importer_catalog() -> None:
    liger = load_catalog()
    good = json.loads(
        (REPO / "bench_adapters/liger_bench/data/kernels.json").read_text(encoding="utf-8")
    )
    parse_catalog(good, liger)

    unknown_kernel = json.loads(json.dumps(good))
    unknown_kernel["kernels"]["not_a_kernel"] = unknown_kernel["kernels"]["geglu"]
    with pytest.raises(BenchCatalogError, match=r"not_a_kernel.*unknown to the importer"):
        parse_catalog(unknown_kernel, liger)

    unknown_provider = json.loads(json.dumps(good))
    unknown_provider["kernels"]["geglu"]["defaultProviders"] = ["liger", "nobody"]
    with pytest.raises(BenchCatalogError, match="'nobody'"):
        parse_catalog(unknown_provider, liger)

    bad_seed = json.loads(json.dumps(good))
    bad_seed["kernels"]["geglu"]["sweep"]["seedX"] = 3
    with pytest.raises(BenchCatalogError, match="seedX"):
        parse_catalog(bad_seed, liger)

    unseeded = json.loads(json.dumps(good))
    del unseeded["kernels"]["relu_squared"]["sweep"]["seedX"]
    with pytest.raises(BenchCatalogError, match="go together"):
        parse_catalog(unseeded, liger)
    del unseeded["kernels"]["relu_squared"]["sweep"]["seedPass"]
    names = {i.workload.kernel.name for i in seed_request(parse_catalog(unseeded, liger))}
    assert names == set(SEED_SLUGS) - {"relu_squared"}

    bad_tolerance = json.loads(json.dumps(good))
    bad_tolerance["tolerances"]["bf16"]["atol"] = -1
    with pytest.raises(BenchCatalogError, match="atol"):
        parse_catalog(bad_tolerance, liger)


def test_tolerance_falls_back_to_the_strictest_for_an_unknown_dtype() -> None:
    geglu = load_bench_catalog().kernels["geglu"]
    assert geglu.tolerance("bf16").atol > geglu.tolerance("fp32").atol
    assert geglu.tolerance("fp8_e4m3fn") == min(
        geglu.tolerances.values(), key=lambda t: (t.atol, t.rtol)
    )


# --------------------------------------------------------------------------- planning


def test_seed_plan_reproduces_the_seeds_workloads() -> None:
    items = seed_request(load_bench_catalog())
    found = {i.workload.kernel.name: (i.workload.pass_, i.workload.shape.slug) for i in items}
    assert found == {
        "geglu": ("backward", SEED_SLUGS["geglu"]),
        "llama4_rope": ("backward", SEED_SLUGS["llama4_rope"]),
        "distill_cosine_loss": ("full", SEED_SLUGS["distill_cosine_loss"]),
        "relu_squared": ("backward", SEED_SLUGS["relu_squared"]),
    }
    assert {i.providers for i in items} == {("liger", "huggingface"), ("liger", "torch")}


@pytest.mark.parametrize("row", SEED_ROWS, ids=list(SEED_SLUGS))
def test_a_benched_workload_has_the_imported_workloads_digest(row: str) -> None:
    """The same x and config give the very workload record the importer builds from the CSV."""
    run, mapper = importer_records(row)
    kernel = row.split(",", 1)[0]
    item = seed_item(kernel)
    assembler = Assembler(load_catalog(), H200, TimerSettings(), 10, "0.1.0")
    outcome = Runner(make_tools()).run_one(item, "liger")
    bundle = assembler.bundle(outcome)
    assert bundle["run"]["spec"]["workloadDigest"] == run["spec"]["workloadDigest"]
    imported = mapper.records[run["spec"]["workloadDigest"]]
    assert bundle["workload"]["spec"] == imported["spec"]
    # The importer may annotate its record with the CSV cells; name and title agree.
    for field in ("name", "title"):
        assert bundle["workload"]["metadata"][field] == imported["metadata"][field]
    # ... and never the imported protocol or environment: these runs are not imported ones.
    assert bundle["run"]["spec"]["protocolDigest"] != run["spec"]["protocolDigest"]
    assert bundle["run"]["spec"]["environmentDigest"] != run["spec"]["environmentDigest"]


def test_plan_orders_kernel_x_pass_metric_and_takes_overrides() -> None:
    items = plan(
        Request(
            kernels=("relu_squared",),
            passes=("forward", "full"),
            metrics=("speed", "memory"),
            x_values=(128, 256),
            overrides=parse_overrides(["M=64"]),
        ),
        load_bench_catalog(),
    )
    assert [(i.workload.x_value, i.workload.pass_, i.metric) for i in items] == [
        (128, "forward", "speed"),
        (128, "forward", "memory"),
        (128, "full", "speed"),
        (128, "full", "memory"),
        (256, "forward", "speed"),
        (256, "forward", "memory"),
        (256, "full", "speed"),
        (256, "full", "memory"),
    ]
    assert items[0].workload.shape.slug == "hidden128-rows64-bf16"


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (Request(kernels=()), "no kernel given; known kernels: distill_cosine_loss"),
        (Request(kernels=("softmax2",)), "unknown kernel 'softmax2'; known kernels"),
        (Request(kernels=("geglu",), passes=("sideways",)), "unknown pass 'sideways'"),
        (Request(kernels=("geglu",), metrics=("joules",)), "unknown metric 'joules'"),
        (
            Request(kernels=("relu_squared",), providers=("huggingface",)),
            "has no provider 'huggingface'; known: liger, torch",
        ),
        (Request(kernels=("geglu",), overrides={"T": 5}), "use --x instead"),
        (Request(kernels=("geglu",), x_values=(0,)), "positive"),
    ],
)
def test_bad_requests_are_plan_errors_that_say_what_is_known(
    request_: Request, message: str
) -> None:
    with pytest.raises(PlanError, match=message.replace("(", r"\(")):
        plan(request_, load_bench_catalog())


def test_overrides_parse_json_values_or_keep_text() -> None:
    assert parse_overrides(["bsz=4", "bias=true", "hidden_act=gelu", "x=null"]) == {
        "bsz": 4,
        "bias": True,
        "hidden_act": "gelu",
        "x": None,
    }
    for bad in ("bsz", "=4", "bsz=[1]"):
        with pytest.raises(PlanError):
            parse_overrides([bad])


# --------------------------------------------------------------------------- gate


def test_gate_passes_matching_results_and_names_every_differing_tensor() -> None:
    tolerance = Tolerance(atol=0.1, rtol=0.0)
    backend = FakeBackend()
    expected = [("output", [1.0, 2.0]), ("grad x", [0.5, 0.5])]
    assert (
        gate.check(expected, expected, tolerance, backend.compare, provider="a", reference="b")
        is None
    )
    actual = [("output", [1.0, 2.5]), ("grad x", [0.5, 0.5])]
    reason = gate.check(
        actual, expected, tolerance, backend.compare, provider="liger", reference="torch"
    )
    assert reason is not None
    assert "liger differs from the torch reference" in reason
    assert "1 of 2 tensors" in reason and "output: max |difference| 0.5" in reason
    missing = gate.check(
        expected[:1], expected, tolerance, backend.compare, provider="liger", reference="torch"
    )
    assert (
        missing is not None
        and "produced [output] but the torch reference produced [output, grad x]" in missing
    )


# --------------------------------------------------------------------------- runner


def test_a_matching_provider_is_gated_then_timed_in_nanoseconds() -> None:
    timer = FakeTimer({"liger": (0.4175359904766083, 0.41705599427223206, 0.4181375920772552)})
    backend = FakeBackend()
    outcome = Runner(make_tools(backend, timer)).run_one(seed_item("llama4_rope"), "liger")
    assert outcome.status == "passed" and outcome.reason is None
    assert outcome.values == (417056, 417536, 418138)
    assert outcome.native == {
        "ms_20": 0.41705599427223206,
        "ms_50": 0.4175359904766083,
        "ms_80": 0.4181375920772552,
        "first_call_ms": 1500.0,  # the correctness-check call, timed apart (one tick)
        "gate_atol": 0.05,  # the bf16 tolerance the gate applied, and what it saw
        "gate_rtol": 0.05,
        "gate_max_abs_error": 0.0,
        "gate_max_error_ratio": 0.0,
    }
    assert outcome.checked_against == "huggingface"
    assert outcome.observed_at == "2026-11-29T12:00:00.123Z"
    # The reference was set up (for the gate) before the provider, with the same seed.
    assert [p for _, p, _ in backend.prepared] == ["huggingface", "liger"]
    assert timer.calls == [("liger", ["grad-of-liger"])]


def test_a_mismatch_is_a_failed_run_and_is_never_timed() -> None:
    backend = FakeBackend(outputs={"liger": [1.0, 2.0, 9.0], "torch": [1.0, 2.0, 3.0]})
    timer = FakeTimer()
    outcome = Runner(make_tools(backend, timer)).run_one(seed_item("relu_squared"), "liger")
    assert outcome.status == "failed"
    # The gate's tolerance and the largest error it saw are kept with the failure.
    assert outcome.values is None and outcome.native == {
        "first_call_ms": 1500.0,
        "gate_atol": 0.05,
        "gate_rtol": 0.05,
        "gate_max_abs_error": 6.0,
        "gate_max_error_ratio": 120.0,
    }
    assert outcome.reason is not None and "differs from the torch reference" in outcome.reason
    assert "max |difference| 6" in outcome.reason
    assert timer.calls == []


def test_references_are_not_gated_and_fall_back_in_order() -> None:
    backend = FakeBackend(missing={"huggingface": "module 'transformers' is not installed"})
    runner = Runner(make_tools(backend))
    item = seed_item("geglu", providers=("liger", "huggingface", "torch"))
    liger, hf, torch = (runner.run_one(item, p) for p in item.providers)
    assert liger.status == "passed" and liger.checked_against == "torch"
    assert hf.status == "skipped"
    assert hf.reason == "huggingface cannot run: module 'transformers' is not installed"
    assert torch.status == "passed" and torch.checked_against is None


def test_without_any_reference_nothing_is_timed() -> None:
    backend = FakeBackend(missing={"torch": "module 'torch' is not installed"})
    timer = FakeTimer()
    outcome = Runner(make_tools(backend, timer)).run_one(seed_item("relu_squared"), "liger")
    assert outcome.status == "skipped"
    assert outcome.reason is not None and outcome.reason.startswith(
        "no reference to check correctness against, so not timed (torch: module"
    )
    assert timer.calls == [] and backend.prepared == []


def test_out_of_memory_is_an_oom_run_and_the_sweep_goes_on() -> None:
    timer = FakeTimer()
    timer.raise_for["liger"] = FakeOOM("CUDA out of memory. Tried to allocate 2.00 GiB")
    item = seed_item("geglu")
    outcomes = Runner(make_tools(timer=timer)).run([item, item])
    assert [o.status for o in outcomes] == ["oom", "passed", "oom", "passed"]
    assert outcomes[0].reason == (
        "out of memory while timing: FakeOOM: CUDA out of memory. Tried to allocate 2.00 GiB"
    )


def test_out_of_memory_in_the_reference_is_the_gated_runs_oom() -> None:
    backend = FakeBackend(errors={"huggingface": ("results", FakeOOM("no room"))})
    outcome = Runner(make_tools(backend)).run_one(seed_item("geglu"), "liger")
    assert outcome.status == "oom"
    assert outcome.reason == (
        "out of memory while computing the huggingface reference: FakeOOM: no room"
    )


def test_errors_are_failed_runs_and_import_errors_skipped_ones() -> None:
    device = FakeDevice()
    backend = FakeBackend(
        errors={
            "liger": ("prepare", RuntimeError("Triton Error [CUDA]: invalid argument\n  at x")),
        }
    )
    outcome = Runner(make_tools(backend, device=device)).run_one(seed_item("geglu"), "liger")
    assert outcome.status == "failed"
    assert outcome.reason == (
        "error while setting up liger: RuntimeError: Triton Error [CUDA]: invalid argument at x"
    )
    assert device.released >= 1
    backend = FakeBackend(errors={"huggingface": ("prepare", ImportError("no llama4 here"))})
    outcome = Runner(make_tools(backend)).run_one(seed_item("llama4_rope"), "huggingface")
    assert outcome.status == "skipped"
    assert (
        outcome.reason == "cannot import while setting up huggingface: ImportError: no llama4 here"
    )


def test_the_reference_is_computed_once_per_workload() -> None:
    backend = FakeBackend()
    item = seed_item("geglu")
    memory = attrs.evolve(item, metric="memory")
    Runner(make_tools(backend)).run([item, memory])
    assert [p for _, p, _ in backend.prepared] == [
        "huggingface",  # reference results for the gate
        "liger",
        "huggingface",  # the reference's own speed run
        "liger",  # memory: gated again, against the results already computed
        "huggingface",
    ]


def test_memory_runs_report_interpolated_quantiles_in_bytes() -> None:
    outcome = Runner(make_tools(memory=FakeMemory([100, 400, 200, 300]))).run_one(
        seed_item("relu_squared", metric="memory"), "torch"
    )
    assert outcome.status == "passed"
    # sorted 100 200 300 400: p20 at 0.6 -> 160, median at 1.5 -> 250, p80 at 2.4 -> 340
    assert outcome.values == (160, 250, 340)
    assert outcome.native == pytest.approx(
        {"bytes_20": 160.0, "bytes_50": 250.0, "bytes_80": 340.0}
    )


def test_quantile_interpolates_like_torch_quantile() -> None:
    assert quantile([5.0], 0.8) == 5.0
    assert quantile([1.0, 2.0, 3.0, 4.0, 5.0], 0.5) == 3.0
    assert quantile([4.0, 1.0, 3.0, 2.0], 0.2) == pytest.approx(1.6)
    with pytest.raises(ValueError):
        quantile([], 0.5)


# --------------------------------------------------------------------------- records


def _bundles(outcomes_for: Callable[[Runner], list[Any]]) -> list[dict[str, Any]]:
    assembler = Assembler(load_catalog(), H200, TimerSettings(), 10, "0.1.0")
    return [assembler.bundle(o) for o in outcomes_for(Runner(make_tools()))]


def test_every_kind_of_run_assembles_into_a_valid_bundle() -> None:
    timer = FakeTimer()
    timer.raise_for["huggingface"] = FakeOOM("out of memory")
    backend = FakeBackend(outputs={"liger": [0.0, 0.0, 0.0]}, missing={"torch": "no torch"})
    runner = Runner(make_tools(backend, timer))
    item = seed_item("geglu", providers=("liger", "huggingface", "torch"))
    outcomes = runner.run([item])
    assert [o.status for o in outcomes] == ["failed", "oom", "skipped"]
    passed = Runner(make_tools()).run(
        [seed_item("relu_squared"), seed_item("relu_squared", "memory")]
    )
    assembler = Assembler(load_catalog(), H200, TimerSettings(), 10, "0.1.0")
    for outcome in [*outcomes, *passed]:
        bundle = assembler.bundle(outcome)
        assert ki.validate(bundle) == [], (outcome.status, ki.validate(bundle))
        run = bundle["run"]["spec"]
        assert run["status"] == outcome.status
        assert run["sourceNative"]["source"] == SOURCE
        if outcome.status != "passed":
            assert run["reason"] == outcome.reason
            assert "timing" not in run and "memory" not in run and "measurements" not in run


def test_a_passed_run_has_the_importers_shape_and_the_sweeps_provenance() -> None:
    item = seed_item("relu_squared")
    outcome = Runner(make_tools(timer=FakeTimer({"liger": (0.0106, 0.0103, 0.0344)}))).run_one(
        item, "liger"
    )
    bundle = Assembler(load_catalog(), H200, TimerSettings(), 10, "0.1.0").bundle(outcome)
    run = bundle["run"]
    assert list(bundle) == ["run", "protocol", "workload", "environment", "implementation"]
    assert run["metadata"]["title"] == "ReLU squared · liger · backward"
    assert run["metadata"]["labels"] == {"liger_version": "0.8.5", "checked_against": "torch"}
    assert run["metadata"]["name"].startswith(
        "bench-liger-relu-squared-backward-liger-nvidia-h200-hidden512-rows4096-bf16-2026-11-29"
    )
    spec = run["spec"]
    assert spec["timing"] == {"latencyNs": {"median": 10600}, "primaryStatistic": "median"}
    assert [m["statistic"] for m in spec["measurements"]] == ["p20", "p80"]
    assert spec["sourceNative"]["benchmark"] == "relu_squared/backward"
    assert spec["sourceNative"]["externalId"] == (
        "relu_squared/backward/liger/nvidia-h200/hidden512-rows4096-bf16/2026-11-29-12-00-00-123"
    )
    assert spec["sourceNative"]["metrics"] == {
        "ms_20": 0.0103,
        "ms_50": 0.0106,
        "ms_80": 0.0344,
        "first_call_ms": 1500.0,
        "gate_atol": 0.05,  # the bf16 tolerance the gate applied, and what it saw
        "gate_rtol": 0.05,
        "gate_max_abs_error": 0.0,
        "gate_max_error_ratio": 0.0,
    }
    impl = bundle["implementation"]["spec"]
    assert impl == {
        "provider": "liger",
        "backend": "triton",
        "package": {"name": "liger-kernel", "version": "0.8.5"},
        "entryPoint": "liger_kernel.transformers.relu_squared.LigerReLUSquared",
        "source": {"repository": "https://github.com/linkedin/Liger-Kernel"},
    }


def test_reference_implementations_record_the_installed_package_version() -> None:
    bundles = _bundles(lambda r: [r.run_one(seed_item("geglu"), "huggingface")])
    impl = bundles[0]["implementation"]["spec"]
    assert impl["package"] == {"name": "transformers", "version": "4.57.1"}
    assert impl["entryPoint"] == "transformers.models.llama.modeling_llama.LlamaMLP"


def test_collapsed_quantiles_are_flagged() -> None:
    timer = FakeTimer({"torch": (1.0, 1.0, 1.0)})
    outcome = Runner(make_tools(timer=timer)).run_one(seed_item("relu_squared"), "torch")
    bundle = Assembler(load_catalog(), H200, TimerSettings(), 10, "0.1.0").bundle(outcome)
    assert bundle["run"]["spec"]["qualityFlags"] == ["collapsed_quantiles"]


def test_speed_protocol_states_the_real_settings_under_its_own_name() -> None:
    protocol = protocol_record("speed", "backward", TimerSettings(10.0, 200.0), 10, "0.1.0")
    assert protocol["metadata"]["name"] == "kernelindex-bench-liger-do-bench-backward"
    spec = protocol["spec"]
    assert spec["harness"] == {"name": "kernelindex bench liger", "version": "0.1.0"}
    assert spec["measurement"] == {
        "timer": "cuda_events",
        "primaryStatistic": "median",
        "quantiles": [0.5, 0.2, 0.8],
        "warmupMs": 10.0,
        "repetitionMs": 200.0,
        "flushL2Cache": True,
        "gradToNone": True,
        "harnessSettings": {
            "callStyle": "kernelindex",
            "timedCall": "torch.autograd.backward(outputs, dy, retain_graph=True)",
            "gradToNone": "every leaf",
            "otherGradients": "none accumulated",
        },
    }
    assert spec["comparability"]["family"] == FAMILY != "liger_kernel_bench"
    notes = spec["comparability"]["notes"]
    assert "do_bench(warmup=10, rep=200" in notes and "checked against the reference" in notes
    forward = protocol_record("speed", "forward", TimerSettings(), 10, "0.1.0")
    assert forward["spec"]["measurement"]["gradToNone"] is False
    assert ".grad" not in forward["spec"]["comparability"]["notes"]
    memory = protocol_record("memory", "full", TimerSettings(), 7, "0.1.0")
    assert memory["metadata"]["name"] == "kernelindex-bench-liger-memory-full"
    assert memory["spec"]["measurement"] == {
        "memoryProbe": "torch_cuda_max_memory_allocated",
        "primaryStatistic": "median",
        "quantiles": [0.5, 0.2, 0.8],
        "repetitions": 7,
        "harnessSettings": {
            "callStyle": "kernelindex",
            "timedCall": "outputs = forward(); torch.autograd.backward(outputs, dy)",
            "gradToNone": "every leaf",
            "otherGradients": "none accumulated",
        },
    }
    for record in (protocol, forward, memory):
        assert ki.validate(record) == []


# --------------------------------------------------------------------------- environment


def test_environment_records_what_the_csv_lacks() -> None:
    record = environment_record(H200, load_catalog())
    assert ki.validate(record) == []
    assert record["metadata"]["name"] == "kernelindex-bench-nvidia-h200"
    assert record["spec"]["hardware"] == {
        "vendor": "nvidia",
        "product": "NVIDIA H200",
        "architecture": "sm_90",
        "deviceName": "NVIDIA H200",
        "memoryBytes": 150_754_820_096,
        "computeCapability": "9.0",
    }
    # The same builder as `kernelindex env`: every field says where it came from.
    origins = record["spec"]["provenance"]
    assert origins["/software/liger-kernel"]["detail"].startswith("probed: ")
    assert origins["/hardware/product"]["origin"] == "catalog"
    assert origins["/hardware/maxClockHz"]["origin"] == "unknown"
    assert record["spec"]["software"] == {
        "cuda": "13.0",
        "driver": "580.159.03",
        "liger-kernel": "0.8.5",
        "python": "3.12.3",
        "torch": "2.11.0+cu130",
        "transformers": "4.57.1",
        "triton": "3.6.0",
    }


def test_the_measured_capability_wins_and_unknown_gpus_still_record() -> None:
    odd = DeviceInfo("NVIDIA H100 80GB HBM3", (9, 1), None, {})
    hardware = environment_record(odd, load_catalog())["spec"]["hardware"]
    assert hardware["architecture"] == "sm_91" and hardware["formFactor"] == "80GB HBM3"
    assert "memoryBytes" not in hardware
    unknown = environment_record(DeviceInfo("Mystery GPU 9000", (12, 0), 1, {}), load_catalog())
    assert ki.validate(unknown) == []
    assert unknown["spec"]["hardware"]["product"] == "Mystery GPU 9000"
    assert unknown["spec"]["hardware"]["architecture"] == "sm_120"


def test_package_versions_leave_out_what_is_not_installed() -> None:
    import importlib.metadata

    def version_of(name: str) -> str:
        if name == "transformers":
            raise importlib.metadata.PackageNotFoundError(name)
        return {"torch": "2.11.0", "triton": "3.6.0", "liger-kernel": "0.8.5"}[name]

    assert package_versions(version_of=version_of) == {
        "torch": "2.11.0",
        "triton": "3.6.0",
        "liger-kernel": "0.8.5",
    }


# --------------------------------------------------------------------------- the job and the CLI


def test_run_bench_writes_valid_bundles_as_the_importer_names_them(tmp_path: Path) -> None:
    catalog = load_bench_catalog()
    timer = FakeTimer({"liger": (1.5, 1.4, 1.6)})  # the others: median 2.0 ms
    tools = make_tools(timer=timer)
    written = run_bench(seed_request(catalog), catalog, tmp_path, tools, BenchSettings())
    assert len(written) == 8
    files = sorted(tmp_path.iterdir())
    assert len(files) == 8
    for entry in written:
        assert entry.path in files
        assert entry.path.name.startswith(entry.bundle["run"]["metadata"]["name"] + "-")
        assert json.loads(entry.path.read_text(encoding="utf-8")) == entry.bundle
        # The fake timer measured nothing: its speed runs and protocols say so.
        measurement = entry.bundle["protocol"]["spec"]["measurement"]
        if "timer" in measurement:
            assert entry.bundle["run"]["spec"]["qualityFlags"] == ["injected_timer"]
            assert measurement["timer"] == "unknown"
            assert measurement["harnessSettings"]["claimedTimer"] == "cuda_events"
    assert any("timer" in e.bundle["protocol"]["spec"]["measurement"] for e in written)
    result = subprocess.run(
        [sys.executable, "-m", "kernelindex_sdk.cli.main", "validate", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    rows = summary_rows(written)
    # The distillation loss compiles on its first call: it runs last.
    assert [(r[0], r[4]) for r in rows] == [
        ("geglu", "liger"),
        ("geglu", "huggingface"),
        ("llama4_rope", "liger"),
        ("llama4_rope", "huggingface"),
        ("relu_squared", "liger"),
        ("relu_squared", "torch"),
        ("distill_cosine_loss", "liger"),
        ("distill_cosine_loss", "torch"),
    ]
    assert [r[8] for r in rows[-2:]] == ["1.33x", "1.00x"]  # 2.0 ms / 1.5 ms
    assert [r[9] for r in rows[-2:]] == ["1.5 s", "-"]  # the gated run's first call


def _options(**changes: Any) -> BenchLigerOptions:
    return attrs.evolve(BenchLigerOptions(kernels=("relu_squared",)), **changes)


def test_cli_dry_run_lists_the_plan(capsys: pytest.CaptureFixture[str]) -> None:
    out, err = io.StringIO(), io.StringIO()
    status = run_bench_liger(
        _options(kernels=tuple(SEED_SLUGS), passes=("backward",), dry_run=True), out=out, err=err
    )
    assert status == 0, err.getvalue()
    text = out.getvalue()
    assert "T=4096" in text and SEED_SLUGS["geglu"] in text
    assert "liger,huggingface" in text and "huggingface/torch" in text
    assert text.rstrip().endswith("nothing was run")


def test_cli_without_cuda_exits_2_with_the_reason(tmp_path: Path) -> None:
    def no_cuda(settings: BenchSettings) -> Tools:
        raise NoDevice("no CUDA device: no CUDA device is visible (torch 2.11.0)")

    err = io.StringIO()
    status = run_bench_liger(
        _options(out=str(tmp_path / "o")), tools_factory=no_cuda, out=io.StringIO(), err=err
    )
    assert status == 2
    assert err.getvalue() == (
        "kernelindex bench liger: no CUDA device: no CUDA device is visible (torch 2.11.0) "
        "(--dry-run lists the plan without one)\n"
    )
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"kernels": ("nope",)}, "unknown kernel 'nope'"),
        ({}, "--out DIR is required"),
        ({"overrides": ("M",)}, "expected KEY=VALUE"),
        ({"out": "FILE"}, "exists and is not a directory"),
        ({"out": "DIR", "rep_ms": 0.0}, "--rep-ms > 0"),
    ],
)
def test_cli_usage_errors_exit_2(tmp_path: Path, changes: dict[str, Any], message: str) -> None:
    (tmp_path / "FILE").write_text("x")
    if changes.get("out"):
        changes["out"] = str(tmp_path / changes["out"])
    err = io.StringIO()
    assert run_bench_liger(_options(**changes), out=io.StringIO(), err=err) == 2
    assert message in err.getvalue()
    assert "Traceback" not in err.getvalue()


def test_cli_exit_status_says_whether_any_run_failed(tmp_path: Path) -> None:
    out = io.StringIO()
    ok = run_bench_liger(
        _options(out=str(tmp_path / "a"), x_values=(512,), passes=("backward",)),
        tools_factory=lambda settings: make_tools(),
        out=out,
        err=io.StringIO(),
    )
    assert ok == 0
    assert "2 runs written" in out.getvalue() and "2 passed" in out.getvalue()
    bad = run_bench_liger(
        _options(out=str(tmp_path / "b"), x_values=(512,), passes=("backward",)),
        tools_factory=lambda settings: make_tools(FakeBackend(outputs={"liger": [0.0] * 3})),
        out=io.StringIO(),
        err=io.StringIO(),
    )
    assert bad == 1
    assert len(list((tmp_path / "b").iterdir())) == 2  # the failed run is recorded too


def test_help_and_dry_run_import_no_torch_triton_or_liger() -> None:
    code = (
        "import sys\n"
        "from kernelindex_sdk.cli.main import main\n"
        "for argv in (['--help'], ['bench', 'liger', '--help'],\n"
        "             ['bench', 'liger', '--kernel', 'geglu,relu_squared', '--dry-run']):\n"
        "    try:\n"
        "        main(argv)\n"
        "    except SystemExit as e:\n"
        "        assert e.code in (0, None), (argv, e.code)\n"
        "heavy = ('torch', 'triton', 'liger_kernel', 'transformers')\n"
        "heavy = [m for m in heavy if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "bench" in result.stdout and "relu_squared" in result.stdout


# --------------------------------------------------------------------------- scripts/gpu-check


def _gpu_check(tmp_path: Path, tools: Tools, *extra: str) -> tuple[int, str, str]:
    from bench_adapters.liger_bench.gpu_check import check

    out, err = io.StringIO(), io.StringIO()
    argv = [
        "--out",
        str(tmp_path),
        "--seeds",
        str(REPO / "tests" / "examples" / "valid" / "seeds"),
        *extra,
    ]
    status = check(argv, tools=tools, out=out, err=err)
    return status, out.getvalue(), err.getvalue()


def test_gpu_check_runs_the_seed_workloads_validates_and_tabulates(tmp_path: Path) -> None:
    device = FakeDevice()
    timer = FakeTimer({"liger": (0.5, 0.4, 0.6)})
    status, text, err = _gpu_check(tmp_path, make_tools(timer=timer, device=device))
    assert status == 0, err
    assert device.described == 1  # describing may cost nvidia-smi's timeout: once
    lines = text.splitlines()
    # The device line first, then one line per run as it ends, the compiling kernel last.
    assert lines[0].startswith(
        "NVIDIA H200 (sm_90, 150754820096 bytes); cuda 13.0, driver 580.159.03"
    )
    assert lines[1] == (
        "[1/8] geglu backward liger: passed, median 0.5000 ms (0.4000 ms – 0.6000 ms), "
        "first call 1.5 s"
    )
    assert lines[2].startswith("[2/8] geglu backward huggingface: passed, median 2.0000 ms")
    assert lines[2].endswith(", 1.00x")
    assert lines[7].startswith("[7/8] distill_cosine_loss full liger: passed")
    header = next(line for line in lines if line.startswith("kernel "))
    assert header.split() == [
        "kernel",
        "pass",
        "provider",
        "status",
        "median",
        "p20–p80",
        "speed-up",
        "first",
        "call",
    ]
    geglu = [re.split(r"\s{2,}", line) for line in lines if line.startswith("geglu ")]
    assert geglu == [
        ["geglu", "backward", "liger", "passed", "0.5000 ms", "0.4000 ms – 0.6000 ms",
         "4.00x", "1.5 s"],
        ["geglu", "backward", "huggingface", "passed", "2.0000 ms", "1.5000 ms – 2.5000 ms",
         "1.00x", "-"],
    ]  # fmt: skip
    assert text.rstrip().endswith(
        "8 runs written under " + str(tmp_path) + ", 8 files valid; 0 runs did not pass"
    )
    bundles = sorted(tmp_path.glob("*.json"))
    assert len(bundles) == 8
    # The table file beside the bundles holds the final table; validate reads only JSON.
    table = (tmp_path / "table.txt").read_text(encoding="utf-8")
    assert table.splitlines()[0].split()[:3] == ["kernel", "pass", "provider"]
    assert table in text
    for bundle in bundles:
        run = json.loads(bundle.read_text(encoding="utf-8"))["run"]["spec"]
        first_call = run["sourceNative"]["metrics"].get("first_call_ms")
        assert (first_call == 1500.0) == (
            run["sourceNative"]["externalId"].split("/")[2] == "liger"
        )


def test_gpu_check_puts_its_runs_beside_the_seeds_by_kernel_pass_and_shape(
    tmp_path: Path,
) -> None:
    timer = FakeTimer({"liger": (0.5, 0.4, 0.6)})
    status, text, err = _gpu_check(tmp_path, make_tools(timer=timer))
    assert status == 0, err
    comparison = (tmp_path / "seed-comparison.md").read_text(encoding="utf-8")
    assert comparison in text
    rows = [line for line in comparison.splitlines() if line.startswith("| geglu ")]
    cells = [[c.strip() for c in row.strip("|").split("|")] for row in rows]
    assert cells == [
        ["geglu", "backward", SEED_SLUGS["geglu"], "latency", "NVIDIA A100 SXM4-80GB",
         "Liger CSV", "0.2.1", "70.514 ms", "–", "–", "–"],
        ["geglu", "backward", SEED_SLUGS["geglu"], "latency", "NVIDIA H200",
         "kernelindex bench liger · upstream call", "0.8.5", "0.5 ms", "huggingface", "2 ms",
         "4.00×"],
    ]  # fmt: skip
    assert comparison.count("| Liger CSV |") == 4
    assert comparison.count("| kernelindex bench liger · upstream call |") == 4


def test_gpu_check_keeps_every_run_that_ended_before_a_stop(tmp_path: Path) -> None:
    """A window that runs out (here: an interrupt at the fifth timing) loses nothing
    already measured: bundles, the table file and the streamed lines are all there."""

    class StopsAtFifth(FakeTimer):
        def time(self, fn: Callable[[], object], grad_to_none: Sequence[Any]) -> tuple[float, ...]:
            if len(self.calls) == 4:
                raise KeyboardInterrupt
            return super().time(fn, grad_to_none)

    from bench_adapters.liger_bench.gpu_check import check

    out = io.StringIO()
    with pytest.raises(KeyboardInterrupt):
        check(
            ["--out", str(tmp_path), "--seeds", str(tmp_path / "none")],
            tools=make_tools(timer=StopsAtFifth()),
            out=out,
            err=io.StringIO(),
        )
    assert [line[:6] for line in out.getvalue().splitlines()[1:]] == [
        "[1/8] ",
        "[2/8] ",
        "[3/8] ",
        "[4/8] ",
    ]
    assert len(list(tmp_path.glob("*.json"))) == 4
    table = (tmp_path / "table.txt").read_text(encoding="utf-8").splitlines()
    assert [row.split()[:3] for row in table[1:]] == [
        ["geglu", "backward", "liger"],
        ["geglu", "backward", "huggingface"],
        ["llama4_rope", "backward", "liger"],
        ["llama4_rope", "backward", "huggingface"],
    ]


def test_gpu_check_fails_when_a_run_does_not_pass(tmp_path: Path) -> None:
    from bench_adapters.liger_bench.gpu_check import check

    out = io.StringIO()
    backend = FakeBackend(outputs={"liger": [5.0, 5.0, 5.0]})
    status = check(["--out", str(tmp_path)], tools=make_tools(backend), out=out, err=io.StringIO())
    assert status == 1
    assert "4 runs did not pass" in out.getvalue()
    assert "failed: relu_squared/backward/hidden512-rows4096-bf16 liger: correctness check" in (
        out.getvalue()
    )


def test_gpu_check_script_exits_2_without_cuda(tmp_path: Path) -> None:
    probe = "import importlib.util as u, sys\n" + (
        "if u.find_spec('torch') is None: sys.exit(0)\n"
        "import torch\nsys.exit(3 if torch.cuda.is_available() else 0)\n"
    )
    if subprocess.run([sys.executable, "-c", probe], check=False).returncode == 3:
        pytest.skip("this machine has CUDA")
    result = subprocess.run(
        [str(REPO / "scripts" / "gpu-check"), "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHON": sys.executable, "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("gpu-check: ")
    assert "torch is not installed" in result.stderr or "no CUDA device" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "o").exists()
