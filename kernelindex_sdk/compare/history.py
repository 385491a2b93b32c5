"""History: how one measurement moved over implementation versions, and where it changed.

A :class:`Series` is every passed run of one (kernel, pass, workload, GPU,
implementation lineage, metric) — and one protocol, since runs timed by two harnesses
never compare — as :class:`Point` s ordered by implementation version (natural order:
``0.10.0`` after ``0.9.0``), then by ``observedAt``'s day (UTC; undated runs first). A
point is the runs of one version on one day, usually one run (re-runs of a day are one
measurement, as asv takes the repeats of one commit as one): the median run's primary
statistic (itself the median, for Liger and most harnesses) and the median of the
spreads the runs record (:mod:`~kernelindex_sdk.compare.noise`); its ``observedAt``
and digest are the newest run's. The lineage is before/after's
(:func:`~kernelindex_sdk.compare.beforeafter.lineage`): the provider, package name,
entry point and backend, so ``liger 0.5.10`` and ``liger 0.6.0`` are one series.

Change points
-------------
Found by :func:`detect`, our own code: exact optimal partitioning with PELT's pruning
(Killick, Fearnhead and Eckley, "Optimal detection of changepoints with a linear
computational cost", JASA 107(500), 2012) of the logarithms of the values into
segments of constant level, under a Gaussian cost whose variance is each point's own
noise, and a penalty per change (:data:`PENALTY_PER_LOG_N` × ln n +
:data:`PENALTY_BASE`, a BIC-like penalty made stricter so that a flat series almost
never shows a change). A series longer than :data:`EXACT_POINTS` is segmented by
binary segmentation under the same cost and penalty instead (Scott and Knott,
Biometrics 30(3), 1974; ``Binseg`` in ``ruptures``): near-linear where PELT, on a flat
series, is quadratic.

Each point's noise is the larger of

* the spread its record carries, as a standard deviation of the logarithm: a p20–p80
  interval spans ±0.8416 σ of a normal distribution, mean ± stddev spans ±1 σ; and
* the scatter of the series itself, where it has five points or more: the median
  absolute difference of successive points ÷ (0.6745 √2), a robust estimate that a
  few steps do not move (asv's step detection estimates its noise from the data
  the same way). Runs of one program differ by more than the samples of one run
  spread, and this keeps a series that scatters more than it records from showing
  changes.

Where neither is known, :data:`DEFAULT_NOISE` (2 %) stands in; no σ is below
:data:`NOISE_FLOOR`. A change smaller than the threshold (:data:`DEFAULT_THRESHOLD`,
5 % as ``compare --against``) is merged into its neighbour level.

Each :class:`Change` says where the new level starts (the point's version and
``observedAt``), its direction and its ratio: the new level ÷ the old one (candidate ÷
reference, geometric means of the segments), so above 1 is ``slower`` (or more
memory; both metrics are better lower) and below 1 ``faster``.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Iterable, Mapping, Sequence
from statistics import median_low
from typing import Any, Final, NamedTuple

import attrs

from kernelindex_sdk.base.metrics import BASE_UNITS
from kernelindex_sdk.compare.beforeafter import DEFAULT_THRESHOLD, FASTER, SLOWER, lineage
from kernelindex_sdk.compare.grouping import PASS_ORDER, natural_order
from kernelindex_sdk.compare.noise import NONE, STDDEV, noise_of
from kernelindex_sdk.compare.runs import ResolvedRun

__all__ = [
    "DEFAULT_NOISE",
    "DEFAULT_THRESHOLD",
    "FASTER",
    "KEY_FIELDS",
    "METHOD",
    "SLOWER",
    "Change",
    "History",
    "Point",
    "Series",
    "detect",
    "history",
    "make_series",
    "point_of",
    "series_key",
    "series_order",
]

#: The change-point method, as reports name it.
METHOD: Final = "PELT (Killick et al. 2012), Gaussian cost on log values, recorded noise"
#: The penalty per change: ``PENALTY_PER_LOG_N * ln(n) + PENALTY_BASE`` (chi-square units).
PENALTY_PER_LOG_N: Final = 3.0
PENALTY_BASE: Final = 12.0
#: Relative noise assumed where a series neither records nor shows any.
DEFAULT_NOISE: Final = 0.02
#: No point's relative noise is taken as smaller than this (timers tick; quantiles collapse).
NOISE_FLOOR: Final = 0.001
#: Points a series needs before its own scatter counts as noise.
SCATTER_POINTS: Final = 5
#: Series up to this many points are segmented exactly (PELT, quadratic on a flat
#: series); longer ones by binary segmentation (n log n).
EXACT_POINTS: Final = 128
#: What a series' key holds, in the order reports show it.
KEY_FIELDS: Final = ("kernel", "pass", "workload", "gpu", "implementation", "metric", "protocol")

#: Seconds in a day: a point is one version's runs of one UTC day.
DAY_S: Final = 86_400

#: Half the width of p20–p80 in standard deviations of a normal distribution.
_P20_P80_Z: Final = 0.8416
#: The median of ``|N(0, 2)|``: turns a median successive difference into a σ.
_MEDIAN_DIFF_Z: Final = 0.6745 * math.sqrt(2.0)


class Point(NamedTuple):
    """The runs of one version on one day (UTC) of a series: the median run's primary
    statistic and the spread the runs record (one run, usually: its own)."""

    #: The implementation's version (None where the record names none).
    version: str | None
    observed_at: str
    #: The primary statistic (the median, usually) of the median run, in base units.
    value: float
    #: The noise interval in base units (None where no run records a spread).
    low: float | None
    high: float | None
    #: The noise kind (:mod:`~kernelindex_sdk.compare.noise`): ``quantiles``, ``stddev``, ...
    noise: str
    #: The newest run's digest.
    digest: str
    statistic: str | None = None
    #: How many runs the point is (re-runs of one version on one day).
    runs: int = 1


@attrs.frozen
class Change:
    """Where a series' level changed: the first point of the new level."""

    #: Index of the first point of the new level in :attr:`Series.points`.
    index: int
    version: str | None
    observed_at: str
    #: ``slower`` (the ratio above 1) or ``faster``.
    direction: str
    #: New level ÷ old level (candidate ÷ reference).
    ratio: float
    #: The levels before and after, in base units (geometric means of the segments).
    before: float
    after: float

    def to_json(self) -> dict[str, Any]:
        at = {"index": self.index, "version": self.version, "observedAt": self.observed_at}
        return {
            "at": at,
            "direction": self.direction,
            "ratio": self.ratio,
            "before": self.before,
            "after": self.after,
        }


@attrs.frozen
class Series:
    """One measurement over versions: its key, its points in order, and its changes."""

    #: :data:`KEY_FIELDS` → text (``workload``: ``B=8 T=2048 V=4096, fp32``).
    key: Mapping[str, str]
    points: tuple[Point, ...]
    changes: tuple[Change, ...]

    @property
    def unit(self) -> str:
        return BASE_UNITS.get(self.key.get("metric", ""), "")

    @property
    def newest_change(self) -> Change | None:
        """The last change, where it starts at the newest version (or the newest point):
        what a gate fails on when it is ``slower``."""
        if not self.changes or not self.points:
            return None
        last = self.changes[-1]
        newest = self.points[-1]
        if last.index == len(self.points) - 1:
            return last
        tail = self.points[last.index :]
        same = newest.version is not None and all(p.version == newest.version for p in tail)
        before = self.points[last.index - 1].version if last.index > 0 else None
        return last if same and before != newest.version else None

    def to_json(self) -> dict[str, Any]:
        return {
            "key": dict(self.key),
            "unit": self.unit,
            "points": [_point_json(point) for point in self.points],
            "changes": [change.to_json() for change in self.changes],
        }


@attrs.frozen
class History:
    """Every series of a selection, in report order."""

    series: tuple[Series, ...]
    method: str = METHOD
    threshold: float = DEFAULT_THRESHOLD

    def worse_now(self, direction: str = SLOWER) -> tuple[Series, ...]:
        """The series whose newest change (:attr:`Series.newest_change`) goes ``direction``."""
        found = ((s, s.newest_change) for s in self.series)
        return tuple(s for s, change in found if change and change.direction == direction)

    def to_json(self) -> dict[str, Any]:
        """``{"series": [{"key", "unit", "points", "changes"}], "method", "threshold"}``."""
        return {
            "series": [series.to_json() for series in self.series],
            "method": self.method,
            "threshold": self.threshold,
        }


def _point_json(point: Point) -> dict[str, Any]:
    return {
        "version": point.version,
        "observedAt": point.observed_at,
        "value": point.value,
        "low": point.low,
        "high": point.high,
        "noise": point.noise,
        "statistic": point.statistic,
        "digest": point.digest,
        "runs": point.runs,
    }


def history(
    runs: Iterable[ResolvedRun],
    *,
    threshold: float = DEFAULT_THRESHOLD,
) -> History:
    """Every passed run of ``runs`` as series (see the module docstring), each with its
    change points. Runs that did not pass, or have no positive value, are left out."""
    Day = tuple[str | None, int | None]
    grouped: dict[tuple[object, ...], tuple[dict[str, str], dict[Day, list[ResolvedRun]]]] = {}
    for run in runs:
        if not run.passed or run.value is None or run.value <= 0:
            continue
        place = (run.workload_digest, run.protocol_digest, run.hardware, run.metric, lineage(run))
        entry = grouped.get(place)
        if entry is None:
            entry = grouped[place] = (series_key(run), {})
        version = run.implementation.version if run.implementation else None
        day = int(run.observed_key.timestamp() // DAY_S) if run.dated else None
        entry[1].setdefault((version, day), []).append(run)
    series = []
    for key, days in grouped.values():
        ordered = sorted(days.items(), key=_point_order)
        points = [point_of(version, members) for (version, _), members in ordered]
        series.append(make_series(key, points, threshold=threshold))
    return History(tuple(sorted(series, key=series_order)), threshold=threshold)


def _point_order(item: tuple[tuple[str | None, int | None], object]) -> tuple[object, ...]:
    (version, day), _ = item
    return (version is not None, natural_order(version or ""), day is not None, day or 0)


def point_of(version: str | None, runs: Sequence[ResolvedRun]) -> Point:
    """The point of one version's passed runs of one day: the median run's value (the
    lower of the two middle ones), the median of the noise intervals they record, and
    the newest run's ``observedAt``, digest and noise kind (the newest that records one)."""
    newest_first = sorted(runs, key=_RECENCY, reverse=True)
    newest = newest_first[0]
    noises = [noise for noise in map(noise_of, newest_first) if noise.known]
    lows = [n.low for n in noises if n.low is not None]
    highs = [n.high for n in noises if n.high is not None]
    return Point(
        version,
        newest.observed_at,
        median_low([run.value or 0.0 for run in runs]),
        median_low(lows) if lows else None,
        median_low(highs) if highs else None,
        noises[0].kind if noises else NONE,
        newest.digest,
        newest.statistic,
        len(runs),
    )


_RECENCY: Final = operator.attrgetter("recency")


def series_key(run: ResolvedRun) -> dict[str, str]:
    """The key of the series a run belongs to, as reports show it (:data:`KEY_FIELDS`)."""
    implementation = run.implementation
    if implementation is None:
        label = run.implementation_label
    else:
        words = (implementation.provider, implementation.entry_point, implementation.backend)
        label = " ".join(w for w in words if w)
    return {
        "kernel": run.kernel or "",
        "pass": run.pass_ or "",
        "workload": run.workload.describe() if run.workload else run.workload_digest,
        "gpu": run.gpu,
        "implementation": label,
        "metric": run.metric,
        "protocol": run.protocol_name or run.protocol_digest,
    }


def series_order(series: Series) -> tuple[object, ...]:
    """Kernels, then passes as people read them, metric, GPU, workload, implementation."""
    key = series.key
    return (
        key.get("kernel", ""),
        PASS_ORDER.get(key.get("pass", ""), len(PASS_ORDER)),
        key.get("metric", ""),
        key.get("gpu", ""),
        natural_order(key.get("workload", "")),
        key.get("implementation", ""),
        key.get("protocol", ""),
    )


def make_series(
    key: Mapping[str, str], points: Sequence[Point], *, threshold: float = DEFAULT_THRESHOLD
) -> Series:
    """A series of points already in order, with its change points found."""
    ordered = tuple(points)
    return Series(dict(key), ordered, detect(ordered, threshold=threshold))


def detect(points: Sequence[Point], *, threshold: float = DEFAULT_THRESHOLD) -> tuple[Change, ...]:
    """The change points of a series (the module docstring says how)."""
    if len(points) < 2:
        return ()
    values = [math.log(p.value) for p in points]
    sigmas = _sigmas(points, values)
    centre = sorted(values)[len(values) // 2]
    weights = [1.0 / (s * s) for s in sigmas]
    prefix = _prefix([v - centre for v in values], weights)
    penalty = PENALTY_PER_LOG_N * math.log(len(points)) + PENALTY_BASE
    n = len(points)
    found = _pelt(prefix, n, penalty) if n <= EXACT_POINTS else _binary(prefix, n, penalty)
    bounds = _merged(found, prefix, math.log1p(threshold))
    changes = []
    for before, start, after in zip(bounds, bounds[1:], bounds[2:], strict=False):
        old = _level(prefix, before, start)
        new = _level(prefix, start, after)
        point = points[start]
        ratio = math.exp(new - old)
        changes.append(
            Change(
                start,
                point.version,
                point.observed_at,
                SLOWER if ratio > 1 else FASTER,
                ratio,
                math.exp(old + centre),
                math.exp(new + centre),
            )
        )
    return tuple(changes)


def _sigmas(points: Sequence[Point], logs: Sequence[float]) -> list[float]:
    """Each point's noise as a σ of its logarithm (the module docstring says how)."""
    scatter = 0.0
    if len(logs) >= SCATTER_POINTS:
        steps = sorted(abs(b - a) for a, b in itertools.pairwise(logs))
        middle = len(steps) // 2
        median = steps[middle] if len(steps) % 2 else (steps[middle - 1] + steps[middle]) / 2
        scatter = median / _MEDIAN_DIFF_Z
    recorded = [_recorded(p) for p in points]
    known = [r for r in recorded if r is not None]
    fallback = DEFAULT_NOISE if not known and not scatter else 0.0
    return [max(r or 0.0, scatter, fallback, NOISE_FLOOR) for r in recorded]


def _recorded(point: Point) -> float | None:
    """The σ of a point's logarithm its record's spread says, or None."""
    if point.noise == NONE or point.low is None or point.high is None:
        return None
    if point.noise == STDDEV:
        return (point.high - point.value) / point.value
    if point.low <= 0 or point.high <= point.low:
        return None
    return math.log(point.high / point.low) / (2 * _P20_P80_Z)


_Prefix = tuple[list[float], list[float], list[float]]


def _prefix(values: Sequence[float], weights: Sequence[float]) -> _Prefix:
    """Running sums of w, w·y and w·y² (index k: over the first k points)."""
    s0, s1, s2 = [0.0], [0.0], [0.0]
    a = b = c = 0.0
    for y, w in zip(values, weights, strict=True):
        a += w
        b += w * y
        c += w * y * y
        s0.append(a)
        s1.append(b)
        s2.append(c)
    return s0, s1, s2


def _cost(prefix: _Prefix, start: int, end: int) -> float:
    """Weighted squared deviation of points ``start..end-1`` from their weighted mean."""
    s0, s1, s2 = prefix
    w = s0[end] - s0[start]
    wy = s1[end] - s1[start]
    return max(s2[end] - s2[start] - wy * wy / w, 0.0)


def _level(prefix: _Prefix, start: int, end: int) -> float:
    s0, s1, _ = prefix
    return (s1[end] - s1[start]) / (s0[end] - s0[start])


def _pelt(prefix: _Prefix, n: int, penalty: float) -> list[int]:
    """Segment bounds ``[0, …, n]`` minimising total cost + penalty per change (PELT)."""
    best = [-penalty] + [0.0] * n
    last = [0] * (n + 1)
    candidates = [0]
    for end in range(1, n + 1):
        totals = [best[s] + _cost(prefix, s, end) for s in candidates]
        chosen = min(range(len(totals)), key=totals.__getitem__)
        best[end] = totals[chosen] + penalty
        last[end] = candidates[chosen]
        # PELT: a start that cannot beat the best now never will (the cost is additive).
        candidates = [s for s, t in zip(candidates, totals, strict=True) if t <= best[end]]
        candidates.append(end)
    bounds = [n]
    while bounds[-1] > 0:
        bounds.append(last[bounds[-1]])
    return bounds[::-1]


def _binary(prefix: _Prefix, n: int, penalty: float) -> list[int]:
    """Segment bounds by binary segmentation: split where the cost drops most while the
    drop exceeds the penalty, then each part likewise (Scott and Knott 1974)."""
    s0, s1, _ = prefix
    bounds = {0, n}
    parts = [(0, n)]
    while parts:
        start, end = parts.pop()
        if end - start < 2:
            continue
        w, wy = s0[end] - s0[start], s1[end] - s1[start]
        gain, at = -1.0, start
        for split in range(start + 1, end):
            left_w, left_wy = s0[split] - s0[start], s1[split] - s1[start]
            right_w, right_wy = w - left_w, wy - left_wy
            # The whole's cost less the two parts' (the w·y² terms cancel).
            drop = left_wy * left_wy / left_w + right_wy * right_wy / right_w - wy * wy / w
            if drop > gain:
                gain, at = drop, split
        if gain > penalty:
            bounds.add(at)
            parts += [(start, at), (at, end)]
    return sorted(bounds)


def _merged(bounds: list[int], prefix: _Prefix, smallest: float) -> list[int]:
    """``bounds`` without the changes below the threshold, smallest merged first."""
    bounds = list(bounds)
    while len(bounds) > 2:
        gaps = [
            abs(_level(prefix, b, c) - _level(prefix, a, b))
            for a, b, c in zip(bounds, bounds[1:], bounds[2:], strict=False)
        ]
        smallest_at = min(range(len(gaps)), key=gaps.__getitem__)
        if gaps[smallest_at] >= smallest:
            break
        del bounds[smallest_at + 1]
    return bounds
