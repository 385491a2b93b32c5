"""The correctness gate: a kernel is timed only after its results match the reference.

Before any timing, the provider under test and the reference (Hugging Face or PyTorch,
whichever Liger compares itself with) run the same workload on the same inputs; their
outputs — and, when the timed pass includes a backward pass, the gradients of every
input and parameter — are compared within a dtype-appropriate tolerance. A mismatch
becomes a run with status ``failed`` and a reason that says which tensor differed and
by how much: a timing of wrong code is never recorded.

This module holds the rule, not the arithmetic: the element-wise comparison is a
``compare`` callable (the torch one is :func:`bench_adapters.liger_bench.torch_backend.compare`),
so the gate is tested on a CPU without torch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from bench_adapters.liger_bench.catalog import Tolerance

#: ``(name, tensor)`` pairs: ``output 0``, ``grad x``, ``grad gate_proj.weight``, ...
Results = Sequence[tuple[str, Any]]
#: ``compare(actual, expected, tolerance)``: None when within tolerance, else what differs.
Compare = Callable[[Any, Any, Tolerance], "str | None"]


def check(
    actual: Results,
    expected: Results,
    tolerance: Tolerance,
    compare: Compare,
    *,
    provider: str,
    reference: str,
) -> str | None:
    """None when ``actual`` matches ``expected``; else the reason the run failed."""
    names = [name for name, _ in actual]
    wanted = [name for name, _ in expected]
    if names != wanted:
        return (
            f"correctness check: {provider} produced {_list(names)} but the {reference} "
            f"reference produced {_list(wanted)}"
        )
    problems = []
    for (name, got), (_, want) in zip(actual, expected, strict=True):
        difference = compare(got, want, tolerance)
        if difference is not None:
            problems.append(f"{name}: {difference}")
    if not problems:
        return None
    return (
        f"correctness check: {provider} differs from the {reference} reference "
        f"(atol {tolerance.atol:g} x rms, rtol {tolerance.rtol:g}) in "
        f"{len(problems)} of {len(names)} tensors; " + "; ".join(problems)
    )


def _list(names: Sequence[str]) -> str:
    return "[" + ", ".join(names) + "]" if names else "nothing"
