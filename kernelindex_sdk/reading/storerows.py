"""A store's rows read as input: every value checked before it is used.

A store is input like any file: its tables can be edited by hand (docs/store.md,
"Trusting a store's checks"), damaged, or written by other code. Each row of
``records`` that :mod:`kernelindex_sdk.reading.kistore` turns back into a document is
checked here first — its columns present and of their types, a bundle's ``members``
a JSON list of ``[name, digest]`` pairs, the texts JSON — and a row that fails is one
problem naming the store, the row and the place in it, as a JSON pointer into the
store's tables (``/records/<seq>/<column>[/...]``), and the record (its kind, name,
digest and the place ``add`` read it from)::

    runs.kistore: /records/17/members: not JSON: unexpected character ... (the
    BenchmarkRun 'two-hf', sha256:578a..., added from huggingface.json)

Such a row could not be read, as a file that is not JSON could not: the problem is
an :class:`~kernelindex_sdk.errors.IntakeError` (exit 2 where a command reports
unreadable input), and the other rows are read on. A row that reads as JSON is a
document like any file's, checked by the reader as files are.
"""

from __future__ import annotations

from typing import Any, Final, NamedTuple

from orjson import loads as orjson_loads

from kernelindex_sdk.base.escaping import short_repr
from kernelindex_sdk.base.pointers import escape_token
from kernelindex_sdk.base.recordformat import json_type
from kernelindex_sdk.errors import IntakeError, UnreadableFile

__all__ = ["COLUMNS", "Members", "StoredRow", "checked_row", "relocated", "row_problem"]

#: The columns of ``records`` a reader fetches, in :class:`StoredRow`'s order.
COLUMNS: Final = "record, members, origin, origin_line, digest, seq, kind, name"

#: A bundle's members as stored: (member name, digest) in the bundle's order.
Members = list[tuple[str, str]]


class StoredRow(NamedTuple):
    """One row of ``records``, its values of the types the reader relies on."""

    record: str
    members: str | None
    origin: str
    line: int | None
    digest: str
    seq: int
    kind: Any
    name: Any


def _where(row: tuple[Any, ...]) -> str:
    """The record a row holds, as far as its values say: kind, name, digest, origin."""
    _, _, origin, line, digest, _, kind, name = row
    what = [f"the {kind}" if isinstance(kind, str) else "the record"]
    if isinstance(name, str):
        what.append(short_repr(name))
    parts = [" ".join(what)]
    if isinstance(digest, str):
        parts.append(digest)
    if isinstance(origin, str):
        at = f":{line}" if isinstance(line, int) and not isinstance(line, bool) else ""
        parts.append(f"added from {origin}{at}")
    return ", ".join(parts)


def row_problem(
    store: str,
    row: tuple[Any, ...],
    column: str,
    message: str,
    *,
    at: tuple[str | int, ...] = (),
    kind: type[IntakeError] = UnreadableFile,
) -> IntakeError:
    """The one problem of a row that cannot be read: ``column`` of the row, and ``at``
    within its JSON value."""
    pointer = "/records/" + "/".join(escape_token(t) for t in (row[5], column, *at))
    return kind(f"{message} ({_where(row)})", source=store, pointer=pointer)


def relocated(
    store: str,
    row: tuple[Any, ...],
    column: str,
    error: IntakeError,
    *,
    what: str = "",
    at: tuple[str | int, ...] = (),
) -> IntakeError:
    """An intake error of a stored text (located in the text, under the record's
    origin) as a problem of the row, of the same kind: the text is the store's."""
    problem = error.problem
    if problem.column is not None:
        place = f" (line {problem.line}, column {problem.column} of the stored text)"
    else:
        place = ""
    pointer_in_text = f" at {problem.pointer}" if problem.pointer else ""
    message = f"{what}{problem.message}{pointer_in_text}{place}"
    return row_problem(store, row, column, message, at=at, kind=type(error))


def checked_row(
    values: tuple[Any, ...], store: str
) -> tuple[StoredRow, Members | None] | IntakeError:
    """A fetched row (:data:`COLUMNS`) with its members parsed, or why it cannot be read."""
    record, members, origin, line, digest, _, _, _ = values
    for column, value, wanted in (
        ("record", record, str),
        ("origin", origin, str),
        ("digest", digest, str),
    ):
        if not isinstance(value, wanted):
            return row_problem(store, values, column, _missing_or(value, "a string"))
    if line is not None and (isinstance(line, bool) or not isinstance(line, int) or line < 1):
        return row_problem(store, values, "origin_line", f"expected a line number, found {line!r}")
    if members is None:
        return StoredRow(*values), None
    if not isinstance(members, str):
        return row_problem(store, values, "members", _missing_or(members, "a string"))
    parsed = _members(members, store, values)
    if isinstance(parsed, IntakeError):
        return parsed
    return StoredRow(*values), parsed


def _a(noun: str) -> str:
    return f"an {noun}" if noun[:1] in "aeiou" else f"a {noun}"


def _missing_or(value: Any, wanted: str) -> str:
    if value is None:
        return "missing (NULL)"
    return f"expected {wanted}, found {short_repr(value)}"


def _members(text: str, store: str, row: tuple[Any, ...]) -> Members | IntakeError:
    """A bundle's stored members: a JSON list of ``[name, digest]`` pairs, the names
    distinct and none of them ``run`` (the run itself)."""
    try:
        value = orjson_loads(text)
    except ValueError as error:
        detail = str(error).splitlines()[0] if str(error) else "not JSON"
        return row_problem(store, row, "members", f"not JSON: {detail}")
    if not isinstance(value, list) or not value:
        found = "an empty list" if isinstance(value, list) else _a(json_type(value))
        return row_problem(
            store, row, "members", f"expected a list of [name, digest] pairs, found {found}"
        )
    pairs: Members = []
    seen: set[str] = {"run"}
    for index, pair in enumerate(value):
        if not isinstance(pair, list) or len(pair) != 2:
            return row_problem(
                store,
                row,
                "members",
                f"expected a [name, digest] pair, found {short_repr(pair)}",
                at=(index,),
            )
        name, digest = pair
        if not isinstance(name, str) or name in seen:
            why = (
                f"the member name {name!r} is given twice (or is the run's)"
                if isinstance(name, str)
                else f"expected a member name (a string), found {short_repr(name)}"
            )
            return row_problem(store, row, "members", why, at=(index, 0))
        if not isinstance(digest, str):
            return row_problem(
                store,
                row,
                "members",
                f"expected a digest (a string), found {short_repr(digest)}",
                at=(index, 1),
            )
        seen.add(name)
        pairs.append((name, digest))
    return pairs
