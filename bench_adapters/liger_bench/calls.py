"""Which call a run times, and how its protocol states it.

Two call styles:

* ``upstream`` (the default): per kernel and pass, the call Liger-Kernel's own benchmark
  script makes at the commit that produced the kernel's seed (``upstream`` in
  ``data/kernels.json``, read from ``../shared/liger-upstream``): ``y.backward(dy,
  retain_graph=True)`` or ``torch.autograd.grad(outputs, leaves, upstream,
  allow_unused=True)``, only the gradients the script resets set to None (the others
  accumulate), and the script's do_bench ``warmup``/``rep`` unless asked otherwise;
* ``kernelindex``: the same call for every kernel — ``torch.autograd.backward(outputs,
  upstream)`` with every input's and parameter's ``.grad`` reset before each call, and
  the sweep's warmup and rep.

Two protocols that time different work must have different digests, so the protocol
states the call in ``measurement.harnessSettings`` (:meth:`TimedCall.harness_settings`).
"""

from __future__ import annotations

from typing import Any

import attrs

from bench_adapters.liger_bench.catalog import BenchKernel, CallSpec

UPSTREAM = "upstream"
KERNELINDEX = "kernelindex"
CALL_STYLES = (UPSTREAM, KERNELINDEX)

#: The ``kernelindex`` style's call per pass: every leaf's gradient reset.
KERNELINDEX_CALLS = {
    "forward": CallSpec("forward", grad_to_none=()),
    "backward": CallSpec("backward", retain_graph=True, upstream="fixed"),
    "full": CallSpec("backward", retain_graph=False, upstream="fixed"),
}


@attrs.frozen
class TimedCall:
    """The call a run of one kernel and pass times, and the harness it follows."""

    style: str
    pass_: str
    spec: CallSpec
    #: do_bench's warm-up and rep the style asks for (None: the sweep's own).
    warmup_ms: float | None = None
    rep_ms: float | None = None
    #: ``geglu/benchmark_geglu.py@b5672a15…`` for the upstream style.
    script: str | None = None

    def statement(self) -> str:
        """The timed call, as code: ``torch.autograd.grad(outputs, leaves, dy, …)``."""
        spec = self.spec
        if spec.call == "forward":
            return "forward()"
        retain = ", retain_graph=True" if spec.retain_graph else ""
        upstream = {
            "fixed": "dy",
            "fresh": "torch.randn_like(output)",
            "implicit": "",
        }[spec.upstream]
        if spec.call == "autograd_grad":
            grad = upstream or "None"
            call = f"torch.autograd.grad(outputs, leaves, {grad}, allow_unused=True{retain})"
        else:
            grad = f", {upstream}" if upstream else ""
            call = f"torch.autograd.backward(outputs{grad}{retain})"
        return call if self.pass_ == "backward" else f"outputs = forward(); {call}"

    def resets(self) -> str:
        """The gradients reset before each call: names, ``every leaf`` or ``none``."""
        names = self.spec.grad_to_none
        if names is None:
            return "every leaf"
        return ",".join(names) if names else "none"

    def harness_settings(self) -> dict[str, Any]:
        """The protocol's ``measurement.harnessSettings``: what is called and reset."""
        settings: dict[str, Any] = {
            "callStyle": self.style,
            "timedCall": self.statement(),
            "gradToNone": self.resets(),
            "otherGradients": "accumulate" if self.spec.call != "forward" else "none computed",
        }
        if self.spec.grad_to_none is None or self.spec.call == "autograd_grad":
            # autograd.grad accumulates nothing into .grad; every-leaf resets leave none.
            settings["otherGradients"] = "none accumulated"
        if self.script is not None:
            settings["upstreamScript"] = self.script
        return settings


def timed_call(kernel: BenchKernel, pass_: str, style: str) -> TimedCall:
    """The call ``style`` times for ``kernel``'s ``pass_`` (``upstream`` falls back to
    ``kernelindex`` for a kernel whose script is not known, and says so in its style)."""
    if style not in CALL_STYLES:
        raise ValueError(f"unknown call style {style!r}; known: {', '.join(CALL_STYLES)}")
    upstream = kernel.upstream
    if style == KERNELINDEX or upstream is None:
        return TimedCall(KERNELINDEX, pass_, KERNELINDEX_CALLS[pass_])
    return TimedCall(
        UPSTREAM,
        pass_,
        upstream.passes[pass_],
        warmup_ms=upstream.warmup_ms,
        rep_ms=upstream.rep_ms,
        script=f"{upstream.script}@{upstream.commit[:8]}",
    )
