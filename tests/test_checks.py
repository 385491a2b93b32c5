"""Semantic rules of v1alpha1 that the schemas cannot express."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from profiles import examples

from kernelindex_sdk.checks import for_version
from kernelindex_sdk.checks.v1alpha1 import CLOCK_SKEW, check_run_spec
from kernelindex_sdk.validation import ValidationSession
from kernelindex_sdk.wire import parse_timestamp

NOW = datetime(2026, 11, 30, tzinfo=timezone.utc)


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
