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

import math
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


#: ``errors(actual, expected, tolerance)``: the largest |difference| and its largest
#: ratio to the tolerance allowed there.
Errors = Callable[[Any, Any, Tolerance], "tuple[float, float]"]

#: ``sourceNative.metrics`` names of the gate's tolerance and the largest error it saw.
GATE_ATOL = "gate_atol"
GATE_RTOL = "gate_rtol"
GATE_MAX_ABS_ERROR = "gate_max_abs_error"
GATE_MAX_ERROR_RATIO = "gate_max_error_ratio"


def errors(
    actual: Results, expected: Results, tolerance: Tolerance, measure: Errors
) -> dict[str, float]:
    """The gate's tolerance, and the largest error over every tensor it compared: the
    largest ``|actual − reference|`` and the largest ratio of it to what the tolerance
    allows there (at most 1 when the check passed). Results that do not pair up, a
    missing gradient and a value no JSON number holds (NaN, infinity) are left out:
    the check's reason says what went wrong there."""
    found = {GATE_ATOL: tolerance.atol, GATE_RTOL: tolerance.rtol}
    if [name for name, _ in actual] != [name for name, _ in expected]:
        return found
    largest: list[float] = []
    ratios: list[float] = []
    for (_, got), (_, want) in zip(actual, expected, strict=True):
        if got is None or want is None:
            continue
        difference, ratio = measure(got, want, tolerance)
        largest.append(difference)
        ratios.append(ratio)
    for name, values in ((GATE_MAX_ABS_ERROR, largest), (GATE_MAX_ERROR_RATIO, ratios)):
        if values and all(math.isfinite(v) for v in values):
            found[name] = max(values)
    return found
