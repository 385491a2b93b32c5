"""Runs by query, and ``compare``'s answers, from the live store.

``GET /runs`` is one read-only ``SELECT`` over the store's ``runs`` view
(:func:`kernelindex_sdk.store.querying.query`: one statement, a read-only connection
with DuckDB's external access off), filtered by the query's parameters — values bound
as literals, ``where`` an SQL condition of the caller's, which that check confines to
reading the store — and paged.

``GET /compare`` and ``GET /history`` run ``kernelindex compare`` and ``kernelindex
history`` themselves over the store, each in its own process (bounded in time, killed
past it), so their JSON is the command's, byte for byte.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from kernelindex_sdk.base.metrics import METRIC_ALIASES
from kernelindex_sdk.store.querying import QueryRefused, QueryTimedOut, query

__all__ = ["FILTERS", "QueryRefused", "QueryTimedOut", "answer_command", "runs_page"]

#: Query parameters of ``/runs`` and the column each filters (equality).
FILTERS = {"kernel": "kernel", "gpu": "gpu", "pass": "pass", "metric": "metric"}
#: ``/compare``'s and ``/history``'s parameters → the command's options (repeatable
#: ones repeat; ``where`` is the commands' ``--where KEY=VALUE``).
COMMAND_OPTIONS = {
    "compare": {
        "kernel": "--kernel",
        "gpu": "--gpu",
        "pass": "--pass",
        "metric": "--metric",
        "where": "--where",
        "baseline": "--baseline",
    },
    "history": {
        "kernel": "--kernel",
        "gpu": "--gpu",
        "pass": "--pass",
        "metric": "--metric",
        "where": "--where",
        "threshold": "--threshold",
        "fail_on": "--fail-on",
    },
}
#: Flags each command takes as ``name=1``.
COMMAND_FLAGS = {"compare": {"summary": "--summary"}, "history": {"points": "--points"}}


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def runs_page(
    store: str, params: Mapping[str, list[str]], limit: int, offset: int, seconds: float
) -> dict[str, Any]:
    """One page of runs matching ``params``: ``{"runs": [...], "next": offset|None}``.
    Raises :class:`QueryRefused` for a ``where`` that is not a readable condition, or
    a query that runs past ``seconds`` (interrupted: the store is free again)."""
    conditions = []
    for name, column in FILTERS.items():
        values = params.get(name, [])
        if name == "metric":
            values = [METRIC_ALIASES.get(v, v) for v in values]
        if values:
            listed = ", ".join(_literal(v) for v in values)
            conditions.append(f'"{column}" IN ({listed})')
    for where in params.get("where", []):
        conditions.append(f"({where}\n)")
    sql = "SELECT * FROM runs"
    if conditions:
        sql += " WHERE " + " AND ".join(conditions)
    sql += f" ORDER BY observed_at, digest LIMIT {limit + 1} OFFSET {offset}"
    result = query(store, sql, wait_s=seconds, timeout_s=seconds)
    rows = [_jsonable(dict(zip(result.columns, row, strict=True))) for row in result.rows[:limit]]
    more = len(result.rows) > limit
    return {"runs": rows, "offset": offset, "next": offset + limit if more else None}


def _jsonable(row: dict[str, Any]) -> dict[str, Any]:
    for key, value in row.items():
        if not isinstance(value, (str, int, float, bool, list, dict, type(None))):
            row[key] = value.isoformat() if hasattr(value, "isoformat") else str(value)
    return row


def answer_command(name: str, store: str, params: Mapping[str, list[str]]) -> list[str]:
    """``kernelindex NAME STORE --format json`` with the options ``params`` ask for
    (``name``: ``compare`` or ``history``)."""
    command = [sys.executable, "-m", "kernelindex_sdk.cli.main", name, store]
    for key, option in COMMAND_OPTIONS[name].items():
        for value in params.get(key, []):
            command += [option, value]
    for key, flag in COMMAND_FLAGS[name].items():
        if params.get(key, ["0"])[-1] not in ("", "0", "false"):
            command.append(flag)
    return [*command, "--format", "json"]
