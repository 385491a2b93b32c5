"""``compare.history``: series over versions, and change points that know the noise.

Laws: a flat series with realistic noise (each run scattered as its own recorded
spread says, drawn at random) shows no change; a step well beyond the noise is found
exactly where it is, with its direction and ratio (new ÷ old).
"""

from __future__ import annotations

import math
import random

import pytest
from beforeafter_records import resolved
from history_records import series_records
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples

from kernelindex_sdk.compare import history as h


def _points(values: list[float], spread: float, versions: list[str] | None = None) -> list[h.Point]:
    """Points with a p20–p80 of ``value · exp(±0.8416 · spread)`` each."""
    return [
        h.Point(
            versions[i] if versions else f"0.{i}.0",
            f"2025-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}Z",
            v,
            v * math.exp(-0.8416 * spread),
            v * math.exp(0.8416 * spread),
            "quantiles",
            f"sha256:{i:064x}",
        )
        for i, v in enumerate(values)
    ]


def _noisy(seed: int, levels: list[tuple[float, int]], spread: float) -> list[float]:
    rng = random.Random(seed)
    return [level * math.exp(rng.gauss(0.0, spread)) for level, n in levels for _ in range(n)]


@settings(max_examples=examples(200), deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    size=st.integers(2, 80),
    level=st.floats(1e3, 1e9),
    spread=st.sampled_from([0.0005, 0.005, 0.02, 0.08]),
)
def test_a_flat_series_with_realistic_noise_shows_no_change(
    seed: int, size: int, level: float, spread: float
) -> None:
    points = _points(_noisy(seed, [(level, size)], spread), spread)
    assert h.detect(points) == ()


@settings(max_examples=examples(200), deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    before=st.integers(3, 40),
    after=st.integers(3, 40),
    spread=st.sampled_from([0.001, 0.005, 0.01]),
    factor=st.sampled_from([0.5, 0.8, 1.25, 2.0]),
)
def test_a_step_beyond_the_noise_is_found_where_it_is(
    seed: int, before: int, after: int, spread: float, factor: float
) -> None:
    values = _noisy(seed, [(1e5, before), (1e5 * factor, after)], spread)
    (change,) = h.detect(_points(values, spread))
    assert change.index == before
    assert change.version == f"0.{before}.0"
    assert change.direction == (h.SLOWER if factor > 1 else h.FASTER)
    assert change.ratio == pytest.approx(factor, rel=0.05)


def test_long_series_are_segmented_too() -> None:
    values = _noisy(7, [(1e5, 500), (1.3e5, 300)], 0.01)
    (change,) = h.detect(_points(values, 0.01))
    assert change.index == 500 and change.direction == h.SLOWER
    assert h.detect(_points(_noisy(8, [(1e5, 900)], 0.01), 0.01)) == ()


def test_a_change_below_the_threshold_is_not_one() -> None:
    values = _noisy(3, [(1e5, 30), (1.03e5, 30)], 0.001)
    assert h.detect(_points(values, 0.001)) == ()
    (change,) = h.detect(_points(values, 0.001), threshold=0.01)
    assert change.index == 30


def test_series_from_runs_keyed_ordered_and_gated() -> None:
    # Versions given out of order: the series orders them naturally (0.10 after 0.9).
    values = [100_000] * 10 + [130_000, 131_000]
    runs = resolved(reversed(series_records(values, 1_000)))
    found = h.history(runs)
    (series,) = found.series
    assert series.key["kernel"] == "geglu" and series.key["implementation"] == "liger"
    assert [p.version for p in series.points][-3:] == ["0.9.0", "0.10.0", "0.11.0"]
    (change,) = series.changes
    assert (change.version, change.direction) == ("0.10.0", h.SLOWER)
    assert change.ratio == pytest.approx(1.305, rel=0.01)
    # The newest version is not where it changed (0.10.0 was): no gate.
    assert series.newest_change is None and found.worse_now() == ()
    as_json = found.to_json()
    assert as_json["series"][0]["changes"][0]["at"]["version"] == "0.10.0"
    assert set(as_json["series"][0]["key"]) == set(h.KEY_FIELDS)


def test_the_newest_version_changing_for_the_worse_is_the_gate() -> None:
    values = [100_000] * 8 + [150_000] * 3
    versions = [f"0.{i}.0" for i in range(8)] + ["0.8.0"] * 3
    runs = resolved(series_records(values, 1_000, versions=versions))
    found = h.history(runs)
    (series,) = found.series
    assert series.newest_change is not None and series.newest_change.index == 8
    assert found.worse_now() == (series,)


def test_runs_that_did_not_pass_are_left_out() -> None:
    runs = resolved(series_records([100_000, 100_000], 1_000, status="oom"))
    assert h.history(runs).series == ()
