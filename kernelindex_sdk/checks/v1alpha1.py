"""Rules of kernelindex.dev/v1alpha1 that the schemas cannot express.

- Statistics are ordered: min ≤ p5 ≤ … ≤ p20 ≤ median ≤ p80 ≤ … ≤ max, across the
  result summary and the measurements (converted to one unit first).
- Units fit the metric (latency in time units, peak memory in byte units), and the
  measurements measure what the run's result is (a timing run carries latencies).
- The primary statistic is present in the result summary.
- No statistic is given twice: not twice among the measurements, nor as a measurement
  repeating one of the result's summary (two medians of one run would both pass the
  order check, and readers would pick either).
- ``observedAt`` is not in the future (a little clock skew is forgiven).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from datetime import date, datetime, timedelta, timezone
from itertools import pairwise
from time import time
from typing import Any

from kernelindex_sdk.base.native import native_allowed
from kernelindex_sdk.base.pointers import escape_token
from kernelindex_sdk.base.recordformat import parse_timestamp
from kernelindex_sdk.errors import Problem

#: Bundle member → (kind it must be, the run spec field that references it).
REFERENCES: Mapping[str, tuple[str, str]] = {
    "protocol": ("BenchmarkProtocol", "protocolDigest"),
    "workload": ("Workload", "workloadDigest"),
    "environment": ("ExecutionEnvironment", "environmentDigest"),
    "implementation": ("Implementation", "implementationDigest"),
}

#: Where a run keeps its result: (spec field, its summary's key, the metric it is of).
RESULTS: tuple[tuple[str, str, str], ...] = (
    ("timing", "latencyNs", "latency"),
    ("memory", "peakBytes", "peak_memory"),
)

#: Unit → (metric, factor to the metric's base unit).
UNITS: Mapping[str, tuple[str, int]] = {
    "ns": ("latency", 1),
    "us": ("latency", 1_000),
    "ms": ("latency", 1_000_000),
    "s": ("latency", 1_000_000_000),
    "bytes": ("peak_memory", 1),
    "KiB": ("peak_memory", 1 << 10),
    "MiB": ("peak_memory", 1 << 20),
    "GiB": ("peak_memory", 1 << 30),
}

#: Statistics in the order their values must not decrease.
ORDER: tuple[str, ...] = (
    "min", "p5", "p10", "p20", "p25", "median", "p75", "p80", "p90", "p95", "p99", "max",
)  # fmt: skip
_RANK = {name: i for i, name in enumerate(ORDER)}

#: Metric → {unit of it: factor to the metric's base unit} (UNITS, by metric).
_FACTORS: Mapping[str, Mapping[str, int]] = {
    metric: {unit: factor for unit, (of, factor) in UNITS.items() if of == metric}
    for _, _, metric in RESULTS
}

#: A ranked figure of a run (see :func:`_run_spec_problems`).
_Figure = tuple[int, float, bool, str, tuple[str, str] | int]

#: How far in the future an ``observedAt`` may lie before it is an error (clock skew).
CLOCK_SKEW = timedelta(minutes=5)


#: The kinds :func:`check_record` has rules for (a session skips the others).
CHECKED_KINDS: frozenset[str] = frozenset({"BenchmarkRun"})


def check_record(
    record: Mapping[str, Any], pointer: str, now: datetime | None = None
) -> list[Problem]:
    """Semantic problems of one schema-valid record (only runs have any in v1alpha1).

    ``now`` is the moment "in the future" is judged against; None reads the clock,
    and only when a rule needs it (most runs are dated days ago: see
    :func:`_past_cutoff`)."""
    if record.get("kind") != "BenchmarkRun":
        return []
    spec = record["spec"]
    if run_spec_passes(spec, now):
        return []  # the pointer is built only for a run with problems
    return _run_spec_problems(spec, f"{pointer}/spec", now)


def run_spec_passes(
    spec: Mapping[str, Any],
    now: datetime | None,
    _factors: Mapping[str, Mapping[str, int]] = _FACTORS,
    _rank_of: Any = _RANK.get,
) -> bool:
    """True only when :func:`_run_spec_problems` finds nothing in ``spec``; False: look
    closely (``now`` as :func:`check_record`'s).

    The rules once more, as a yes/no: every run of a valid stream is checked, and the
    full rules, which keep each figure's statistic and place for the messages they may
    have to write, cost several times as much. A value it cannot read (an
    exception) is False too: the full rules then raise, or not, as they would alone.
    ``tests/test_checks.py`` holds the two to each other.

    Written for a run of one result (a timing or a memory summary: every schema-valid
    run that passed), in as few bytecodes and calls as it can, for it is asked of each
    line of a JSON Lines stream, where the interpreter's work is what a line costs
    most. A run with both results, or with measurements and no result (neither is
    schema-valid), has its figures read by :func:`_figures_ranked`, the same rules in
    general."""
    try:
        observed_at = spec["observedAt"]
        if observed_at[:10] >= _past_cutoff(now):  # as _run_spec_problems: recent ones
            observed = parse_timestamp(observed_at)
            if observed is not None and observed > (now or datetime.now(timezone.utc)) + CLOCK_SKEW:
                return False
        timing: Any = spec.get("timing")
        memory: Any = spec.get("memory")
        if (timing is None) == (memory is None):
            # No result (a run that did not pass), or both (not schema-valid).
            figures = _figures_ranked(spec)
            if figures is None:
                return False
            ranked = figures
        else:
            if timing is not None:
                result_metric, summary = "latency", timing["latencyNs"]
                primary = timing["primaryStatistic"]
            else:
                result_metric, summary = "peak_memory", memory["peakBytes"]
                primary = memory["primaryStatistic"]
            if primary not in summary:
                return False
            # (rank, value): sorted, their values must not decrease. With one result no
            # two figures share a rank (a statistic given twice is refused first).
            ranked = []
            for statistic, value in summary.items():
                rank = _rank_of(statistic)
                if rank is not None:
                    ranked.append((rank, value))
            measurements = spec.get("measurements")
            if measurements:
                # A unit of the result's metric (else the unit does not fit the metric,
                # or the metric is not the result's), converted to the summary's unit.
                factors = _factors[result_metric]
                seen: set[str] = set()
                for measurement in measurements:
                    statistic = measurement["statistic"]
                    factor = factors.get(measurement["unit"])
                    if factor is None or measurement["metric"] != result_metric:
                        return False
                    key = "median" if statistic == "p50" else statistic
                    if key in summary or key in seen:
                        return False
                    seen.add(key)
                    rank = _rank_of(statistic)  # "p50" has none: it is never ranked
                    if rank is not None:
                        ranked.append((rank, measurement["value"] * factor))
        if len(ranked) > 1:
            ranked.sort()
            previous = ranked[0][1]
            for _, value in ranked:
                if not previous <= value:  # (not >: a NaN from Python fails here)
                    return False
                previous = value
    except Exception:  # "not known to pass": the full rules decide
        return False
    return True


#: The semantics of the native run rules this module expects (``RULES_VERSION`` of
#: ``_runrules.c``): a build of another version is left unused.
_NATIVE_RULES_VERSION = 2

#: A run's quick rule: ``passes(spec, now) -> bool`` (QUICK_RULES' values).
_QuickRule = Callable[[Mapping[str, Any], "datetime | None"], bool]


def _native_run_rules() -> _QuickRule | None:
    """``_runrules.quick``: :func:`run_spec_passes`' answer, judged in C for the common
    run (one result, plain figures, dated before :func:`_past_cutoff`) and asked of
    :func:`run_spec_passes` for every other; where it was built
    (``kernelindex_sdk.base.native``), given this module's tables, and answering as
    :func:`run_spec_passes` on the probe runs (:data:`_RULES_PROBES`)."""
    if not native_allowed():
        return None
    try:
        from kernelindex_sdk.checks import _runrules
    except ImportError:
        return None
    if _runrules.RULES_VERSION != _NATIVE_RULES_VERSION:
        return None
    _runrules.configure(_RANK, _FACTORS, RESULTS, _RECENT_DAYS, run_spec_passes)
    cutoff = _past_cutoff(_PROBE_NOW)
    for spec in _RULES_PROBES:
        expected = run_spec_passes(spec, _PROBE_NOW)
        if _runrules.run_passes(spec, cutoff) is not expected or (
            _runrules.quick(spec, None) is not expected
            or _runrules.quick(spec, _PROBE_NOW) is not expected
        ):
            return None  # pragma: no cover - a build that is not this module's twin
    return _runrules.quick


def _a_run(*measurements: tuple[str, str, str, float], median: float = 5.0) -> dict[str, Any]:
    """A probe run's spec: a timing with ``median`` and the given measurements."""
    return {
        "observedAt": "2024-09-04T15:31:40.000Z",
        "timing": {"latencyNs": {"median": median}, "primaryStatistic": "median"},
        "measurements": [
            {"metric": metric, "unit": unit, "statistic": statistic, "value": value}
            for metric, unit, statistic, value in measurements
        ],
    }


#: Runs the native rules must judge as :func:`run_spec_passes` does before they are
#: used: in order, out of order (in another unit), a unit of the wrong metric, a
#: statistic given twice, a NaN, and a run with no result.
_RULES_PROBES: list[dict[str, Any]] = [
    _a_run(("latency", "ns", "p20", 4), ("latency", "us", "p80", 0.006)),
    _a_run(("latency", "us", "p20", 0.006)),
    _a_run(("latency", "bytes", "p20", 4)),
    _a_run(("latency", "ns", "p50", 5)),
    _a_run(("latency", "ns", "p20", 4), median=float("nan")),
    {"observedAt": "2024-09-04T15:31:40.000Z", "status": "skipped"},
]
_PROBE_NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _figures_ranked(
    spec: Mapping[str, Any],
    _results: tuple[tuple[str, str, str], ...] = RESULTS,
    _units: Mapping[str, tuple[str, int]] = UNITS,
    _rank_of: Any = _RANK.get,
) -> list[tuple[int, Any]] | None:
    """:func:`run_spec_passes`' figure rules for any run (both results, measurements
    without a result), but the order: None when :func:`_run_spec_problems` finds a
    problem with the figures' results, units or repeats, else the ranked figures
    ``(rank, value in the base unit)`` whose order it checks. Exceptions are the
    caller's to catch."""
    result_metric = None
    summary: Mapping[str, Any] = {}
    # Ties in rank and value are equal values, so the order the full rules break them
    # in cannot matter.
    ranked: list[tuple[int, Any]] = []
    for _, _, metric, summary, primary in _results_given(spec, _results):
        result_metric = metric
        if primary not in summary:
            return None
        ranked += [(r, v) for s, v in summary.items() if (r := _rank_of(s)) is not None]
    seen: set[tuple[str, str]] = set()
    for measurement in spec.get("measurements", ()):
        metric, statistic = measurement["metric"], measurement["statistic"]
        unit_metric, factor = _units[measurement["unit"]]
        if unit_metric != metric:
            return None
        key = (metric, "median" if statistic == "p50" else statistic)
        if key in seen or (
            result_metric is not None and (metric != result_metric or key[1] in summary)
        ):
            return None
        seen.add(key)
        if (rank := _rank_of(statistic)) is not None:  # "p50" has none: never ranked
            ranked.append((rank, measurement["value"] * factor))
    return ranked


def _results_given(
    spec: Mapping[str, Any], results: tuple[tuple[str, str, str], ...]
) -> Iterator[tuple[str, str, str, Mapping[str, Any], Any]]:
    """``(field, summary key, metric, summary, primary statistic)`` of each result of
    ``results`` the run has."""
    for field, summary_key, metric in results:
        result = spec.get(field)
        if result is not None:
            yield field, summary_key, metric, result[summary_key], result["primaryStatistic"]


def _run_spec_problems(spec: Mapping[str, Any], at: str, now: datetime | None) -> list[Problem]:
    """Every semantic problem of a run's spec (at pointer ``at``), worked out in full:
    what :func:`run_spec_passes` has found some reason to look at."""
    problems: list[Problem] = []
    observed_at = spec["observedAt"]
    # A schema-valid timestamp dated two or more days before today (UTC) is in the
    # past whatever its offset (at most ±24 h): no need to parse it. ISO dates compare
    # as strings.
    observed = None if observed_at[:10] < _past_cutoff(now) else parse_timestamp(observed_at)
    if observed is not None and observed > (now or datetime.now(timezone.utc)) + CLOCK_SKEW:
        problems.append(
            _problem(f"observedAt {spec['observedAt']} is in the future", f"{at}/observedAt")
        )

    result_metric: str | None = None
    result_primary: str | None = None
    # The result's summary and its pointer: a measurement may not repeat one of its
    # statistics (two medians of one run, which would both pass the order check).
    result_summary: Mapping[str, Any] = {}
    result_at = ""
    # (rank, value in base unit, from a summary?, statistic, where) for every ranked
    # figure the run carries, in the order the figures are read; where is (field,
    # summary key) for a summary's figure, the index of a measurement's. Pointers are
    # written only for a problem: most runs have none.
    ranked: list[_Figure] = []
    rank_of = _RANK.get
    for field, summary_key, metric, summary, primary in _results_given(spec, RESULTS):
        result_metric = metric
        result_primary = primary
        result_summary, result_at = summary, f"{at}/{field}/{summary_key}"
        if primary not in summary:
            problems.append(
                _problem(
                    f"primaryStatistic {primary!r} has no value in {summary_key}",
                    f"{at}/{field}/primaryStatistic",
                )
            )
        where = (field, summary_key)
        for statistic, value in summary.items():
            rank = rank_of(statistic)
            if rank is not None:
                ranked.append((rank, value, True, statistic, where))

    problems += _measurement_problems(spec, at, result_metric, result_summary, result_at, ranked)

    if len(ranked) > 1:
        ranked.sort()
        previous = ranked[0][1]
        for figure in ranked:
            value = figure[1]
            if not previous <= value:  # (not >: a NaN from Python is out of order)
                problems.extend(_order_problems(ranked, result_primary, at))
                break
            previous = value
    return problems


def _measurement_problems(
    spec: Mapping[str, Any],
    at: str,
    result_metric: str | None,
    result_summary: Mapping[str, Any],
    result_at: str,
    ranked: list[_Figure],
) -> list[Problem]:
    """The problems of a run's measurements (at pointer ``at``, the spec's): a unit of
    another metric, a metric other than the result's (``result_metric``), a statistic
    given twice, or given again beside the result's summary (``result_summary``, at
    ``result_at``). The ranked figures of the measurements without a problem are added
    to ``ranked``, for :func:`_run_spec_problems`' order check."""
    problems: list[Problem] = []
    rank_of = _RANK.get
    seen: dict[tuple[str, str], int] = {}
    for index, measurement in enumerate(spec.get("measurements", ())):
        metric, unit, statistic = (
            measurement["metric"],
            measurement["unit"],
            measurement["statistic"],
        )
        unit_metric, factor = UNITS[unit]
        if unit_metric != metric:
            problems.append(
                _problem(
                    f"unit {unit!r} does not measure {metric}",
                    f"{at}/measurements/{index}/unit",
                    "units",
                )
            )
            continue
        if result_metric is not None and metric != result_metric:
            problems.append(
                _problem(
                    f"a {metric} measurement on a run whose result is {result_metric}",
                    f"{at}/measurements/{index}/metric",
                    "units",
                )
            )
            continue
        key = (metric, "median" if statistic == "p50" else statistic)
        also = f"{at}/measurements/{seen[key]}" if key in seen else None
        if also is None and metric == result_metric and key[1] in result_summary:
            also = f"{result_at}/{escape_token(key[1])}"
        if also is not None:
            problems.append(
                _problem(
                    f"{statistic} of {metric} is given twice (also at {also})",
                    f"{at}/measurements/{index}",
                )
            )
            continue
        seen[key] = index
        rank = rank_of(statistic)
        if rank is not None:
            ranked.append((rank, measurement["value"] * factor, False, statistic, index))
    return problems


def _figure_pointer(at: str, statistic: str, where: tuple[str, str] | int) -> str:
    """The pointer of a figure of :func:`_run_spec_problems` (``at`` is the spec's)."""
    if isinstance(where, int):
        return f"{at}/measurements/{where}/value"
    field, summary_key = where
    return f"{at}/{field}/{summary_key}/{escape_token(statistic)}"


def _order_problems(ranked: list[_Figure], primary: str | None, at: str) -> list[Problem]:
    """Adjacent ranked statistics must not decrease (p20 ≤ median ≤ p80, ...).

    The problem points at the figure that breaks the order and names the other one's
    pointer in its message: the run's primary statistic is the reference the others
    are read against, so of a pair the one that is not primary is blamed (p20 above
    the median: the p20); of two others, the one farther from the primary in rank.
    Of a summary's figure and a measurement of one statistic, the measurement comes
    first (as their pointers sort). ``ranked`` is sorted (by :func:`_run_spec_problems`).
    """
    problems: list[Problem] = []
    for low_figure, high_figure in pairwise(ranked):
        if low_figure[1] <= high_figure[1]:
            continue
        low_rank, low, _, low_stat, low_where = low_figure
        high_rank, high, _, high_stat, high_where = high_figure
        center = _RANK.get(primary or "median", _RANK["median"])
        if high_stat == primary:
            blame_low = True
        elif low_stat == primary:
            blame_low = False
        else:
            blame_low = abs(low_rank - center) > abs(high_rank - center)
        low_at = _figure_pointer(at, low_stat, low_where)
        high_at = _figure_pointer(at, high_stat, high_where)
        low_text, high_text = f"{low_stat} ({_num(low)}", f"{high_stat} ({_num(high)}"
        if blame_low:
            high_text += f", at {high_at}"
        else:
            low_text += f", at {low_at}"
        problems.append(
            _problem(
                f"statistics out of order: {low_text}) > {high_text});"
                f" {low_stat} <= {high_stat} must hold",
                low_at if blame_low else high_at,
                "statistics-order",
            )
        )
    return problems


def _num(value: float) -> str:
    """Full precision: two out-of-order figures must never print alike."""
    return repr(value)


#: The UTC date of the last call, the POSIX time its day starts at, and its cutoff.
_CUTOFF: list[tuple[date, float, str]] = []

#: Seconds in a UTC day: POSIX time has no leap seconds.
_DAY_SECONDS = 86_400


#: How many days before today a run's ``observedAt`` date must be for the quick rules
#: to know, without parsing it, that it is not in the future (:func:`_past_cutoff`).
_RECENT_DAYS = 2


def _past_cutoff(now: datetime | None) -> str:
    """``YYYY-MM-DD`` :data:`_RECENT_DAYS` days before ``now``'s UTC date (remembered
    per date).

    ``now`` None is the clock's time: while the clock is within the remembered day,
    one ``time()`` answers, rather than a ``datetime`` built per record."""
    if now is None:
        if _CUTOFF:
            _, start, cutoff = _CUTOFF[0]
            if 0 <= time() - start < _DAY_SECONDS:
                return cutoff
        now = datetime.now(timezone.utc)
    zone = now.tzinfo
    utc = zone is None or zone is timezone.utc
    today = now.date() if utc else now.astimezone(timezone.utc).date()
    if not _CUTOFF or _CUTOFF[0][0] != today:
        start = datetime(today.year, today.month, today.day, tzinfo=timezone.utc).timestamp()
        _CUTOFF[:] = [(today, start, (today - timedelta(days=_RECENT_DAYS)).isoformat())]
    return _CUTOFF[0][2]


def _problem(message: str, pointer: str, code: str = "semantic") -> Problem:
    return Problem(message=message, code=code, pointer=pointer)


# Set last: the probe runs the Python rules, which need every helper above.
_run_passes_in_c: _QuickRule | None = _native_run_rules()

#: Kind → a quick yes for a record's spec: True only when :func:`check_record` finds no
#: problem in a record of that kind with that spec, False: "look closely" (see
#: :mod:`kernelindex_sdk.checks`). A kind with no rules needs none (CHECKED_KINDS).
QUICK_RULES: Mapping[str, Callable[[Mapping[str, Any], datetime | None], bool]] = {
    "BenchmarkRun": _run_passes_in_c or run_spec_passes,
}
