"""One line per GPU, metric and implementation instead of one table per workload.

KernelBench's 250 problems make 250 tables; what people ask of them is one figure per
implementation: how much faster than the baseline, on how many problems, and how
often (KernelBench's own ``fast_p``). :func:`summarize` reads those off a
:class:`~kernelindex_sdk.compare.grouping.Comparison`, so every decision behind a
figure — which runs are comparable, the newest run of each implementation, the
baseline and its ratio — is the one the tables show.

For each GPU (hardware identity), metric, baseline provider and implementation:

* the **universe** is every comparable group (workload × protocol) on that GPU and
  metric whose baseline is that provider *with a passed run*: without one there is
  nothing to be faster than;
* **workloads**: the groups of the universe where the implementation has a passed run
  with a ratio (the pairs);
* **geomeanSpeedup**: the geometric mean of ``baseline ÷ implementation`` over the
  pairs — a speed-up for latency, a memory saving for peak memory (the ratio the
  tables show; a geometric mean because ratios multiply: 2× and 0.5× average to 1×);
* **fasterShare**: the share of the pairs with a ratio above 1;
* **fastP[p]**: KernelBench's ``fast_p`` — the share of the *universe* where the
  implementation passed and its ratio is above ``p``; a run that failed, or no run,
  counts as not fast (so ``fast_0`` is the share that ran correctly);
* **failed** (the newest run did not pass) and **absent** (no run, or no ratio: a
  different statistic), whose sum is **missing**.

An implementation is summarised against a baseline provider when it has a row in at
least one group with that baseline; a group where it *is* the baseline run does not
count for it. A workload measured under two protocols is two groups, so counts twice.
With ``--against`` (or ``--across gpu``), :func:`summarize_pairs` summarises the pairs
of a before/after comparison instead, in the verdicts' own terms, so that the summary
and the verdict table never disagree: per GPU (pair of GPUs), metric and lineage, the
**verdicts** counted as the gate counts them (``faster`` and ``slower`` are verdicts —
beyond the threshold and the noise —, not ratios above or below 1), and the geometric
mean of the **ratio candidate ÷ reference**, the gate line's own (one
:func:`~kernelindex_sdk.compare.beforeafter.tally` computes both). ``fast_p`` keeps
KernelBench's definition: the share of the universe where the candidate passed with a
speed-up (reference ÷ candidate, raw, not a verdict) above ``p``.

Nothing depends on the order of the runs or how they were split across files: groups
and rows are keyed by digest, counts are integers, and the logarithms are summed with
:func:`math.fsum` (exactly rounded, so in any order the same).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

import attrs

from kernelindex_sdk.base.metrics import LATENCY, PEAK_MEMORY
from kernelindex_sdk.compare.beforeafter import (
    FASTER,
    RATIO_DIRECTION,
    SLOWER,
    BeforeAfter,
    Pair,
    lineage,
    tally,
)
from kernelindex_sdk.compare.grouping import Comparison, natural_order
from kernelindex_sdk.compare.runs import ResolvedRun, short_digest

#: The threshold ``fast_p`` is given at when none is asked for: faster than the baseline.
DEFAULT_THRESHOLDS: Final[tuple[float, ...]] = (1.0,)
#: How a plain summary's ratio reads (a speed-up: bigger is better).
SPEEDUP: Final = "baseline / implementation"
#: How a summary of pairs reads: the ratio of every before/after report.
PAIR_RATIO: Final = RATIO_DIRECTION
#: How metrics sort: latency first, as the tables.
_METRIC_ORDER: Final = {LATENCY: 0, PEAK_MEMORY: 1}


@attrs.frozen
class Summary:
    """One implementation against one baseline provider on one GPU and metric."""

    gpu: str
    #: The hardware identity (:func:`~kernelindex_sdk.compare.runs.hardware_identity`).
    hardware: str
    metric: str
    #: The baseline provider.
    baseline: str
    implementation: str
    implementation_digest: str
    provider: str | None
    #: Groups where both have a passed run with a ratio.
    workloads: int
    #: ``baseline ÷ implementation`` over those groups, geometric mean (None: no pair).
    geomean: float | None
    #: Pairs with a ratio above 1.
    faster: int
    #: Threshold → groups of the universe where the implementation passed with a
    #: ratio above it.
    fast: Mapping[float, int]
    #: Groups where its newest run did not pass.
    failed: int
    #: Groups where it has no run, or no ratio (a different statistic).
    absent: int
    #: What :attr:`geomean` is the mean of: :data:`SPEEDUP` or :data:`PAIR_RATIO`.
    direction: str = SPEEDUP
    #: Of a summary of pairs: the pairs per verdict, as the gate counts them.
    verdicts: Mapping[str, int] | None = None
    #: Of a summary of pairs across GPUs: the candidate's hardware identity.
    candidate_hardware: str | None = None

    @property
    def pairs(self) -> int:
        """Pairs judged (summary of pairs), else the pairs with a ratio."""
        return sum(self.verdicts.values()) if self.verdicts is not None else self.workloads

    @property
    def slower(self) -> int | None:
        """Pairs judged ``slower`` (None for a plain summary: it has no verdicts)."""
        return self.verdicts.get(SLOWER, 0) if self.verdicts is not None else None

    @property
    def slower_share(self) -> float | None:
        slower = self.slower
        return slower / self.pairs if slower is not None and self.pairs else None

    @property
    def missing(self) -> int:
        return self.failed + self.absent

    @property
    def universe(self) -> int:
        """Groups with this baseline's passed run on this GPU and metric."""
        return self.workloads + self.missing

    @property
    def faster_share(self) -> float | None:
        """Plain: pairs with a ratio above 1 over the pairs; of pairs: pairs judged
        ``faster`` over the pairs judged."""
        return self.faster / self.pairs if self.pairs else None

    def fast_p(self, threshold: float) -> float | None:
        """KernelBench's ``fast_p``: correct and more than ``threshold``× (None: empty)."""
        return self.fast[threshold] / self.universe if self.universe else None


def check_thresholds(thresholds: Iterable[float]) -> tuple[float, ...]:
    """Distinct thresholds in increasing order; ValueError for a negative or non-finite one."""
    out = []
    for threshold in thresholds:
        if not math.isfinite(threshold) or threshold < 0:
            raise ValueError(f"a fast_p threshold must be a finite number ≥ 0, not {threshold}")
        out.append(float(threshold))
    return tuple(sorted(set(out)))


def threshold_name(threshold: float) -> str:
    """``1``, ``1.5``, ``0.8``: how a threshold is written in keys and headings."""
    return f"{threshold:.10g}"


@attrs.define
class _Tally:
    """The counts behind one summary, read pair by pair.

    Plain ``compare`` and ``compare --against`` both feed it: a passed pair's speed-up
    (:meth:`add`), a failed one (``failed``), and the size of the universe; every
    figure of a :class:`Summary` — the geometric mean, the shares, ``fast_p`` — is
    computed here, once.
    """

    gpu: str
    hardware: str
    metric: str
    baseline: str
    label: str
    digest: str
    provider: str | None
    logs: list[float] = attrs.Factory(list)
    zero: bool = False
    faster: int = 0
    fast: dict[float, int] = attrs.Factory(dict)
    failed: int = 0
    #: Groups (or reference runs) with a passed baseline: set once all are read.
    universe: int = 0

    def add(self, speedup: float, thresholds: Sequence[float]) -> None:
        """A pair where both passed: ``baseline ÷ implementation`` (bigger is better)."""
        if speedup > 0:
            self.logs.append(math.log(speedup))
        else:
            self.zero = True
            self.logs.append(0.0)
        self.faster += speedup > 1
        for threshold in thresholds:
            self.fast[threshold] = self.fast.get(threshold, 0) + (speedup > threshold)

    def summary(self, thresholds: Sequence[float]) -> Summary:
        pairs = len(self.logs)
        geomean = None
        if pairs:
            geomean = 0.0 if self.zero else math.exp(math.fsum(self.logs) / pairs)
        return Summary(
            gpu=self.gpu,
            hardware=self.hardware,
            metric=self.metric,
            baseline=self.baseline,
            implementation=self.label,
            implementation_digest=self.digest,
            provider=self.provider,
            workloads=pairs,
            geomean=geomean,
            faster=self.faster,
            fast={t: self.fast.get(t, 0) for t in thresholds},
            failed=self.failed,
            absent=self.universe - self.failed - pairs,
        )


def summarize(
    comparison: Comparison, thresholds: Sequence[float] = DEFAULT_THRESHOLDS
) -> list[Summary]:
    """A :class:`Summary` per GPU, metric, baseline provider and implementation."""
    wanted = check_thresholds(thresholds)
    # (hardware, metric, baseline) → groups in the universe.
    universes: dict[tuple[str, str, str], int] = {}
    gpus: dict[str, str] = {}
    tallies: dict[tuple[str, str, str], dict[str, _Tally]] = {}
    for group in comparison.groups:
        if group.baseline is None:
            continue
        place = (group.key.hardware, group.metric, group.baseline)
        gpu = gpus.setdefault(group.key.hardware, group.first.gpu)
        base = next((row for row in group.rows if row.is_baseline), None)
        counted = base is not None and base.newest.passed
        if counted:
            universes[place] = universes.get(place, 0) + 1
        found = tallies.setdefault(place, {})
        for row in group.rows:
            if row is base:
                continue
            tally = found.get(row.implementation)
            if tally is None:
                tally = found[row.implementation] = _Tally(
                    gpu, *place, row.label, row.implementation, row.provider
                )
            if not counted:
                continue
            if not row.newest.passed:
                tally.failed += 1
            elif row.ratio is not None:
                tally.add(row.ratio, wanted)
    for place, found in tallies.items():
        for tally in found.values():
            tally.universe = universes.get(place, 0)
    return _finish([t for found in tallies.values() for t in found.values()], wanted)


def summarize_pairs(
    result: BeforeAfter, thresholds: Sequence[float] = DEFAULT_THRESHOLDS
) -> list[Summary]:
    """A :class:`Summary` per GPU (pair of GPUs, across GPUs), metric and implementation
    lineage of a before/after comparison (``compare --against ... --summary``).

    Its figures are the verdicts' (the module's docstring): ``verdicts`` counts the
    line's pairs per verdict and ``geomean`` is the geometric mean of their ratios
    candidate ÷ reference — both by :func:`~kernelindex_sdk.compare.beforeafter.tally`,
    the gate's own —, ``faster`` the pairs judged faster. The universe of a lineage is
    its reference runs (the newest of each pair key) that passed: **workloads** are
    those paired with a candidate and a ratio, **failed** those whose candidate did not
    pass, **absent** those with no candidate (unpaired; across GPUs, in every line of
    its GPU) or no ratio; ``fast_p`` counts the universe's passed candidates whose
    speed-up reference ÷ candidate is above ``p`` (KernelBench's definition).
    ``baseline`` and ``implementation`` are the reference's and the candidate's
    implementation labels (comma-separated where a lineage spans several versions),
    the digest the candidate's.
    """
    wanted = check_thresholds(thresholds)
    lines: dict[_Place, _PairLine] = {}
    for pair in result.pairs:
        ref, cand = pair.reference, pair.candidate
        place = _place(ref, cand.hardware if result.across else "", result.pair_by)
        line = lines.setdefault(place, _PairLine(ref, cand))
        line.add(pair, wanted)
    for lonely in result.unpaired_reference:
        ref = lonely.run
        places = [p for p in lines if _place(ref, p[1], result.pair_by) == p] or [
            _place(ref, "", result.pair_by)
        ]
        for place in places:
            line = lines.setdefault(place, _PairLine(ref, None))
            line.refs.add(ref.implementation_label)
            line.universe += ref.passed
    return _finish_pairs([line.summary(wanted) for line in lines.values()])


#: Where a pair's line is: reference hardware, candidate hardware (across GPUs, else
#: ""), metric and the lineage.
_Place = tuple[str, str, str, tuple[str | None, ...]]


def _place(reference: ResolvedRun, candidate_hardware: str, pair_by: str) -> _Place:
    return (reference.hardware, candidate_hardware, reference.metric, lineage(reference, pair_by))


@attrs.define
class _PairLine:
    """The pairs of one line of a summary of pairs, read one by one."""

    reference: ResolvedRun
    candidate: ResolvedRun | None
    pairs: list[Pair] = attrs.Factory(list)
    refs: set[str] = attrs.Factory(set)
    cands: set[str] = attrs.Factory(set)
    digests: set[str] = attrs.Factory(set)
    fast: dict[float, int] = attrs.Factory(dict)
    universe: int = 0
    failed: int = 0

    def add(self, pair: Pair, thresholds: Sequence[float]) -> None:
        ref, cand = pair.reference, pair.candidate
        self.pairs.append(pair)
        self.refs.add(ref.implementation_label)
        self.cands.add(cand.implementation_label)
        self.digests.add(cand.implementation_digest)
        if not ref.passed:
            return
        self.universe += 1
        if not cand.passed:
            self.failed += 1
        elif pair.ratio is not None and pair.ratio > 0:
            for threshold in thresholds:
                self.fast[threshold] = self.fast.get(threshold, 0) + (1 / pair.ratio > threshold)

    def summary(self, thresholds: Sequence[float]) -> Summary:
        judged = tally(self.pairs)
        ref, cand = self.reference, self.candidate
        across = cand is not None and cand.hardware != ref.hardware
        return Summary(
            gpu=f"{ref.gpu} → {cand.gpu}" if across and cand is not None else ref.gpu,
            hardware=ref.hardware,
            metric=ref.metric,
            baseline=", ".join(sorted(self.refs, key=natural_order)),
            implementation=", ".join(sorted(self.cands or self.refs, key=natural_order)),
            implementation_digest=",".join(sorted(self.digests)),
            provider=ref.provider,
            workloads=judged.ratios,
            geomean=judged.geomean,
            faster=judged.counts[FASTER],
            fast={t: self.fast.get(t, 0) for t in thresholds},
            failed=self.failed,
            absent=self.universe - self.failed - judged.ratios,
            direction=PAIR_RATIO,
            verdicts=dict(judged.counts),
            candidate_hardware=cand.hardware if across and cand is not None else None,
        )


def _finish_pairs(summaries: list[Summary]) -> list[Summary]:
    summaries.sort(key=lambda s: (*_order(s), s.candidate_hardware or ""))
    return _distinct_labels(summaries)


def _finish(tallies: Iterable[_Tally], thresholds: Sequence[float]) -> list[Summary]:
    summaries = [tally.summary(thresholds) for tally in tallies]
    summaries.sort(key=_order)
    return _distinct_labels(summaries)


def _distinct_labels(summaries: list[Summary]) -> list[Summary]:
    """Two implementations with one label (same provider and version, another entry
    point or backend) are told apart in text by their digest: ``liger 0.5.0
    (sha256:0123456789ab)``."""

    def label(s: Summary) -> tuple[str | None, ...]:
        return (s.hardware, s.candidate_hardware, s.metric, s.baseline, s.implementation)

    seen = Counter(label(s) for s in summaries)
    return [
        attrs.evolve(
            s, implementation=f"{s.implementation} ({short_digest(s.implementation_digest)})"
        )
        if seen[label(s)] > 1
        else s
        for s in summaries
    ]


def _order(summary: Summary) -> tuple[object, ...]:
    return (
        summary.gpu,
        summary.hardware,
        _METRIC_ORDER.get(summary.metric, len(_METRIC_ORDER)),
        summary.metric,
        summary.baseline,
        natural_order(summary.implementation),
        summary.implementation_digest,
    )
