"""A run's noise: the interval its own record says its value could lie in.

This is the one definition of a run's noise; before/after verdicts, the within-noise
marks of plain ``compare`` and summaries all read it from here.

A benchmark repeats a measurement and summarises the samples; how much the samples
spread says how far apart two results must be before the difference means anything.
Records carry that spread in different forms, so :func:`noise_of` reads the best one a
run has, in this order, and says which (:attr:`Noise.kind`):

``samples``
    Raw samples: the p20–p80 of the samples themselves (:func:`of_samples`). The
    v1alpha1 schema has no field for raw samples, so no record yields this kind yet;
    a source that keeps them can hand them to :func:`of_samples`.
``quantiles``
    The run's p20 and p80 (from its summary or its measurements), Liger's form. The
    middle 60 % of the samples lie in it.
``stddev``
    The mean ± one standard deviation of the samples, with the sample count where
    recorded: nvbench and KernelBench publish a mean, a standard deviation and a
    count. For normally distributed samples this interval (about the middle 68 %) is
    a little wider than p20–p80 (about ±0.84 σ, the middle 60 %): deliberately on the
    cautious side. It is the spread of the samples, not the standard error of the
    mean: repeated runs of one program differ by far more than the standard error
    (clocks, temperature, other work on the machine), and an interval that shrinks
    with the sample count would call every such difference real.
``none``
    No spread is known: the quantiles collapsed (p20 = median = p80, or the run is
    flagged ``collapsed_quantiles``: too few samples to tell them apart), one sample,
    a standard deviation of 0, or no spread recorded at all. :attr:`Noise.why` says
    which. Such a run's interval is its value alone (:meth:`Noise.interval`).

Beyond the noise
----------------
Two values differ beyond their noise (:func:`beyond_noise`) when either

* their noise intervals do not overlap, or
* the change — the larger value over the smaller, less 1: the measure the threshold
  uses — is larger than the recorded **relative noise** (:func:`relative_noise`): the
  larger of the two runs' relative spreads (σ / mean for ``stddev``, nvbench's
  ``stdev/relative``; the farther interval bound's distance over the value
  otherwise).

The second is nvbench's own compare rule (``nvbench_compare.py``: a state is FAST or
SLOW when ``|Δ| / reference`` exceeds the relative noise), with the *larger* of the two
noises where nvbench takes the smaller: a run that recorded a wide spread keeps a
change within it undecided, even when the other run was steady. Both conditions read
the two sides alike, so swapping them mirrors the answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import attrs

from kernelindex_sdk.compare.runs import ResolvedRun

SAMPLES: Final = "samples"
QUANTILES: Final = "quantiles"
STDDEV: Final = "stddev"
NONE: Final = "none"

#: Every kind, best first (the order :func:`noise_of` tries them).
KINDS: Final = (SAMPLES, QUANTILES, STDDEV, NONE)

#: The quality flag importers set on runs whose p20 = median = p80.
COLLAPSED_QUANTILES: Final = "collapsed_quantiles"


@attrs.frozen
class Noise:
    """The interval a run's value could lie in, and where it comes from."""

    kind: str
    #: Interval bounds in base units (ns, bytes); None for kind ``none``.
    low: float | None = None
    high: float | None = None
    #: How many samples the interval is over, where recorded.
    samples: int | None = None
    #: For kind ``none``: why there is no interval (``collapsed quantiles``, ``one sample``).
    why: str | None = None

    @property
    def known(self) -> bool:
        """Whether the record says anything about its spread."""
        return self.kind != NONE

    @property
    def label(self) -> str:
        """How the interval was found, for a report: ``p20–p80``, ``mean ± stddev (n=10)``."""
        count = f" (n={self.samples})" if self.samples is not None else ""
        if self.kind == SAMPLES:
            return f"p20–p80 of {self.samples} samples"
        if self.kind == QUANTILES:
            return "p20–p80"
        if self.kind == STDDEV:
            return f"mean ± stddev{count}"
        return f"no noise ({self.why})" if self.why else "no noise"

    def interval(self, value: float) -> tuple[float, float]:
        """``(low, high)``; a run without noise is the point ``(value, value)``."""
        if self.low is None or self.high is None:
            return (value, value)
        return (self.low, self.high)


def noise_of(run: ResolvedRun) -> Noise:
    """The noise a run's record carries (see the module's docstring for the order)."""
    if not run.passed or run.value is None:
        return Noise(NONE, why="no result")
    if run.samples == 1:
        return Noise(NONE, samples=1, why="one sample")
    collapsed = COLLAPSED_QUANTILES in run.flags
    if run.p20 is not None and run.p80 is not None:
        if collapsed or run.p20 >= run.p80:
            return Noise(NONE, samples=run.samples, why="collapsed quantiles")
        return Noise(QUANTILES, run.p20, run.p80, run.samples)
    if collapsed:
        return Noise(NONE, samples=run.samples, why="collapsed quantiles")
    if run.stddev is not None:
        if run.stddev <= 0:
            return Noise(NONE, samples=run.samples, why="stddev 0")
        low = max(run.value - run.stddev, 0.0)
        return Noise(STDDEV, low, run.value + run.stddev, run.samples)
    return Noise(NONE, samples=run.samples, why="no spread recorded")


def of_samples(samples: Sequence[float]) -> Noise:
    """The p20–p80 of raw samples (linear interpolation between order statistics)."""
    ordered = sorted(samples)
    if len(ordered) < 2 or ordered[0] == ordered[-1]:
        why = "one sample" if len(ordered) < 2 else "all samples equal"
        return Noise(NONE, samples=len(ordered) or None, why=why)
    return Noise(SAMPLES, _quantile(ordered, 0.2), _quantile(ordered, 0.8), samples=len(ordered))


def _quantile(ordered: Sequence[float], q: float) -> float:
    position = q * (len(ordered) - 1)
    below = int(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def relative_noise(noise: Noise, value: float) -> float | None:
    """How far, relative to ``value``, the interval reaches from it: σ / mean for
    ``stddev``, the farther bound's distance over the value otherwise; None without
    noise or with a value of 0 or less."""
    if noise.low is None or noise.high is None or value <= 0:
        return None
    return max(value - noise.low, noise.high - value) / value


def beyond_noise(a: float, noise_a: Noise, b: float, noise_b: Noise) -> str | None:
    """Why ``a`` and ``b`` differ beyond their noise (the module's docstring gives the
    rule), in words for a report; None where the change is within it, or where
    neither side records any noise (nothing to judge by)."""
    low_a, high_a = noise_a.interval(a)
    low_b, high_b = noise_b.interval(b)
    if not (noise_a.known or noise_b.known) or a <= 0 or b <= 0:
        return None
    if high_a < low_b or high_b < low_a:
        return "the noise intervals do not overlap"
    spread = larger_relative_noise(a, noise_a, b, noise_b)
    if spread is not None and max(a, b) / min(a, b) - 1 > spread:
        return f"beyond the recorded relative noise (±{spread * 100:.1f} %)"
    return None


def larger_relative_noise(a: float, noise_a: Noise, b: float, noise_b: Noise) -> float | None:
    """The larger of the two sides' :func:`relative_noise` (None where neither has one)."""
    spreads = [s for s in (relative_noise(noise_a, a), relative_noise(noise_b, b)) if s]
    return max(spreads) if spreads else None


def overlap(a: ResolvedRun, b: ResolvedRun) -> bool | None:
    """Whether two passed runs' noise intervals overlap; None when neither has noise
    (two points tell nothing about noise) or either has no value."""
    if a.value is None or b.value is None or not (a.passed and b.passed):
        return None
    noise_a, noise_b = noise_of(a), noise_of(b)
    if not (noise_a.known or noise_b.known):
        return None
    low_a, high_a = noise_a.interval(a.value)
    low_b, high_b = noise_b.interval(b.value)
    return low_a <= high_b and low_b <= high_a


def within_noise(a: ResolvedRun, b: ResolvedRun) -> bool | None:
    """Whether two passed runs' values are within their noise (not
    :func:`beyond_noise`); None when neither has noise, or either has no value."""
    if a.value is None or b.value is None or not (a.passed and b.passed):
        return None
    noise_a, noise_b = noise_of(a), noise_of(b)
    if not (noise_a.known or noise_b.known):
        return None
    return beyond_noise(a.value, noise_a, b.value, noise_b) is None
