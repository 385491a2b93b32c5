"""``kernelindex store query``: read-only SQL over the store's documented views.

Read-only twice over: the statement must be one ``SELECT`` (DuckDB parses it; an
``INSERT``, ``COPY``, ``ATTACH``, ``PRAGMA`` or a second statement is refused before
anything runs), and it runs on a connection opened read-only with DuckDB's external
access switched off, so not even a table function can write or read another file.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kernelindex_sdk.reading.kistore import StoreError, connect, require_duckdb

__all__ = ["QueryRefused", "QueryResult", "QueryTimedOut", "query"]


class QueryRefused(StoreError):
    """The SQL is not one read-only ``SELECT``, or DuckDB refused it."""


class QueryTimedOut(QueryRefused):
    """The statement ran past the time it was given, and was interrupted."""


@dataclass(frozen=True, slots=True)
class QueryResult:
    """Column names and rows, as DuckDB returned them."""

    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]


def query(
    store: str,
    sql: str,
    *,
    on_wait: Callable[[str], None] | None = None,
    wait_s: float = 600.0,
    timeout_s: float | None = None,
) -> QueryResult:
    """Run one ``SELECT`` over ``store`` and return every row (the lock is released
    before this returns, so a long read of the result does not hold up an ``add``).
    ``timeout_s``: the statement is interrupted after that many seconds, a
    :class:`QueryTimedOut` saying so (a server bounds its callers' queries)."""
    duckdb = require_duckdb()
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as error:
        raise QueryRefused(f"not valid SQL: {error}") from None
    if len(statements) != 1:
        raise QueryRefused(f"give exactly one SELECT statement, not {len(statements)} statements")
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        raise QueryRefused(
            f"only SELECT is allowed: the store is read-only here, and this is {kind.name}"
        )
    with connect(
        store,
        read_only=True,
        on_wait=on_wait,
        wait_s=wait_s,
        config={"enable_external_access": False},
    ) as connection:
        timer = None
        if timeout_s is not None:
            timer = threading.Timer(timeout_s, connection.interrupt)
            timer.start()
        try:
            cursor = connection.execute(sql)
            description = cursor.description or ()
            rows = cursor.fetchall()
        except duckdb.Error as error:
            if timer is not None and not timer.is_alive():
                raise QueryTimedOut(f"took longer than {timeout_s:g} s; stopped") from None
            text = str(error).strip()
            raise QueryRefused(text.splitlines()[0] if text else repr(error)) from None
        finally:
            if timer is not None:
                timer.cancel()
    columns = tuple(d[0] for d in description)
    # JSON columns (parameters, spec, record) come back as text: give them as values.
    decode = [i for i, d in enumerate(description) if str(d[1]).upper() == "JSON"]
    if decode:
        rows = [_decoded(row, decode) for row in rows]
    return QueryResult(columns, rows)


def _decoded(row: tuple[Any, ...], columns: list[int]) -> tuple[Any, ...]:
    values = list(row)
    for i in columns:
        if isinstance(values[i], str):
            values[i] = json.loads(values[i])
    return tuple(values)
