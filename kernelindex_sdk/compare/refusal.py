"""What a before/after gate refuses whatever the verdicts: runs that are no measurement.

A run timed by an injected timer (a fake, or a caller's own, through a test seam:
flagged ``injected_timer``) carries figures nobody measured. A gate that paired it
would pass or fail on made-up numbers, so :func:`refuse_injected` turns any such run,
on either side, into a failing outcome (exit 1 at least), saying how many there were.
``compare --against`` and the ``kernel_bench`` pytest gate both ask it.
"""

from __future__ import annotations

from collections.abc import Iterable

from kernelindex_sdk.compare.beforeafter import Outcome
from kernelindex_sdk.compare.runs import ResolvedRun, injected_runs


def refuse_injected(outcome: Outcome, runs: Iterable[ResolvedRun]) -> Outcome:
    """``outcome`` unchanged when no run of ``runs`` was timed by an injected timer;
    else a failing one (status at least 1) whose reason says so."""
    found = len(injected_runs(runs))
    if not found:
        return outcome
    why = f"{found} run{'s' * (found != 1)} timed by an injected timer: not measurements"
    reason = why if outcome.status == 0 else f"{outcome.reason}; {why}"
    return Outcome(max(outcome.status, 1), reason)
