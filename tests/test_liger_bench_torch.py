"""The torch side of ``bench liger``: tensor comparison, setups, passes, and — on a CUDA
machine only — a real sweep with Liger's kernels and do_bench.

Skipped where torch is not installed (the core install never needs it). The CPU tests
use the plain-PyTorch references, which run anywhere torch does; tests marked ``gpu``
also need CUDA, triton and liger-kernel and are skipped without them.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

import kernelindex_sdk as ki  # noqa: E402
from bench_adapters.liger_bench.catalog import Tolerance, load_bench_catalog  # noqa: E402
from bench_adapters.liger_bench.plan import Request, parse_overrides, plan  # noqa: E402
from bench_adapters.liger_bench.torch_backend import TorchBackend, compare  # noqa: E402

#: Tiny versions of the seed workloads, so the references run in milliseconds on a CPU.
TINY = {
    "geglu": ["bsz=2", "hidden_size=32", "intermediate_size=48"],
    "llama4_rope": ["hidden_size=64", "num_q_heads=4", "num_kv_heads=2"],
    "distill_cosine_loss": ["H=32", "V=100"],
    "relu_squared": ["M=8"],
}


def tiny_workload(kernel: str, pass_: str, dtype: str = "torch.float32") -> Any:
    items = plan(
        Request(
            kernels=(kernel,),
            passes=(pass_,),
            x_values=(16,),
            overrides=parse_overrides([*TINY[kernel], f"dtype={dtype}"]),
        ),
        load_bench_catalog(),
    )
    return items[0].workload


# --------------------------------------------------------------------------- compare


def test_compare_accepts_values_within_rms_scaled_tolerance() -> None:
    reference = torch.tensor([1000.0, -1000.0, 0.0, 1.0])
    tolerance = Tolerance(atol=1e-3, rtol=1e-3)
    # rms ≈ 707: atol allows ≈ 0.71 anywhere, rtol another 1 near ±1000.
    assert compare(reference + torch.tensor([1.5, -1.5, 0.5, 0.5]), reference, tolerance) is None


def test_compare_reports_count_and_worst_element() -> None:
    reference = torch.zeros(2, 3)
    actual = reference.clone()
    actual[1, 2] = 5.0
    actual[0, 0] = 0.5
    reason = compare(actual, reference, Tolerance(atol=0.1, rtol=0.0))
    assert reason is not None
    assert reason.startswith("2 of 6 elements out of tolerance (reference rms 0)")
    assert "largest |difference| 5 at (1, 2): 5 vs reference 0" in reason


def test_compare_catches_nan_shape_and_missing_gradients() -> None:
    reference = torch.ones(4)
    actual = reference.clone()
    actual[3] = float("nan")
    reason = compare(actual, reference, Tolerance(1.0, 1.0))
    assert reason is not None and "1 of 4" in reason and "nan vs reference 1" in reason
    special = torch.tensor([float("inf"), 1.0])
    assert compare(special.clone(), special, Tolerance(0.0, 0.0)) is None
    assert compare(torch.ones(3), torch.ones(4), Tolerance(1, 1)) == (
        "shape (3,) but the reference has (4,)"
    )
    assert compare(None, torch.ones(1), Tolerance(1, 1)) == "no gradient"
    assert compare(None, None, Tolerance(1, 1)) is None


def test_compare_works_in_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    import bench_adapters.liger_bench.torch_backend as backend

    monkeypatch.setattr(backend, "COMPARE_CHUNK", 3)
    reference = torch.arange(10, dtype=torch.float32)
    actual = reference.clone()
    actual[7] += 100
    reason = compare(actual, reference, Tolerance(1e-3, 1e-3))
    assert reason is not None and "1 of 10" in reason and "at (7,)" in reason


# --------------------------------------------------------------------------- setups and passes


@pytest.mark.parametrize("kernel", sorted(TINY))
@pytest.mark.parametrize("pass_", ["forward", "backward", "full"])
def test_torch_references_run_every_pass_and_repeat_deterministically(
    kernel: str, pass_: str
) -> None:
    backend = TorchBackend("cpu")
    workload = tiny_workload(kernel, pass_)
    first = backend.prepare(workload, "torch", seed=3).results()
    again = backend.prepare(workload, "torch", seed=3).results()
    other = backend.prepare(workload, "torch", seed=4).results()
    names = [name for name, _ in first]
    assert names[0] == "output" or names[0].startswith("output ")
    if pass_ != "forward":
        assert any(name.startswith("grad ") for name in names)
        assert all(value is not None for _, value in first)
    for (_, a), (_, b) in zip(first, again, strict=True):
        assert torch.equal(a, b)
    assert any(not torch.equal(a, b) for (_, a), (_, b) in zip(first, other, strict=True))
    fn, grads = backend.prepare(workload, "torch", seed=3).timed()
    fn()
    fn()
    assert (len(grads) > 0) == (pass_ != "forward")


def _context(dtype: str = "bf16", seed: int = 0) -> Any:
    from bench_adapters.liger_bench.setups import SetupContext

    return SetupContext(
        torch=torch,
        device=torch.device("cpu"),
        dtype=dtype,
        parameters={},
        settings={},
        provider="torch",
        seed=seed,
    )


def test_modules_are_built_on_meta_then_moved_empty_and_filled() -> None:
    """No weight is made (fp32, on the CPU) only to be overwritten: the module is built
    on ``meta``, cast there, moved with ``to_empty`` and filled once, by name."""
    seen: list[str] = []

    def build() -> Any:
        seen.append(torch.empty(0).device.type)
        return torch.nn.Linear(16, 8, bias=True)

    module = _context().module(build)
    assert seen == ["meta"]
    assert {(p.device.type, p.dtype) for p in module.parameters()} == {("cpu", torch.bfloat16)}
    assert all(p.requires_grad for p in module.parameters())
    assert float(module.weight.detach().abs().max()) <= 1 / 4  # ±1/sqrt(fan_in 16)
    again = _context().module(build)
    assert torch.equal(module.weight, again.weight) and torch.equal(module.bias, again.bias)
    other = _context(seed=1).module(build)
    assert not torch.equal(module.weight, other.weight)
    frozen = _context("fp32").module(build, trainable=False)
    assert frozen.weight.dtype == torch.float32 and not frozen.weight.requires_grad


def test_a_module_with_buffers_is_built_on_the_device_so_they_keep_their_values() -> None:
    seen: list[str] = []

    class Scaled(torch.nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            seen.append(torch.empty(0).device.type)
            self.linear = torch.nn.Linear(4, 4)
            self.register_buffer("scale", torch.full((4,), 3.0))

    module = _context().module(Scaled)
    assert seen == ["meta", "cpu"]
    assert torch.equal(module.scale, torch.full((4,), 3.0, dtype=torch.bfloat16))
    assert module.linear.weight.dtype == torch.bfloat16


def test_gradients_are_reset_between_results_and_timing() -> None:
    backend = TorchBackend("cpu")
    prepared = backend.prepare(tiny_workload("relu_squared", "full"), "torch", seed=0)
    prepared.results()
    fn, grads = prepared.timed()
    assert all(g.grad is None for g in grads)
    fn()
    assert all(g.grad is not None for g in grads)


def test_a_reference_passes_its_own_gate_and_a_wrong_kernel_fails_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from bench_adapters.liger_bench import gate, references

    backend = TorchBackend("cpu")
    workload = tiny_workload("relu_squared", "backward")
    tolerance = workload.kernel.tolerance(workload.shape.dtype)
    expected = backend.prepare(workload, "torch", seed=0).results()
    same = backend.prepare(workload, "torch", seed=0).results()
    assert gate.check(same, expected, tolerance, compare, provider="a", reference="b") is None

    monkeypatch.setattr(references, "relu_squared", lambda x: torch.relu(x) ** 2 * 1.01)
    wrong = backend.prepare(workload, "torch", seed=0).results()
    reason = gate.check(wrong, expected, tolerance, compare, provider="a", reference="b")
    assert reason is not None and "in 2 of 2 tensors" in reason


def test_missing_reports_the_module_that_is_not_installed() -> None:
    backend = TorchBackend("cpu")
    kernel = load_bench_catalog().kernels["geglu"]
    assert backend.missing(kernel, "torch") is None
    if importlib.util.find_spec("transformers") is None:
        assert backend.missing(kernel, "huggingface") == "module 'transformers' is not installed"


@pytest.mark.parametrize("kernel", ["geglu", "llama4_rope"])
def test_huggingface_matches_the_torch_formulation(kernel: str) -> None:
    pytest.importorskip("transformers")
    from bench_adapters.liger_bench import gate

    backend = TorchBackend("cpu")
    workload = tiny_workload(kernel, "backward")
    if backend.missing(workload.kernel, "huggingface"):
        pytest.skip(str(backend.missing(workload.kernel, "huggingface")))
    tolerance = workload.kernel.tolerance(workload.shape.dtype)
    expected = backend.prepare(workload, "torch", seed=0).results()
    actual = backend.prepare(workload, "huggingface", seed=0).results()
    assert gate.check(actual, expected, tolerance, compare, provider="hf", reference="t") is None


# --------------------------------------------------------------------------- CUDA


def _cuda_ready() -> str | None:
    if not torch.cuda.is_available():
        return "no CUDA device"
    for module in ("triton", "liger_kernel"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed"
    return None


@pytest.mark.gpu
@pytest.mark.skipif(_cuda_ready() is not None, reason=str(_cuda_ready()))
def test_cuda_sweep_writes_valid_gated_runs(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "kernelindex_sdk.cli.main",
            "bench",
            "liger",
            "--kernel",
            "relu_squared",
            "--pass",
            "backward",
            "--x",
            "512",
            "--metric",
            "speed,memory",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    bundles = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(out.iterdir())]
    assert len(bundles) == 4
    for bundle in bundles:
        assert ki.validate(bundle) == []
        assert bundle["run"]["spec"]["status"] == "passed"
        hardware = bundle["environment"]["spec"]["hardware"]
        assert hardware["architecture"].startswith("sm_")
        assert {"cuda", "torch", "triton", "liger-kernel", "python"} <= set(
            bundle["environment"]["spec"]["software"]
        )
