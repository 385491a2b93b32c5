"""Semantic rules of v1alpha1 that the schemas cannot express."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from profiles import examples

from kernelindex_sdk.base.native import NATIVE_VARIABLE, native_allowed
from kernelindex_sdk.base.recordformat import parse_timestamp
from kernelindex_sdk.checks import for_version, v1alpha1
from kernelindex_sdk.checks.v1alpha1 import CLOCK_SKEW
from kernelindex_sdk.validating.validation import ValidationSession

NOW = datetime(2026, 11, 30, tzinfo=timezone.utc)


def check_run_spec(spec: dict[str, Any], at: str, now: datetime | None) -> list[Any]:
    """The run rules on ``spec`` as :func:`v1alpha1.check_record` applies them to a run
    whose spec is at ``at`` (a pointer ending in ``/spec``)."""
    assert at.endswith("/spec")
    return v1alpha1.check_record({"kind": "BenchmarkRun", "spec": spec}, at[: -len("/spec")], now)


def problems(bundle: dict[str, Any]) -> list[str]:
    session = ValidationSession(now=NOW)
    return [
        f"{p.pointer}: {p.message}"
        for item in session.check_document(bundle)
        for p in item.problems
    ]


def test_seed_is_clean(seed_bundle: dict[str, Any]) -> None:
    assert problems(seed_bundle) == []


def test_p20_above_median(seed_bundle: dict[str, Any]) -> None:
    seed_bundle["run"]["spec"]["measurements"][0]["value"] = 10**9
    found = problems(seed_bundle)
    assert len(found) == 1
    assert "p20 (1000000000) > median" in found[0]


def test_median_above_p80(seed_bundle: dict[str, Any]) -> None:
    seed_bundle["run"]["spec"]["measurements"][1]["value"] = 1
    (found,) = problems(seed_bundle)
    assert "median" in found and "> p80 (1)" in found


def test_units_are_converted_before_ordering(seed_bundle: dict[str, Any]) -> None:
    # 0.5 ms p80 = 500,000 ns > median 417,536 ns: in order once converted.
    spec = seed_bundle["run"]["spec"]
    spec["measurements"][1] = {"metric": "latency", "unit": "ms", "statistic": "p80", "value": 0.5}
    assert problems(seed_bundle) == []
    spec["measurements"][1]["value"] = 0.4  # 400,000 ns < median
    assert any("> p80" in p for p in problems(seed_bundle))


def test_latency_in_bytes(seed_bundle: dict[str, Any]) -> None:
    seed_bundle["run"]["spec"]["measurements"][1]["unit"] = "bytes"
    (found,) = problems(seed_bundle)
    assert found.startswith("/run/spec/measurements/1/unit:")
    assert "does not measure latency" in found


def test_memory_measurement_on_timing_run(seed_bundle: dict[str, Any]) -> None:
    seed_bundle["run"]["spec"]["measurements"][1].update(metric="peak_memory", unit="MiB")
    (found,) = problems(seed_bundle)
    assert "/run/spec/measurements/1/metric" in found and "result is latency" in found


def test_duplicate_statistic(seed_bundle: dict[str, Any]) -> None:
    spec = seed_bundle["run"]["spec"]
    spec["measurements"].append(dict(spec["measurements"][0]))
    assert any("given twice" in p for p in problems(seed_bundle))


def test_statistic_in_the_summary_and_again_as_a_measurement(
    seed_bundle: dict[str, Any],
) -> None:
    """docs/format.md: "a statistic may not be given twice" — a median in ``timing`` and
    another in ``measurements`` validated before (#32), the order check passing both."""
    spec = seed_bundle["run"]["spec"]
    median = spec["timing"]["latencyNs"]["median"]
    spec["measurements"].append(
        {"metric": "latency", "unit": "ns", "statistic": "median", "value": median * 3}
    )
    (found,) = problems(seed_bundle)
    index = len(spec["measurements"]) - 1
    assert f"/run/spec/measurements/{index}" in found
    assert "median of latency is given twice (also at /run/spec/timing/latencyNs/median)" in found


def test_primary_statistic_missing(seed_bundle: dict[str, Any]) -> None:
    seed_bundle["run"]["spec"]["timing"]["primaryStatistic"] = "mean"
    (found,) = problems(seed_bundle)
    assert "primaryStatistic 'mean' has no value" in found


@pytest.mark.parametrize(
    ("observed", "future"),
    [
        ("2026-11-30T00:04:00Z", False),  # within the clock-skew allowance
        ("2026-11-30T00:06:00Z", True),
        ("2026-11-30T01:00:00.5+02:00", False),  # an offset: 23:00 UTC the day before
        ("2999-01-01T00:00:00.000Z", True),
    ],
)
def test_observed_at_in_the_future(
    seed_bundle: dict[str, Any], observed: str, future: bool
) -> None:
    seed_bundle["run"]["spec"]["observedAt"] = observed
    found = problems(seed_bundle)
    assert bool(found) is future
    if future:
        assert "is in the future" in found[0]


def test_memory_run_is_ordered_in_bytes() -> None:
    spec: dict[str, Any] = {
        "status": "passed",
        "observedAt": "2025-01-01T00:00:00Z",
        "memory": {"peakBytes": {"median": 2 << 20}, "primaryStatistic": "median"},
        "measurements": [
            {"metric": "peak_memory", "unit": "MiB", "statistic": "p20", "value": 1.5},
            {"metric": "peak_memory", "unit": "MiB", "statistic": "p80", "value": 2.5},
        ],
    }
    assert check_run_spec(spec, "/spec", NOW) == []
    spec["measurements"][0]["value"] = 3
    (found,) = check_run_spec(spec, "/spec", NOW)
    assert found.code == "statistics-order"


def test_unknown_version_has_no_checks() -> None:
    assert for_version("kernelindex.dev/v9") is None
    assert for_version("not a version/!") is None


@settings(
    max_examples=examples(300),
    deadline=None,
    # observedAt is overwritten on every example: sharing the fixture is safe.
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    st.datetimes(
        min_value=datetime(2026, 11, 20), max_value=datetime(2026, 12, 5)
    ),  # around NOW, where the date shortcut decides
    st.integers(min_value=-(23 * 60 + 59), max_value=23 * 60 + 59),
    st.sampled_from(["", ".5", ".123456789"]),
)
def test_future_rule_matches_parsing_every_timestamp(
    seed_bundle: dict[str, Any], local: datetime, offset_minutes: int, fraction: str
) -> None:
    """Skipping the parse of timestamps dated two days back never changes a verdict."""
    sign = "+" if offset_minutes >= 0 else "-"
    hours, minutes = divmod(abs(offset_minutes), 60)
    text = f"{local:%Y-%m-%dT%H:%M:%S}{fraction}{sign}{hours:02d}:{minutes:02d}"
    parsed = parse_timestamp(text)
    assert parsed is not None
    seed_bundle["run"]["spec"]["observedAt"] = text
    found = check_run_spec(seed_bundle["run"]["spec"], "/run/spec", NOW)
    assert any("is in the future" in p.message for p in found) is (parsed > NOW + CLOCK_SKEW)


def _at(moment: datetime) -> str:
    return f"{moment:%Y-%m-%dT%H:%M:%S}Z"


@pytest.mark.parametrize(
    ("shift", "future"),
    [
        (timedelta(hours=1), True),
        (CLOCK_SKEW + timedelta(seconds=30), True),
        (timedelta(minutes=1), False),  # clock skew is forgiven
        (timedelta(hours=-1), False),
        (timedelta(days=-3), False),  # decided by the date alone
    ],
)
def test_now_none_is_the_clocks_time(
    seed_bundle: dict[str, Any], shift: timedelta, future: bool
) -> None:
    """Without a fixed ``now`` the rules read the clock, as a session without one does."""
    spec = seed_bundle["run"]["spec"]
    spec["observedAt"] = _at(datetime.now(timezone.utc) + shift)
    found = check_run_spec(spec, "/run/spec", None)
    assert any("is in the future" in p.message for p in found) is future
    session_found = [p.message for p in problems_now(seed_bundle)]
    assert any("is in the future" in m for m in session_found) is future


def problems_now(bundle: dict[str, Any]) -> list[Any]:
    session = ValidationSession(strict_json=True)  # no fixed now: the clock's
    assert session.passes(bundle) is not any(
        p for item in session.check_document(bundle) for p in item.problems
    )
    return [p for item in session.check_document(bundle) for p in item.problems]


def test_the_remembered_cutoff_follows_the_clock_past_midnight(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The cutoff read from ``time()`` is the one of the clock's UTC date, also when
    the clock crosses midnight (or is set back) after a cutoff was remembered."""
    midnight = datetime(2026, 12, 1, tzinfo=timezone.utc).timestamp()
    clock = [midnight - 1.0]

    class FrozenClock(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> FrozenClock:
            return cls.fromtimestamp(clock[0], tz)

    monkeypatch.setattr(v1alpha1, "time", lambda: clock[0])
    monkeypatch.setattr(v1alpha1, "datetime", FrozenClock)
    monkeypatch.setattr(v1alpha1, "_CUTOFF", [])
    assert v1alpha1._past_cutoff(None) == "2026-11-28"
    clock[0] = midnight
    assert v1alpha1._past_cutoff(None) == "2026-11-29"
    clock[0] = midnight + 86_399.5
    assert v1alpha1._past_cutoff(None) == "2026-11-29"
    clock[0] = midnight - 86_400 * 10  # set back
    assert v1alpha1._past_cutoff(None) == "2026-11-19"
    assert v1alpha1._past_cutoff(NOW) == "2026-11-28"  # a given now is its own


# --------------------------------------------------------------------------- oracle


def _oracle(spec: dict[str, Any], at: str, now: datetime) -> list[tuple[str, str, str]]:
    """The rules written plainly, as (code, pointer, message): every figure collected,
    then the ranked ones sorted (check_run_spec keeps only ranked figures, as it reads
    them, and skips work where no problem can be)."""
    from itertools import pairwise

    from kernelindex_sdk.checks.v1alpha1 import _RANK, RESULTS, UNITS

    found: list[tuple[str, str, str]] = []
    observed = parse_timestamp(spec["observedAt"])
    if observed is not None and observed > now + CLOCK_SKEW:
        found.append(
            ("semantic", f"{at}/observedAt", f"observedAt {spec['observedAt']} is in the future")
        )
    result_metric = primary = None
    figures: list[tuple[Any, str, Any]] = []
    for field, summary_key, metric in RESULTS:
        if spec.get(field) is None:
            continue
        result_metric, summary = metric, spec[field][summary_key]
        primary = spec[field]["primaryStatistic"]
        if primary not in summary:
            found.append(
                (
                    "semantic",
                    f"{at}/{field}/primaryStatistic",
                    f"primaryStatistic {primary!r} has no value in {summary_key}",
                )
            )
        figures += [(value, stat, (field, summary_key)) for stat, value in summary.items()]
    # Where each statistic was first given: the summary's, then the measurements'.
    seen: dict[tuple[str, str], str] = {}
    if result_metric is not None:
        field = "timing" if result_metric == "latency" else "memory"
        key_name = "latencyNs" if field == "timing" else "peakBytes"
        for stat in spec[field][key_name]:
            seen[(result_metric, stat)] = f"{at}/{field}/{key_name}/{stat}"
    for index, m in enumerate(spec.get("measurements", ())):
        metric, unit, stat = m["metric"], m["unit"], m["statistic"]
        here = f"{at}/measurements/{index}"
        if UNITS[unit][0] != metric:
            found.append(("units", f"{here}/unit", f"unit {unit!r} does not measure {metric}"))
        elif result_metric is not None and metric != result_metric:
            found.append(
                (
                    "units",
                    f"{here}/metric",
                    f"a {metric} measurement on a run whose result is {result_metric}",
                )
            )
        elif (metric, "median" if stat == "p50" else stat) in seen:
            also = seen[(metric, "median" if stat == "p50" else stat)]
            found.append(("semantic", here, f"{stat} of {metric} is given twice (also at {also})"))
        else:
            seen[(metric, "median" if stat == "p50" else stat)] = here
            figures.append((m["value"] * UNITS[unit][1], stat, index))

    def pointer(stat: str, where: Any) -> str:
        if isinstance(where, int):
            return f"{at}/measurements/{where}/value"
        return f"{at}/{where[0]}/{where[1]}/{stat.replace('~', '~0').replace('/', '~1')}"

    ranked = sorted(
        (_RANK[stat], value, isinstance(where, tuple), stat, where)
        for value, stat, where in figures
        if stat in _RANK
    )
    center = _RANK.get(primary or "median", _RANK["median"])
    for (low_rank, low, _, low_stat, low_where), (
        high_rank,
        high,
        _,
        high_stat,
        high_where,
    ) in pairwise(ranked):
        if low <= high:
            continue
        if high_stat == primary or low_stat == primary:
            blame_low = high_stat == primary
        else:
            blame_low = abs(low_rank - center) > abs(high_rank - center)
        low_at, high_at = pointer(low_stat, low_where), pointer(high_stat, high_where)
        low_text = f"{low_stat} ({low!r}" + ("" if blame_low else f", at {low_at}")
        high_text = f"{high_stat} ({high!r}" + (f", at {high_at}" if blame_low else "")
        found.append(
            (
                "statistics-order",
                low_at if blame_low else high_at,
                f"statistics out of order: {low_text}) > {high_text});"
                f" {low_stat} <= {high_stat} must hold",
            )
        )
    return found


_STATISTICS = st.sampled_from(
    ["min", "p5", "p20", "median", "p50", "p80", "p99", "max", "mean", "stddev"]
)
_VALUES = st.integers(0, 5) | st.sampled_from([0.5, 2.5, 1e-9, 1e18]) | st.floats(0, 10)


@st.composite
def _specs(draw: st.DrawFn) -> dict[str, Any]:
    """Run specs as the schema lets them through, and some it does not (any statistic
    in a summary, equal values, units of either metric)."""
    spec: dict[str, Any] = {
        "observedAt": draw(st.sampled_from(["2024-09-03T15:38:37Z", "2026-11-30T00:06:00Z"]))
    }
    for field, key in draw(
        st.sampled_from(
            [
                (),
                (("timing", "latencyNs"),),
                (("memory", "peakBytes"),),
                (("timing", "latencyNs"), ("memory", "peakBytes")),
            ]
        )
    ):
        spec[field] = {
            key: draw(st.dictionaries(_STATISTICS, _VALUES, max_size=4)),
            "primaryStatistic": draw(_STATISTICS),
        }
    spec["measurements"] = draw(
        st.lists(
            st.fixed_dictionaries(
                {
                    "metric": st.sampled_from(["latency", "peak_memory"]),
                    "unit": st.sampled_from(["ns", "us", "ms", "s", "bytes", "KiB", "MiB"]),
                    "statistic": _STATISTICS,
                    "value": _VALUES,
                }
            ),
            max_size=6,
        )
    )
    return spec


def _latency(statistic: str, value: Any, unit: str = "ns") -> dict[str, Any]:
    return {"metric": "latency", "unit": unit, "statistic": statistic, "value": value}


@settings(max_examples=examples(1000), deadline=None)
@given(_specs())
# A summary's figure and a measurement of one statistic and value: the measurement is
# the one compared with its neighbour (and blamed).
@example(
    {
        "observedAt": "2024-09-03T15:38:37Z",
        "timing": {"latencyNs": {"median": 5}, "primaryStatistic": "p20"},
        "measurements": [_latency("median", 0.005, "us"), _latency("p20", 7)],
    }
)
def test_the_rules_are_what_they_say_written_plainly(spec: dict[str, Any]) -> None:
    found = [(p.code, p.pointer, p.message) for p in check_run_spec(spec, "/run/spec", NOW)]
    assert found == _oracle(spec, "/run/spec", NOW)


def test_the_plain_rules_see_problems() -> None:
    """The oracle is not vacuous: out of order, twice, wrong unit, no primary value."""
    spec = {
        "observedAt": "2026-11-30T00:06:00Z",
        "timing": {"latencyNs": {"median": 5, "p20": 7}, "primaryStatistic": "p80"},
        "measurements": [
            {"metric": "latency", "unit": "bytes", "statistic": "p80", "value": 1},
            {"metric": "latency", "unit": "us", "statistic": "p80", "value": 0.001},
            {"metric": "latency", "unit": "ns", "statistic": "p80", "value": 1},
        ],
    }
    codes = [code for code, _, _ in _oracle(spec, "/spec", NOW)]
    assert set(codes) == {"semantic", "statistics-order", "units"}
    assert codes == [p.code for p in check_run_spec(spec, "/spec", NOW)]


@settings(max_examples=examples(1000), deadline=None)
@given(_specs(), st.sampled_from([NOW, None]))
@example(  # a p50 measurement beside a summary's median: given twice, never ranked
    {
        "observedAt": "2024-09-03T15:38:37Z",
        "timing": {"latencyNs": {"median": 5}, "primaryStatistic": "median"},
        "measurements": [_latency("p50", 5)],
    },
    NOW,
)
@example(  # both results: the measurements are read against the last one's summary
    {
        "observedAt": "2024-09-03T15:38:37Z",
        "timing": {"latencyNs": {"median": 5}, "primaryStatistic": "median"},
        "memory": {"peakBytes": {"p80": 9}, "primaryStatistic": "p80"},
        "measurements": [
            {"metric": "peak_memory", "unit": "bytes", "statistic": "median", "value": 7}
        ],
    },
    NOW,
)
def test_the_quick_rules_pass_exactly_the_runs_without_problems(
    spec: dict[str, Any], now: datetime | None
) -> None:
    """check_record answers a run with no problem from ``run_spec_passes`` alone:
    it must say yes exactly when the full rules find nothing (a yes too many would
    hide a problem; a no too many only costs time, but the oracle test above cannot
    see it)."""
    passes = v1alpha1.run_spec_passes(spec, now)
    assert passes is (not v1alpha1._run_spec_problems(spec, "/run/spec", now))


@pytest.mark.parametrize(
    "spec",
    [
        {"observedAt": "2024-09-03T15:38:37Z", "measurements": [{"metric": "latency"}]},
        {"observedAt": "2024-09-03T15:38:37Z", "timing": {"primaryStatistic": "median"}},
        {"measurements": []},
        {
            "observedAt": "2024-09-03T15:38:37Z",
            "measurements": [_latency("p20", "fast"), _latency("p80", 1)],
        },
    ],
    ids=["no-unit", "no-summary", "no-observedAt", "value-not-a-number"],
)
def test_a_run_the_quick_rules_cannot_read_gets_the_full_rules_answer(
    spec: dict[str, Any],
) -> None:
    """The rules trust the schema's shape; given something else, the quick answer is
    "not known" and the full rules answer (or raise) as they always did."""
    assert v1alpha1.run_spec_passes(spec, NOW) is False
    try:
        expected: Any = v1alpha1._run_spec_problems(spec, "/spec", NOW)
    except Exception as error:  # compared below
        expected = type(error)
    try:
        found: Any = check_run_spec(spec, "/spec", NOW)
    except Exception as error:  # compared below
        found = type(error)
    assert found == expected


# ---------------------------------------------------------------------------
# The native run rules (checks/_runrules.c) and their twin, run_spec_passes
# ---------------------------------------------------------------------------

#: The compiled module where it is built, else None: the module itself, not what
#: v1alpha1 chose (a build its import probe refused would leave these laws skipped,
#: rather than failing them).
try:
    from kernelindex_sdk.checks import _runrules as NATIVE_RULES
except ImportError:
    NATIVE_RULES = None  # type: ignore[assignment]
needs_native = pytest.mark.skipif(NATIVE_RULES is None, reason="the native rules are not built")

#: Values where a run's rules expect something else: each makes a twin raise or refuse.
_ODD = st.sampled_from(
    [None, True, "7", [1], {"median": 1}, float("nan"), float("inf"), 2**70, -1, 1.5, ("p20",)]
)


class _Key(str):
    """A key that is a str, but not exactly one (no strict JSON reader makes it)."""


@st.composite
def _odd_specs(draw: st.DrawFn) -> Any:
    """:func:`_specs`, and some with one place (the spec itself, a field, a result, a
    summary's value, a measurement or one of its fields) replaced by an odd value, or
    with a key that is no exact str added to one of its objects."""
    spec = draw(_specs())
    where = draw(st.integers(0, 8))
    if where == 0:
        return spec
    if where == 8:
        result = spec.get("timing") or spec.get("memory") or {}
        objects = [spec, result, *[v for v in result.values() if isinstance(v, dict)]]
        objects += spec["measurements"]
        key = draw(st.sampled_from([1, None, _Key("median"), _Key("unit"), ("k",)]))
        draw(st.sampled_from(objects))[key] = draw(_ODD)
        return spec
    if where == 1:
        return draw(_ODD)
    if where == 2:
        spec[draw(st.sampled_from(["observedAt", "timing", "memory", "measurements"]))] = draw(_ODD)
    elif where in (3, 4):
        result = spec.get("timing") or spec.get("memory")
        if result is not None:
            summary = result.get("latencyNs", result.get("peakBytes"))
            if where == 3 and summary:
                summary[draw(st.sampled_from(sorted(summary)))] = draw(_ODD)
            else:
                result[draw(st.sampled_from(["primaryStatistic", "latencyNs", "peakBytes"]))] = (
                    draw(_ODD)
                )
    elif spec["measurements"]:
        at = draw(st.integers(0, len(spec["measurements"]) - 1))
        if where == 5:
            spec["measurements"][at] = draw(_ODD)
        else:
            field = draw(st.sampled_from(["metric", "unit", "statistic", "value"]))
            spec["measurements"][at][field] = draw(_ODD)
    return spec


_RANKED = ["min", "p5", "p20", "median", "p80", "p99", "max"]
_UNITS = {"latency": ["ns", "us", "ms", "s"], "peak_memory": ["bytes", "KiB", "MiB"]}


@st.composite
def _common_runs(draw: st.DrawFn) -> dict[str, Any]:
    """Runs as importers write them (one result holding its primary statistic, figures
    in order in the summary's unit, each statistic once), with at most one thing
    broken: each rule, alone, decides the verdict of some of them."""
    field, key, metric = draw(st.sampled_from(v1alpha1.RESULTS))
    chosen = sorted(
        draw(st.sets(st.sampled_from(_RANKED), min_size=1, max_size=5)), key=_RANKED.index
    )
    # Integers, as the schema has a summary's figures (ns, bytes) and as importers write
    # them, so that the CLI law below checks the rules rather than the schema.
    figures = st.integers(0, 2**40) | st.sampled_from([0, 1, 5])
    values = sorted(draw(st.lists(figures, min_size=len(chosen), max_size=len(chosen))))
    split = draw(st.integers(1, len(chosen)))
    summary = dict(zip(chosen[:split], values[:split], strict=True))
    measurements = [
        {"metric": metric, "unit": _UNITS[metric][0], "statistic": stat, "value": value}
        for stat, value in zip(chosen[split:], values[split:], strict=True)
    ]
    spec: dict[str, Any] = {
        "observedAt": "2024-09-03T15:38:37Z",
        field: {key: summary, "primaryStatistic": draw(st.sampled_from(chosen[:split]))},
        "measurements": measurements,
    }
    broken = draw(st.sampled_from(["none", "metric", "unit", "twice", "p50", "order", "primary"]))
    if broken == "primary":
        spec[field]["primaryStatistic"] = "p5" if "p5" not in summary else "p99"
    elif broken == "order" and len(chosen) > 1:
        summary_or_measured = draw(st.booleans()) and measurements
        if summary_or_measured:
            measurements[0]["value"] = 0
        else:
            summary[chosen[split - 1]] = 2**52
    elif measurements and broken in ("metric", "unit"):
        other = "peak_memory" if metric == "latency" else "latency"
        if broken == "metric":
            measurements[0]["metric"] = other  # its unit still the result's metric's
        else:
            measurements[0]["unit"] = _UNITS[other][0]
    elif broken == "twice":
        stat = draw(st.sampled_from(chosen))
        measurements.append(
            {"metric": metric, "unit": _UNITS[metric][0], "statistic": stat, "value": 1}
        )
    elif broken == "p50":
        measurements.append(
            {"metric": metric, "unit": _UNITS[metric][0], "statistic": "p50", "value": 1}
        )
    return spec


@needs_native
@settings(max_examples=examples(1000), deadline=None)
@given(_odd_specs() | _common_runs(), st.sampled_from([NOW, None]))
@example(_a_common_run := {
    "observedAt": "2024-09-03T15:38:37Z",
    "timing": {"latencyNs": {"median": 5}, "primaryStatistic": "median"},
    "measurements": [_latency("p20", 4), _latency("p80", 0.006, "us")],
}, None)  # fmt: skip
@example({**_a_common_run, "measurements": [_latency("p50", 5)]}, None)
@example({"observedAt": "2024-09-03T15:38:37Z", "measurements": None}, None)
@example({"observedAt": "2024-09-03T15:38:37Z", "timing": None, "memory": None}, None)
@example({"observedAt": "2024-09-03T15:38:37Z", "measurements": [_latency("p20", 4)]}, None)
@example({**_a_common_run, "measurements": [_latency("p20", 4), _latency("p20", 4)]}, None)
@example({**_a_common_run, "timing": {"latencyNs": {"median": 5, "p80": 4},
          "primaryStatistic": "median"}}, None)  # fmt: skip
def test_the_native_rules_answer_as_their_twin_or_ask_it(spec: Any, now: datetime | None) -> None:
    """The law of the native run rules: on every run drawn (valid, with problems, with
    values of the wrong type anywhere), ``run_passes`` answers what ``run_spec_passes``
    answers, or None (the twin is asked); ``quick``, the version's QUICK_RULES entry,
    answers what the twin answers, always."""
    assert NATIVE_RULES is not None
    cutoff = v1alpha1._past_cutoff(now)
    native = NATIVE_RULES.run_passes(spec, cutoff)
    expected = v1alpha1.run_spec_passes(spec, now)
    assert native is None or native is expected
    assert NATIVE_RULES.quick(spec, now) is expected


@needs_native
@settings(max_examples=examples(300), deadline=None)
@given(_specs())
def test_a_run_the_quick_entry_passes_has_no_problem(spec: dict[str, Any]) -> None:
    """QUICK_RULES' run entry (the native one where it is built): a yes only for a run
    the full rules find nothing in."""
    quick = v1alpha1.QUICK_RULES["BenchmarkRun"]
    if quick(spec, None):
        assert v1alpha1._run_spec_problems(spec, "/spec", None) == []


@needs_native
def test_the_native_rules_judge_the_common_runs_themselves(seed_bundle: dict[str, Any]) -> None:
    """The runs importers write (one result, plain figures, dated days ago) are judged in
    C, not handed to the twin: a native that asked about every run would pass every
    law above and save nothing."""
    assert NATIVE_RULES is not None
    assert v1alpha1.QUICK_RULES["BenchmarkRun"] is NATIVE_RULES.quick
    cutoff = v1alpha1._past_cutoff(None)
    spec = seed_bundle["run"]["spec"]
    memory = {**spec, "memory": {"peakBytes": {"median": 9}, "primaryStatistic": "median"}}
    del memory["timing"], memory["measurements"]
    skipped = {k: v for k, v in spec.items() if k not in ("timing", "measurements")}
    skipped["status"] = "skipped"
    runs = (spec, _a_common_run, memory, {**spec, "measurements": []}, skipped)
    for run in (*runs, {**skipped, "measurements": []}):
        assert NATIVE_RULES.run_passes(run, cutoff) is True
    out_of_order = {**_a_common_run, "measurements": [_latency("p20", 6)]}
    assert NATIVE_RULES.run_passes(out_of_order, cutoff) is False


def test_kernelindex_native_0_leaves_the_python_rules() -> None:
    """``KERNELINDEX_NATIVE=0``: the version's quick rule is the Python twin."""
    code = (
        "from kernelindex_sdk.checks import v1alpha1\n"
        "print(v1alpha1.QUICK_RULES['BenchmarkRun'] is v1alpha1.run_spec_passes)\n"
    )
    env = {**os.environ, NATIVE_VARIABLE: "0"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "True"


def test_native_rules_of_another_version_are_left_unused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(v1alpha1, "_NATIVE_RULES_VERSION", -1)
    assert v1alpha1._native_run_rules() is None


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_common_runs(), min_size=1, max_size=30))
def test_validate_says_the_same_with_and_without_the_native_rules(
    tmp_path_factory: pytest.TempPathFactory, runs: list[dict[str, Any]]
) -> None:
    """Through the CLI: ``kernelindex validate`` of drawn runs (the seed's run with each
    drawn result and measurements), one record per line, prints the same report and
    exits alike with the native rules and with ``KERNELINDEX_NATIVE=0``; and it finds a
    problem exactly in the runs the full rules find one in (of those the schema
    accepts)."""
    from conftest import seed_paths

    seed = json.loads(seed_paths()[1].read_text(encoding="utf-8"))["run"]
    records = []
    for at, drawn in enumerate(runs):
        spec = {k: v for k, v in seed["spec"].items() if k not in ("timing", "memory")}
        spec.update(drawn, observedAt=seed["spec"]["observedAt"])
        records.append(
            {**seed, "metadata": {**seed["metadata"], "name": f"run-{at}"}, "spec": spec}
        )
    lines = tmp_path_factory.mktemp("rules") / "runs.jsonl"
    lines.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != NATIVE_VARIABLE}
    said = []
    for switch in ({}, {NATIVE_VARIABLE: "0"}):
        command = [sys.executable, "-m", "kernelindex_sdk.cli.main", "validate"]
        done = subprocess.run(
            [*command, "--format", "json", str(lines)],
            env={**env, **switch}, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode in (0, 1), done.stderr
        said.append((done.returncode, done.stdout))
    assert said[0] == said[1]
    # (A "p50" measurement is the schema's to refuse: the rules never see that run.)
    found = json.loads(said[0][1])["problems"]
    refused = {problem["line"] for problem in found if problem["code"] == "schema"}
    reported = {problem["line"] for problem in found if problem["code"] != "schema"}
    with_problems = {
        at + 1
        for at, record in enumerate(records)
        if at + 1 not in refused and v1alpha1._run_spec_problems(record["spec"], "/spec", None)
    }
    assert reported == with_problems, said[0][1]


@pytest.mark.skipif(
    not os.environ.get("CI") or sys.platform == "win32",
    reason="CI's machine has a C compiler; elsewhere the Python rules are a fallback",
)
def test_ci_builds_and_uses_the_native_rules() -> None:
    """On CI the build hook compiled the native rules and the version's quick rule is
    theirs: a build that silently fell back would leave JSON Lines of runs slower, and
    this test red."""
    if not native_allowed():
        pytest.skip("KERNELINDEX_NATIVE=0 turns them off")
    assert NATIVE_RULES is not None, "hatch_build.py did not build checks/_runrules.c"
    assert v1alpha1.QUICK_RULES["BenchmarkRun"] is NATIVE_RULES.quick


@needs_native
@pytest.mark.parametrize("days_ago", [-2, 0, 1, 2, 3])
def test_a_recent_run_is_asked_of_the_twin(days_ago: int) -> None:
    """A run dated on or after the cutoff (today less two days) may lie in the future:
    the C rules leave it to the twin, which parses its timestamp; ``quick`` then gives
    the twin's answer (a run dated the day after tomorrow is in the future: False)."""
    assert NATIVE_RULES is not None
    today = datetime.now(timezone.utc).date()
    observed = f"{(today - timedelta(days=days_ago)).isoformat()}T00:00:00Z"
    run = {**_a_common_run, "observedAt": observed}
    recent = days_ago <= 2
    assert (NATIVE_RULES.run_passes(run, v1alpha1._past_cutoff(None)) is None) is recent
    assert NATIVE_RULES.quick(run, None) is v1alpha1.run_spec_passes(run, None) is (days_ago >= 0)
