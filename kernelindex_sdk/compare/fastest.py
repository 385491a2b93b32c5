"""The fastest implementation: which of runs measured alike has the smallest value.

Tables mark it per row (a sweep table's row is a shape, its cells implementations; a
group's table is one shape, its rows implementations). Both metrics are better lower,
so for peak memory this is the implementation that needs the least. Only passed runs
of one primary statistic compete, and only where at least two do: a lone run is not
"the fastest" of anything. Ties are all marked.
"""

from __future__ import annotations

from collections.abc import Sequence

from kernelindex_sdk.compare.runs import ResolvedRun

__all__ = ["fastest"]


def fastest(runs: Sequence[ResolvedRun | None]) -> frozenset[int]:
    """The positions in ``runs`` of the fastest passed runs (None: no run there); empty
    where fewer than two passed runs compete or their statistics differ."""
    passed = [
        (i, run) for i, run in enumerate(runs) if run is not None and run.passed and run.value
    ]
    if len(passed) < 2 or len({run.statistic for _, run in passed}) != 1:
        return frozenset()
    best = min(run.value or 0.0 for _, run in passed)
    return frozenset(i for i, run in passed if run.value == best)
