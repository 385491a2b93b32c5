"""History over a trusted store, its points fetched and ordered by the store's SQL.

A store's ``run_facts`` hold every column a point needs (value, p20, p80, stddev,
samples, flags, ``observedAt``), so the store need not give its runs one by one:

1. :func:`open_store` reads the records runs reference (few) and, in SQL, the
   distinct *combinations* of passed runs — workload, protocol, environment,
   implementation, metric and statistic — and resolves one representative run of each
   (:class:`~kernelindex_sdk.compare.runs.Resolver`, as ``compare`` resolves a run). The
   filters select among these as among any runs (every run of a combination has the
   kernel, pass, GPU, metric and workload parameters of its representative).
2. :meth:`StoreHistory.history` has one query make the points of the selected
   combinations, as :func:`~kernelindex_sdk.compare.history.point_of` makes them (the
   runs of a version and UTC day; each run's noise interval read as
   :func:`~kernelindex_sdk.compare.noise.noise_of` reads it) and in its order, so that
   only points, not runs, come to Python; then it finds each series' change points.

The same series, points and changes as :func:`~kernelindex_sdk.compare.history.history`
over the store's runs (``tests/test_history_store.py`` checks it). Only a store whose
facts its reader may trust (:func:`~kernelindex_sdk.reading.kistore.facts_snapshot`);
:func:`open_store` is None for any other, which is then read record by record.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final

import attrs

from kernelindex_sdk.compare.beforeafter import DEFAULT_THRESHOLD, lineage
from kernelindex_sdk.compare.grouping import natural_order
from kernelindex_sdk.compare.history import (
    DAY_S,
    History,
    Point,
    make_series,
    series_key,
    series_order,
)
from kernelindex_sdk.compare.records import RecordIndex
from kernelindex_sdk.compare.runs import ResolvedRun, Resolver
from kernelindex_sdk.reading.kistore import (
    RunFacts,
    RunShape,
    StoreError,
    connect,
    facts_snapshot,
)

#: The columns a combination is told apart by.
_COMBINATION: Final = (
    "workload_digest", "protocol_digest", "environment_digest", "implementation_digest",
    "metric", "statistic",
)  # fmt: skip

#: A point's noise interval, as noise.noise_of reads it off the run (kind, low, high).
_NOISE: Final = """
    CASE WHEN f.samples = 1 THEN 'none'
         WHEN f.p20 IS NOT NULL AND f.p80 IS NOT NULL THEN
              CASE WHEN coalesce(list_contains(f.quality_flags, 'collapsed_quantiles'), false)
                        OR f.p20 >= f.p80
                   THEN 'none' ELSE 'quantiles' END
         WHEN coalesce(list_contains(f.quality_flags, 'collapsed_quantiles'), false) THEN 'none'
         WHEN f.stddev > 0 THEN 'stddev' ELSE 'none' END"""


@attrs.frozen
class StoreHistory:
    """A trusted store, opened for :meth:`history`: one representative run per
    combination of passed runs (:attr:`runs`), for the filters to choose from."""

    path: str
    #: The last add of the snapshot read (runs added later are not seen).
    last_add: int
    runs: tuple[ResolvedRun, ...]
    resolver: Resolver
    #: How many passed runs the store holds.
    total: int
    on_wait: Callable[[str], None] | None = None

    def history(
        self, chosen: Iterable[ResolvedRun], *, threshold: float = DEFAULT_THRESHOLD
    ) -> History:
        """The history of every run whose combination's representative is ``chosen``."""
        places: dict[tuple[object, ...], int] = {}
        keys: list[dict[str, str]] = []
        combos: list[tuple[Any, ...]] = []
        versions = sorted(
            {_version(run) for run in chosen}, key=lambda v: (v is not None, natural_order(v or ""))
        )
        rank = {version: i for i, version in enumerate(versions)}
        for run in chosen:
            place = (
                run.workload_digest,
                run.protocol_digest,
                run.hardware,
                run.metric,
                lineage(run),
            )
            if place not in places:
                places[place] = len(keys)
                keys.append(series_key(run))
            combos.append((*_combination(run), places[place], rank[_version(run)]))
        points: list[list[Point]] = [[] for _ in keys]
        version_of = {i: v for v, i in rank.items()}
        for row in self._points(combos):
            series, vrank, *fields = row
            points[series].append(Point(version_of[vrank], *fields))
        found = [
            make_series(key, ps, threshold=threshold) for key, ps in zip(keys, points, strict=True)
        ]
        return History(tuple(sorted(found, key=series_order)), threshold=threshold)

    def _points(self, combos: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """(series, version rank, observedAt, value, low, high, noise, digest, statistic,
        runs) of every point of ``combos``' passed runs (:func:`~kernelindex_sdk.compare.
        history.point_of` in SQL), in series order, then point order."""
        if not combos:
            return []
        columns = list(zip(*combos, strict=True))
        types = ["VARCHAR"] * len(_COMBINATION) + ["BIGINT", "BIGINT"]
        names = [*_COMBINATION, "series", "vrank"]
        chosen = ", ".join(f"unnest(?::{t}[]) AS {n}" for t, n in zip(types, names, strict=True))
        join = " AND ".join(f"f.{name} = c.{name}" for name in _COMBINATION)
        # The newest run by (time, digest); an undated run (ts NULL) is older than any.
        newest = "{'d': ts IS NOT NULL, 't': ts, 'g': digest}"
        sql = f"""
            WITH c AS (SELECT {chosen}),
            r AS (
                SELECT c.series, c.vrank, f.observed_at, f.value, f.p20, f.p80, f.stddev,
                       f.digest, f.statistic, {_NOISE} AS kind,
                       CASE WHEN coalesce(list_contains(f.quality_flags, 'observed_at_unknown'),
                                          false) THEN NULL
                            ELSE TRY_CAST(f.observed_at AS TIMESTAMPTZ) END AS ts
                FROM run_facts f JOIN c ON {join}
                WHERE f.status = 'passed' AND f.value > 0 AND f.add_id <= ?),
            n AS (
                SELECT *,
                       CASE kind WHEN 'quantiles' THEN p20
                                 WHEN 'stddev' THEN greatest(value - stddev, 0.0) END AS low,
                       CASE kind WHEN 'quantiles' THEN p80 WHEN 'stddev' THEN value + stddev
                                 END AS high,
                       floor(epoch(ts) / {DAY_S})::BIGINT AS day
                FROM r)
            SELECT series, vrank, newest.o, v, lo, hi, coalesce(k, 'none'), newest.g,
                   newest.s, runs
            FROM (
                SELECT series, vrank, day,
                       arg_max({{'o': observed_at, 'g': digest, 's': statistic}}, {newest})
                           AS newest,
                       quantile_disc(value, 0.5) AS v,
                       quantile_disc(low, 0.5) FILTER (WHERE kind <> 'none') AS lo,
                       quantile_disc(high, 0.5) FILTER (WHERE kind <> 'none') AS hi,
                       arg_max(kind, {newest}) FILTER (WHERE kind <> 'none') AS k,
                       count(*) AS runs
                FROM n GROUP BY series, vrank, day)
            ORDER BY series, vrank, day NULLS FIRST
        """
        try:
            with connect(self.path, read_only=True, on_wait=self.on_wait) as connection:
                rows: list[tuple[Any, ...]] = connection.execute(
                    sql, [list(column) for column in columns] + [self.last_add]
                ).fetchall()
        except StoreError:
            return []
        return rows


def _version(run: ResolvedRun) -> str | None:
    return run.implementation.version if run.implementation else None


def _combination(run: ResolvedRun) -> tuple[str | None, ...]:
    return (
        run.workload_digest,
        run.protocol_digest,
        run.environment_digest,
        run.implementation_digest,
        run.metric,
        run.statistic,
    )


def open_store(
    path: str, *, trusted_by: str, on_wait: Callable[[str], None] | None = None
) -> StoreHistory | None:
    """The store at ``path`` opened for history (the module docstring says how); None
    where its facts may not be trusted or it cannot be read (read it as records)."""
    try:
        with connect(path, read_only=True, on_wait=on_wait) as connection:
            last = facts_snapshot(connection, trusted_by)
            if last is None:
                return None
            last_add = _last_add(connection, last)
            stored = connection.execute(
                "SELECT digest, record FROM records"
                " WHERE kind <> 'BenchmarkRun' AND seq <= ? ORDER BY seq",
                [last],
            ).fetchall()
            combos = connection.execute(
                f"SELECT {', '.join(_COMBINATION)}, count(*) FROM run_facts"
                " WHERE status = 'passed' AND value > 0 AND add_id <= ?"
                f" GROUP BY ALL ORDER BY {', '.join(_COMBINATION)}",
                [last_add],
            ).fetchall()
    except StoreError:
        return None
    from orjson import loads

    index = RecordIndex(records={digest: loads(text) for digest, text in stored})
    resolver = Resolver(index)
    runs = tuple(resolver.resolve(_representative(combo, path)) for combo in combos)
    return StoreHistory(path, last_add, runs, resolver, sum(c[-1] for c in combos), on_wait)


def _last_add(connection: Any, last: int) -> int:
    row = connection.execute("SELECT max(add_id) FROM records WHERE seq <= ?", [last]).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def _representative(combo: tuple[Any, ...], path: str) -> RunFacts:
    """A stand-in run of one combination: what it shares, resolved as a run would be."""
    workload, protocol, environment, implementation, metric, statistic, _ = combo
    shape = RunShape(
        path, "", "passed", None, metric, statistic, (), None,
        workload, protocol, environment, implementation,
    )  # fmt: skip
    return RunFacts("", None, "", 1.0, None, None, None, None, shape)
