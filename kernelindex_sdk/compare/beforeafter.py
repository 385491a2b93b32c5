"""Before/after: pair each candidate run with its reference run and give a verdict.

The question is "is my branch slower than main?": a reference set of runs (main, the
last release) and a candidate set (the branch), measured with the same benchmark.

Pairing
-------
A candidate run is paired with the reference run that has the same

* comparability key (:class:`~kernelindex_sdk.compare.runs.ComparabilityKey`:
  workload, protocol and GPU hardware by digest, and the metric), and
* implementation **lineage**: what stays when only a version or a source revision
  changed — the provider, the package name, the entry point and the backend of the
  Implementation record. ``liger 0.5.0`` and ``liger 0.5.1`` are one lineage;
  ``liger`` and ``huggingface`` are two; so are one provider's two entry points.

``across="gpu"`` leaves the GPU out of the key: each candidate run pairs with the
reference run of the same workload, protocol, metric and lineage on *any* GPU —
``compare --across gpu`` splits one set by GPU and pairs each other GPU's runs with
the reference GPU's, so that its ratios (candidate GPU ÷ reference GPU) get the same
verdicts as a before/after. Candidate runs on several GPUs each pair with that one
reference run.

``pair_by="exact"`` pairs by implementation digest instead (the same version on both
sides: a re-run, or a change outside the implementation, e.g. a new driver). A run
whose Implementation record was not given pairs by its digest either way.

Several runs of one side may qualify (re-runs, or two versions of one lineage): the
newest by ``observedAt`` is used, as plain ``compare`` does, and the others are kept
on the pair (:attr:`Pair.reference_others`) so a report can say so. Runs of either
side with no counterpart are returned as :class:`Unpaired`, never dropped; where a
run of the other side *almost* pairs (same workload and lineage on another GPU or
protocol; another shape of the same kernel; the same key but another version under
``exact``; the same key and another implementation), :attr:`Unpaired.near` names it and
:attr:`Unpaired.differences` says what differs, as ``compare --explain`` does.

Verdicts
--------
The ratio is ``candidate / reference`` of the primary statistic: above 1 the
candidate takes longer (or needs more memory). Both metrics are better lower. With
``t`` the threshold (default 5 %):

* ``same`` — the larger value is less than ``1 + t`` times the smaller: the change is
  below the threshold, whatever the noise;
* ``slower`` / ``faster`` — a larger change *and* beyond the two runs' noise
  (:func:`~kernelindex_sdk.compare.noise.beyond_noise`): their noise intervals do not
  overlap, or the change is larger than the recorded relative noise (nvbench's rule,
  with the larger of the two noises);
* ``unsure`` — a larger change, but within the noise the runs themselves recorded.

A run with no noise recorded (collapsed quantiles, one sample) counts as its value
alone; when neither side has any, the threshold decides alone and the reason says so.
The threshold test is written on the larger and the smaller value, so swapping the
sides mirrors every verdict exactly. A candidate that did not pass where the reference
did is ``slower`` (a new failure is a regression), the reverse ``faster``, neither
passing ``same``; their ratio is None. Two different primary statistics, or a value of
0, give ``unsure`` with no ratio.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

import attrs

from kernelindex_sdk.compare.explain import Difference, differences
from kernelindex_sdk.compare.grouping import PASS_ORDER, parameter_order
from kernelindex_sdk.compare.noise import Noise, beyond_noise, larger_relative_noise, noise_of
from kernelindex_sdk.compare.runs import ResolvedRun

SLOWER: Final = "slower"
FASTER: Final = "faster"
SAME: Final = "same"
UNSURE: Final = "unsure"
#: Every verdict, in the order reports list them (regressions first).
VERDICTS: Final = (SLOWER, UNSURE, FASTER, SAME)

LINEAGE: Final = "lineage"
EXACT: Final = "exact"
PAIR_BY: Final = (LINEAGE, EXACT)

#: What a pairing may differ in (``compare --across``): the environment's GPU.
GPU: Final = "gpu"
ACROSS: Final = (GPU,)

#: How every ratio of a pairing reads, in every report that shows one.
RATIO_DIRECTION: Final = "candidate / reference"

#: A change smaller than this (5 %) is ``same``: run-to-run differences of a few per
#: cent are common on a shared GPU; sglang's kernel gate uses ±5 % as well.
DEFAULT_THRESHOLD: Final = 0.05

#: Looks up a referenced record by digest and kind (None when not given).
Lookup = Callable[[str, str], "Mapping[str, Any] | None"]

#: What a run pairs by: its comparability key's parts (workload, protocol, hardware,
#: metric) and its implementation lineage, in one flat tuple (one object per run).
PairKey = tuple[str | None, ...]


@attrs.frozen
class Pair:
    """A reference run and a candidate run that measure the same thing, and the verdict."""

    reference: ResolvedRun
    candidate: ResolvedRun
    verdict: str
    #: ``candidate / reference`` of the primary statistic; None where there is none.
    ratio: float | None
    reason: str
    reference_noise: Noise
    candidate_noise: Noise
    #: The other runs of each side that qualified (older re-runs, other versions).
    reference_others: tuple[ResolvedRun, ...] = ()
    candidate_others: tuple[ResolvedRun, ...] = ()


@attrs.frozen
class Unpaired:
    """A run (the newest of its pair key on its side) with no counterpart."""

    run: ResolvedRun
    #: ``reference`` or ``candidate``.
    side: str
    others: tuple[ResolvedRun, ...] = ()
    #: A run of the other side that almost pairs, and what differs from it.
    near: ResolvedRun | None = None
    differences: tuple[Difference, ...] = ()

    @property
    def runs(self) -> int:
        return 1 + len(self.others)


@attrs.frozen
class Tally:
    """Counts per verdict and the geometric-mean ratio of a set of pairs."""

    counts: Mapping[str, int]
    #: Geometric mean of the pairs' ratios (pairs without a ratio left out); None if none.
    geomean: float | None
    #: How many ratios the geometric mean is over.
    ratios: int

    @property
    def pairs(self) -> int:
        return sum(self.counts.values())


@attrs.frozen
class BeforeAfter:
    """Every pair (regressions first, worst first), the unpaired runs, the tallies."""

    pairs: tuple[Pair, ...]
    unpaired_reference: tuple[Unpaired, ...]
    unpaired_candidate: tuple[Unpaired, ...]
    threshold: float
    pair_by: str
    overall: Tally
    #: ``(kernel, GPU)`` → its tally, in report order (the GPU as :func:`pair_gpu`).
    by_kernel_gpu: tuple[tuple[tuple[str, str], Tally], ...]
    #: What the pairs may differ in (``gpu``), or None: nothing beyond the lineage.
    across: str | None = None

    def count(self, verdicts: Iterable[str]) -> int:
        """How many pairs have one of these verdicts."""
        return sum(self.overall.counts.get(v, 0) for v in set(verdicts))


@attrs.frozen
class Outcome:
    """The exit status of a before/after gate and the words that say why."""

    status: int
    reason: str


def gate(
    result: BeforeAfter,
    fail_on: Iterable[str] = (SLOWER,),
    *,
    invalid: int = 0,
    unreadable: int = 0,
) -> Outcome:
    """0: no pair with a ``fail_on`` verdict, every input read and valid; 1: a pair with
    such a verdict, invalid items skipped, or no pair at all (nothing compared is not a
    pass: a gate whose runs stopped pairing, say on a new GPU, must not stay green);
    2: input that could not be read."""
    reasons = []
    wanted = set(fail_on)
    failing = [f"{result.overall.counts.get(v, 0)} {v}" for v in VERDICTS if v in wanted]
    failed = result.count(wanted)
    unpaired = sum(u.runs for u in (*result.unpaired_reference, *result.unpaired_candidate))
    if unreadable:
        reasons.append(f"{unreadable} unreadable input{'s' * (unreadable != 1)}")
    if failed:
        reasons.append(", ".join(f for f in failing if not f.startswith("0 ")))
    if not result.pairs:
        reasons.append(f"no run pairs ({unpaired} unpaired): nothing was compared")
    if invalid:
        reasons.append(f"{invalid} invalid item{'s' * (invalid != 1)} skipped")
    status = 2 if unreadable else 1 if reasons else 0
    return Outcome(status, "; ".join(reasons) if reasons else "no regression")


def lineage(run: ResolvedRun, pair_by: str = LINEAGE) -> tuple[str | None, ...]:
    """What a run's implementation pairs by (see the module docstring)."""
    implementation = run.implementation
    if pair_by == EXACT or implementation is None:
        return ("digest", run.implementation_digest)
    return (
        "lineage",
        implementation.provider,
        implementation.package,
        implementation.entry_point,
        implementation.backend,
    )


def before_after(
    reference: Iterable[ResolvedRun],
    candidate: Iterable[ResolvedRun],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    pair_by: str = LINEAGE,
    lookup: Lookup | None = None,
    across: str | None = None,
) -> BeforeAfter:
    """Pair the candidate runs with the reference runs and judge each pair.

    ``lookup`` finds referenced records by digest, so that near misses can be spelled
    out field by field (digests otherwise); ``across="gpu"`` pairs runs on different
    GPUs (the module's docstring). Never raises for any runs.
    """
    if pair_by not in PAIR_BY:
        raise ValueError(f"pair_by must be one of {', '.join(PAIR_BY)}, not {pair_by!r}")
    if across is not None and across not in ACROSS:
        raise ValueError(f"across must be one of {', '.join(ACROSS)} or None, not {across!r}")
    if not (math.isfinite(threshold) and threshold >= 0):
        raise ValueError(f"threshold must be a finite number >= 0, not {threshold!r}")
    find = lookup or _nothing
    before = _by_pair_key(reference, pair_by)
    after = _by_pair_key(candidate, pair_by)
    wanted = _projected(before, across)
    pairs, hit = [], set()
    for key, runs in after.items():
        found = wanted.get(_project(key, across))
        if found is not None:
            hit.add(_project(key, across))
            pairs.append(judge(found[0], runs[0], threshold, tuple(found[1:]), tuple(runs[1:])))
    pairs.sort(key=_pair_order)
    lonely_before = [runs for key, runs in wanted.items() if key not in hit]
    lonely_after = [runs for key, runs in after.items() if _project(key, across) not in wanted]
    per: dict[tuple[str, str], list[Pair]] = {}
    for pair in pairs:
        place = (pair.candidate.kernel or pair.candidate.kernel_title, pair_gpu(pair))
        per.setdefault(place, []).append(pair)
    return BeforeAfter(
        tuple(pairs),
        _unpaired(lonely_before, after, "reference", (pair_by, across), find),
        _unpaired(lonely_after, before, "candidate", (pair_by, across), find),
        threshold,
        pair_by,
        tally(pairs),
        tuple((place, tally(per[place])) for place in sorted(per)),
        across,
    )


def pair_gpu(pair: Pair) -> str:
    """The GPU a pair ran on, or ``reference GPU → candidate GPU`` where they differ."""
    ref, cand = pair.reference.gpu, pair.candidate.gpu
    return cand if ref == cand else f"{ref} → {cand}"


def _project(key: PairKey, across: str | None) -> PairKey:
    """What a pair key must match on the other side: all of it, or with ``across``
    all but the hardware (its third part)."""
    return key if across is None else key[:2] + key[3:]


def _projected(
    runs: dict[PairKey, list[ResolvedRun]], across: str | None
) -> dict[PairKey, list[ResolvedRun]]:
    """The reference's runs by projected key (runs of several GPUs that fall on one key
    merged, newest first)."""
    if across is None:
        return runs
    out: dict[PairKey, list[ResolvedRun]] = {}
    for key, found in runs.items():
        out.setdefault(_project(key, across), []).extend(found)
    for group in out.values():
        group.sort(key=lambda r: (r.observed_key, r.digest), reverse=True)
    return out


def judge(
    reference: ResolvedRun,
    candidate: ResolvedRun,
    threshold: float = DEFAULT_THRESHOLD,
    reference_others: tuple[ResolvedRun, ...] = (),
    candidate_others: tuple[ResolvedRun, ...] = (),
) -> Pair:
    """The verdict, ratio and reason for one pair (the module docstring says how)."""
    noise_ref, noise_cand = noise_of(reference), noise_of(candidate)
    verdict, ratio, reason = _verdict(reference, candidate, noise_ref, noise_cand, threshold)
    return Pair(
        reference,
        candidate,
        verdict,
        ratio,
        reason,
        noise_ref,
        noise_cand,
        reference_others,
        candidate_others,
    )


def _verdict(
    ref: ResolvedRun, cand: ResolvedRun, noise_ref: Noise, noise_cand: Noise, threshold: float
) -> tuple[str, float | None, str]:
    if not (ref.passed and cand.passed):
        if ref.passed:
            return SLOWER, None, f"candidate {_failure(cand)}; the reference passed"
        if cand.passed:
            return FASTER, None, f"reference {_failure(ref)}; the candidate passed"
        return SAME, None, f"neither passed (reference {_failure(ref)}; candidate {_failure(cand)})"
    a, b = ref.value, cand.value
    assert a is not None and b is not None  # passed runs carry a value
    if ref.statistic != cand.statistic:
        return UNSURE, None, f"different statistics ({ref.statistic} vs {cand.statistic}): no ratio"
    if a == b:
        return SAME, (1.0 if a else None), "no change"
    if a == 0 or b == 0:
        return UNSURE, None, "one value is 0: no ratio"
    ratio = b / a
    change = _change(ratio)
    small, large = min(a, b), max(a, b)
    if large < (1 + threshold) * small:
        return SAME, ratio, f"{change}: below the {_percent(threshold)} threshold"
    direction = SLOWER if b > a else FASTER
    if not (noise_ref.known or noise_cand.known):
        why = f"reference {noise_ref.why}, candidate {noise_cand.why}"
        return direction, ratio, f"{change}; no noise recorded ({why}): by the threshold alone"
    beyond = beyond_noise(a, noise_ref, b, noise_cand)
    if beyond is not None:
        return direction, ratio, f"{change}; {beyond}"
    spread = larger_relative_noise(a, noise_ref, b, noise_cand)
    within = f"; relative noise ±{spread * 100:.1f} %" if spread is not None else ""
    return UNSURE, ratio, f"{change}, within the noise (the intervals overlap{within})"


def _failure(run: ResolvedRun) -> str:
    return f"{run.status}: {run.reason}" if run.reason else run.status


def _change(ratio: float) -> str:
    """``+23.4 %``: the signed change of the candidate over the reference."""
    return f"{(ratio - 1) * 100:+.1f} %"


def _percent(fraction: float) -> str:
    return f"{fraction * 100:g} %"


def tally(pairs: Sequence[Pair]) -> Tally:
    """Counts per verdict (every verdict present, 0 or more) and the geometric mean."""
    counts = dict.fromkeys(VERDICTS, 0)
    logs = []
    for pair in pairs:
        counts[pair.verdict] += 1
        if pair.ratio is not None and pair.ratio > 0:
            logs.append(math.log(pair.ratio))
    geomean = math.exp(math.fsum(logs) / len(logs)) if logs else None
    return Tally(counts, geomean, len(logs))


def _by_pair_key(runs: Iterable[ResolvedRun], pair_by: str) -> dict[PairKey, list[ResolvedRun]]:
    """Runs by pair key, newest first (ties by digest, so input order never matters)."""
    found: dict[PairKey, list[ResolvedRun]] = {}
    for run in runs:
        key = (
            run.workload_digest,
            run.protocol_digest,
            run.hardware,
            run.metric,
            *lineage(run, pair_by),
        )
        found.setdefault(key, []).append(run)
    for group in found.values():
        if len(group) > 1:
            group.sort(key=lambda r: (r.observed_key, r.digest), reverse=True)
    return found


def _unpaired(
    lonely: list[list[ResolvedRun]],
    other: dict[PairKey, list[ResolvedRun]],
    name: str,
    pairing: tuple[str, str | None],
    lookup: Lookup,
) -> tuple[Unpaired, ...]:
    """The lonely runs of one side, each with the other side's nearest miss; ``pairing``
    is ``(pair_by, across)``."""
    if not lonely:
        return ()
    pair_by, across = pairing
    near = _NearIndex(other, pair_by, across)
    out = []
    for runs in lonely:
        run = runs[0]
        match = near.find(run)
        found: tuple[Difference, ...] = ()
        if match is not None:
            found = tuple(differences(run, match, lookup))
            if lineage(run, pair_by) != lineage(match, pair_by):
                detail = f"{run.implementation_label} vs {match.implementation_label}"
                found += (Difference("implementation", detail),)
        out.append(Unpaired(run, name, tuple(runs[1:]), match, found))
    out.sort(key=lambda u: _run_order(u.run))
    return tuple(out)


class _NearIndex:
    """The other side's newest runs, indexed by what a near miss shares with a run."""

    def __init__(
        self, other: dict[PairKey, list[ResolvedRun]], pair_by: str, across: str | None = None
    ) -> None:
        self.pair_by, self.across = pair_by, across
        self.indexes: list[dict[tuple[Any, ...], ResolvedRun]] = [{}, {}, {}, {}]
        for runs in other.values():
            run = runs[0]
            for index, key in zip(self.indexes, self._keys(run), strict=True):
                best = index.get(key)
                if best is None or _newer(run, best):
                    index[key] = run

    def _keys(self, run: ResolvedRun) -> tuple[tuple[Any, ...], ...]:
        line = lineage(run, self.pair_by)
        return (
            # Same workload and lineage: another GPU, protocol or metric.
            (run.workload_digest, line),
            # Same kernel, pass, protocol, GPU (any, across GPUs), metric and lineage:
            # another shape.
            (run.kernel, run.pass_, run.protocol_digest, self._gpu(run), run.metric, line),
            # Same key, another implementation of the same lineage (under ``exact``).
            (run.key, lineage(run, LINEAGE)),
            # Same key, another implementation (eager against torch.compile).
            (run.key,),
        )

    def _gpu(self, run: ResolvedRun) -> str | None:
        return None if self.across else run.hardware

    def find(self, run: ResolvedRun) -> ResolvedRun | None:
        keys = self._keys(run)
        for position, (index, key) in enumerate(zip(self.indexes, keys, strict=True)):
            if position == 1 and run.kernel is None:
                continue  # no Workload record: "same kernel" says nothing
            match = index.get(key)
            if match is not None:
                return match
        return None


def _newer(a: ResolvedRun, b: ResolvedRun) -> bool:
    return (a.observed_key, a.digest) > (b.observed_key, b.digest)


def _nothing(digest: str, kind: str) -> Mapping[str, Any] | None:
    return None


#: Verdict → rank in a report (regressions first).
_RANK: Final = {verdict: rank for rank, verdict in enumerate(VERDICTS)}


def _pair_order(pair: Pair) -> tuple[object, ...]:
    """Regressions first, worst first; then unsure (largest change first), faster
    (largest gain first), same. A failure has no ratio and counts as the worst."""
    ratio = pair.ratio
    if ratio is None:
        severity = -math.inf
    elif pair.verdict == FASTER:
        severity = ratio
    else:
        severity = -max(ratio, 1 / ratio) if pair.verdict == UNSURE else -ratio
    if pair.verdict == SAME:
        severity = 0.0
    return (_RANK[pair.verdict], severity, _run_order(pair.candidate), pair.reference.digest)


def _run_order(run: ResolvedRun) -> tuple[object, ...]:
    params = parameter_order(run)
    return (
        run.kernel or "~",
        PASS_ORDER.get(run.pass_ or "", len(PASS_ORDER)),
        run.metric,
        run.gpu,
        run.implementation_label,
        params,
        run.workload_digest,
        run.digest,
    )
