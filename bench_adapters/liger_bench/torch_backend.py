"""The torch side of a sweep: set providers up, build the timed pass, compare results.

Passes are generic, as in Liger's harness: ``forward`` times the forward call (with
autograd recording, inputs requiring grad); ``backward`` runs the forward once and
times its backward; ``full`` times forward plus backward. How the backward is called
— ``torch.autograd.backward`` or ``torch.autograd.grad``, the graph retained or not,
the upstream gradient fixed or drawn in the call — and which leaves' ``.grad`` do_bench
resets between calls is the pass's :class:`~bench_adapters.liger_bench.catalog.CallSpec`
(:mod:`~bench_adapters.liger_bench.calls`). A fixed upstream gradient is drawn from the
run seed (ones for a scalar loss), so every provider gets the same one.

torch is imported when a backend is made, never when this module is imported.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
from collections.abc import Callable, Sequence
from typing import Any

from bench_adapters.liger_bench.calls import KERNELINDEX_CALLS
from bench_adapters.liger_bench.catalog import BenchKernel, CallSpec, Tolerance
from bench_adapters.liger_bench.gate import Results
from bench_adapters.liger_bench.plan import Workload
from bench_adapters.liger_bench.setups import SETUPS, Case, SetupContext

#: Elements compared at a time, so checking a 1 GiB gradient needs no 4 GiB of temporaries.
COMPARE_CHUNK = 1 << 24
#: Added to the run seed for upstream gradients, so they differ from the inputs.
UPSTREAM_SEED_OFFSET = 7919


class TorchBackend:
    """Builds each provider's case on a CUDA device (or, in tests, the CPU)."""

    def __init__(self, device: str = "cuda") -> None:
        self.torch = importlib.import_module("torch")
        self.device = self.torch.device(device)
        self._missing: dict[tuple[str, str], str | None] = {}

    def missing(self, kernel: BenchKernel, provider: str) -> str | None:
        key = (kernel.name, provider)
        if key not in self._missing:
            entry = kernel.providers[provider]
            modules = ("torch", *entry.requires, entry.entry_point.rpartition(".")[0])
            self._missing[key] = _first_missing(modules)
        return self._missing[key]

    def prepare(self, workload: Workload, provider: str, seed: int) -> TorchPrepared:
        setup = SETUPS.get(workload.kernel.setup)
        if setup is None:
            raise LookupError(f"no setup function {workload.kernel.setup!r} in setups.SETUPS")
        context = SetupContext(
            torch=self.torch,
            device=self.device,
            dtype=workload.shape.dtype,
            parameters=workload.shape.parameters,
            settings=workload.shape.settings,
            provider=provider,
            seed=seed,
        )
        prepared = TorchPrepared(self.torch, setup(context), workload.pass_, seed, self.device)
        prepared.synchronize()
        return prepared

    def compare(self, actual: Any, expected: Any, tolerance: Tolerance) -> str | None:
        return compare(actual, expected, tolerance)

    def worst(self, actual: Any, expected: Any, tolerance: Tolerance) -> tuple[float, float]:
        return errors(actual, expected, tolerance)


def _first_missing(modules: Sequence[str]) -> str | None:
    for module in modules:
        if not module:
            continue
        try:
            # find_spec of a submodule imports its parents, which can fail in any way
            # (a broken or mismatched install): each is a reason not to run, not a crash.
            found = importlib.util.find_spec(module)
        except Exception as error:
            return f"module {module!r} cannot be imported ({type(error).__name__}: {error})"
        if found is None:
            return f"module {module!r} is not installed"
    return None


class TorchPrepared:
    """One provider's case at one workload, and the pass to run on it."""

    def __init__(self, torch: Any, case: Case, pass_: str, seed: int, device: Any) -> None:
        self.torch = torch
        self.case = case
        self.pass_ = pass_
        self.seed = seed
        self.device = device

    def synchronize(self) -> None:
        """Wait for the device's queued work, so a wall clock around a call measures it."""
        if self.device.type == "cuda":
            self.torch.cuda.synchronize(self.device)

    def _outputs(self, value: Any) -> tuple[Any, ...]:
        return tuple(value) if isinstance(value, (tuple, list)) else (value,)

    def _upstream(self, outputs: Sequence[Any]) -> tuple[Any, ...]:
        torch = self.torch
        generator = torch.Generator(device=self.device)
        generator.manual_seed(self.seed + UPSTREAM_SEED_OFFSET)
        grads = []
        for output in outputs:
            if output.numel() == 1:
                grads.append(torch.ones_like(output))
            else:
                value = torch.randn(
                    tuple(output.shape),
                    generator=generator,
                    device=output.device,
                    dtype=torch.float32,
                )
                grads.append(value.to(output.dtype))
        return tuple(grads)

    def _clear_grads(self) -> None:
        for _, leaf in self.case.leaves:
            leaf.grad = None

    def results(self) -> Results:
        """One call of the pass; returns when the device has finished it."""
        outputs = self._outputs(self.case.forward())
        single = len(outputs) == 1
        named: list[tuple[str, Any]] = [
            ("output" if single else f"output {i}", out.detach().clone())
            for i, out in enumerate(outputs)
        ]
        if self.pass_ != "forward":
            self._clear_grads()
            self.torch.autograd.backward(outputs, self._upstream(outputs))
            for name, leaf in self.case.leaves:
                grad = leaf.grad
                named.append((f"grad {name}", None if grad is None else grad.detach().clone()))
            self._clear_grads()
        self.synchronize()
        return named

    def timed(self, call: CallSpec | None = None) -> tuple[Callable[[], object], Sequence[Any]]:
        """The callable ``call`` times (default: the ``kernelindex`` style's), and the
        leaves whose ``.grad`` is reset before each call."""
        spec = call or KERNELINDEX_CALLS[self.pass_]
        forward = self.case.forward
        if self.pass_ == "forward" or spec.call == "forward":
            return forward, self._resets(spec) if self.pass_ == "forward" else []
        backward = self._backward(spec)
        if self.pass_ == "backward":
            outputs = self._outputs(forward())
            upstream = self._upstream(outputs)

            def backward_only() -> None:
                backward(outputs, upstream)

            return backward_only, self._resets(spec)
        # Only the shapes of one forward's outputs are needed: its graph is dropped here.
        upstream_full = self._upstream(self._outputs(forward()))
        self._clear_grads()

        def full() -> None:
            backward(self._outputs(forward()), upstream_full)

        return full, self._resets(spec)

    def _resets(self, spec: CallSpec) -> list[Any]:
        """The leaves ``spec`` resets, by name (None: every leaf)."""
        if spec.grad_to_none is None:
            return [leaf for _, leaf in self.case.leaves]
        known = dict(self.case.leaves)
        missing = [name for name in spec.grad_to_none if name not in known]
        if missing:
            raise LookupError(f"no leaf named {', '.join(missing)} (leaves: {', '.join(known)})")
        return [known[name] for name in spec.grad_to_none]

    def _backward(self, spec: CallSpec) -> Callable[[tuple[Any, ...], tuple[Any, ...]], object]:
        """``(outputs, upstream) -> None``: the backward call ``spec`` makes."""
        torch, retain = self.torch, spec.retain_graph
        leaves = tuple(leaf for _, leaf in self.case.leaves)

        def gradients(outputs: tuple[Any, ...], upstream: tuple[Any, ...]) -> Any:
            if spec.upstream == "fresh":
                return tuple(torch.randn_like(output) for output in outputs)
            return None if spec.upstream == "implicit" else upstream

        if spec.call == "autograd_grad":
            return lambda outputs, upstream: torch.autograd.grad(
                outputs,
                leaves,
                gradients(outputs, upstream),
                allow_unused=True,
                retain_graph=retain,
            )
        return lambda outputs, upstream: torch.autograd.backward(
            outputs, gradients(outputs, upstream), retain_graph=retain
        )


def compare(actual: Any, expected: Any, tolerance: Tolerance) -> str | None:
    """None when ``|a − r| ≤ atol · rms(r) + rtol · |r|`` everywhere, else what differs.

    Where the reference is finite the result must be too; where the reference is NaN
    or infinite the result must be the same. Works through the tensors in chunks.
    """
    if actual is None or expected is None:
        if actual is None and expected is None:
            return None
        return "no gradient" if actual is None else "a gradient where the reference has none"
    torch = importlib.import_module("torch")
    if tuple(actual.shape) != tuple(expected.shape):
        return f"shape {tuple(actual.shape)} but the reference has {tuple(expected.shape)}"
    got = actual.detach().reshape(-1)
    want = expected.detach().reshape(-1)
    total = want.numel()
    if total == 0:
        return None
    squares, finite = 0.0, 0
    for start in range(0, total, COMPARE_CHUNK):
        chunk = want[start : start + COMPARE_CHUNK].double()
        mask = torch.isfinite(chunk)
        squares += float(chunk[mask].square().sum().item())
        finite += int(mask.sum().item())
    rms = math.sqrt(squares / finite) if finite else 0.0
    bad, worst = 0, (-1.0, 0, 0.0, 0.0)
    for start in range(0, total, COMPARE_CHUNK):
        a = got[start : start + COMPARE_CHUNK].double()
        r = want[start : start + COMPARE_CHUNK].double()
        difference = (a - r).abs()
        allowed = tolerance.atol * rms + tolerance.rtol * r.abs()
        same_special = ~torch.isfinite(r) & ((a == r) | (a.isnan() & r.isnan()))
        wrong = ~((difference <= allowed) | same_special)
        count = int(wrong.sum().item())
        if count:
            bad += count
            scored = torch.where(wrong, torch.nan_to_num(difference, nan=math.inf), -1.0)
            index = int(scored.argmax().item())
            score = float(scored[index].item())
            if score > worst[0]:
                worst = (score, start + index, float(a[index].item()), float(r[index].item()))
    if not bad:
        return None
    score, flat, value, reference = worst
    where = _unravel(flat, tuple(expected.shape))
    return (
        f"{bad} of {total} elements out of tolerance (reference rms {rms:.4g}); "
        f"largest |difference| {score:.4g} at {where}: {value:.6g} vs reference {reference:.6g}"
    )


def errors(actual: Any, expected: Any, tolerance: Tolerance) -> tuple[float, float]:
    """The largest ``|a − r|`` and the largest ``|a − r| / (atol · rms(r) + rtol · |r|)``
    (:func:`compare`'s bound), over the elements where both are finite, in chunks.
    A difference where the bound is 0 is an infinite ratio."""
    torch = importlib.import_module("torch")
    if tuple(actual.shape) != tuple(expected.shape) or expected.numel() == 0:
        return 0.0, 0.0
    got = actual.detach().reshape(-1)
    want = expected.detach().reshape(-1)
    squares, finite = 0.0, 0
    for start in range(0, want.numel(), COMPARE_CHUNK):
        chunk = want[start : start + COMPARE_CHUNK].double()
        mask = torch.isfinite(chunk)
        squares += float(chunk[mask].square().sum().item())
        finite += int(mask.sum().item())
    rms = math.sqrt(squares / finite) if finite else 0.0
    largest, ratio = 0.0, 0.0
    for start in range(0, want.numel(), COMPARE_CHUNK):
        a = got[start : start + COMPARE_CHUNK].double()
        r = want[start : start + COMPARE_CHUNK].double()
        both = torch.isfinite(a) & torch.isfinite(r)
        difference = torch.where(both, (a - r).abs(), torch.zeros_like(r))
        allowed = tolerance.atol * rms + tolerance.rtol * r.abs()
        scaled = torch.where(
            difference > 0, difference / allowed, torch.zeros_like(r)
        )  # x / 0 is inf: no allowance at all
        largest = max(largest, float(difference.max().item()))
        ratio = max(ratio, float(scaled.max().item()))
    return largest, ratio


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    index = []
    for size in reversed(shape):
        index.append(flat % size)
        flat //= size
    return tuple(reversed(index))
