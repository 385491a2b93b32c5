"""Where a JSON pointer sits in a document's text: its line and column.

Validation locates a problem in a ``.json`` file by pointer only: the fast paths never
track positions (that would slow every valid file). A reporter that must put a
problem on a line — GitHub's annotations sit on ``line=``/``col=`` of the file in a
pull request — asks here, and only for files that have problems, so the valid path
pays nothing.

:func:`pointer_positions` walks the text once, iteratively (no recursion, any
depth), descending only into the arrays and objects on the way to a wanted pointer
and skipping every other one by its brackets; it stops as soon as every pointer is
found. An object member is placed at its key (where a reader looks for it), an array
element or the root at its value. A pointer that names nothing in the text (a
required member that is missing) is placed at the nearest enclosing value that
exists. Lines are counted by ``\\n`` and columns are 1-based code points, as
:mod:`kernelindex_sdk.reading.intake` counts them.

:func:`locate` and :class:`Locator` give problems the line and column they lack, so
that every output format — and every command that reports its input's problems —
names the same place; a :class:`Locator` streams them, holding a file's problems only
until the file is done.
"""

from __future__ import annotations

import functools
import json
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from kernelindex_sdk.base.pointers import escape_token
from kernelindex_sdk.errors import IntakeError, Problem
from kernelindex_sdk.reading.sources import MAX_DOCUMENT_BYTES

__all__ = ["Locator", "locate", "pointer_positions"]

_WS = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
#: Strings (skipped whole, so brackets inside them do not count) and brackets.
_STRUCTURE = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
_SCALAR = re.compile(r"[^,\]}\s]*")


def _ancestors(pointer: str) -> Iterable[str]:
    """``/a/b`` → ``""``, ``/a`` (every proper prefix that is itself a pointer)."""
    yield ""
    end = pointer.find("/", 1)
    while end != -1:
        yield pointer[:end]
        end = pointer.find("/", end + 1)


def _value_end(text: str, pos: int) -> int:
    """The position just after the value starting at ``pos``."""
    char = text[pos]
    if char == '"':
        match = _STRING.match(text, pos)
        return match.end() if match else len(text)
    if char in "[{":
        depth = 0
        for match in _STRUCTURE.finditer(text, pos):
            token = match.group()
            if token in ("[", "{"):
                depth += 1
            elif token in ("]", "}"):
                depth -= 1
                if depth == 0:
                    return match.end()
        return len(text)
    return _SCALAR.match(text, pos).end()  # type: ignore[union-attr]  # always matches


def _offsets(text: str, pointers: Iterable[str]) -> dict[str, int]:
    """Code-point offset of each pointer found in ``text`` (which is valid JSON)."""
    targets = set(pointers)
    inside = {ancestor for pointer in targets for ancestor in _ancestors(pointer)}
    found: dict[str, int] = {}
    n = len(text)
    pos = _WS.match(text, 0).end()  # type: ignore[union-attr]
    pointer, at = "", pos
    #: Open containers on the way: [is an object, its pointer, the current index].
    stack: list[list[object]] = []
    while pos < n:
        # ---- a value at pos, named ``pointer``, placed at ``at``
        if pointer in targets:
            found[pointer] = at
            if len(found) == len(targets):
                break
        char = text[pos]
        if char in "[{" and pointer in inside:
            is_object = char == "{"
            pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
            if pos < n and text[pos] == ("}" if is_object else "]"):
                pos += 1
            else:
                stack.append([is_object, pointer, 0])
                pointer, at, pos = _child(text, pos, is_object, pointer, 0)
                continue
        else:
            pos = _value_end(text, pos)
        # ---- after a value: the next sibling, or close containers
        while stack:
            pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
            if pos >= n:
                return found
            frame = stack[-1]
            if text[pos] == ",":
                pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
                index = int(frame[2]) + 1  # type: ignore[call-overload]
                frame[2] = index
                pointer, at, pos = _child(text, pos, bool(frame[0]), str(frame[1]), index)
                break
            stack.pop()
            pos += 1
        else:
            break
    return found


def _child(text: str, pos: int, is_object: bool, parent: str, index: int) -> tuple[str, int, int]:
    """A container's child at ``pos``: (its pointer, where it is placed, its value's start)."""
    if not is_object:
        return f"{parent}/{index}", pos, pos
    key, end = json.decoder.scanstring(text, pos + 1, True)  # type: ignore[attr-defined]
    colon = _WS.match(text, end).end()  # type: ignore[union-attr]
    value = _WS.match(text, colon + 1).end()  # type: ignore[union-attr]
    return f"{parent}/{escape_token(key)}", pos, value


def pointer_positions(text: str, pointers: Iterable[str]) -> dict[str, tuple[int, int]]:
    """1-based (line, column) of each of ``pointers`` in the JSON ``text``.

    ``text`` is a document that strict intake has read (valid JSON). A pointer not in
    it gets the position of its nearest enclosing value; every pointer given gets one
    unless the text holds no value at all.
    """
    wanted = set(pointers)
    offsets = _offsets(text, {a for p in wanted for a in (p, *_ancestors(p))})
    places: dict[str, int] = {}
    for pointer in wanted:
        place = offsets.get(pointer)
        if place is None:  # not in the text: its nearest enclosing value
            enclosing = [offsets[a] for a in _ancestors(pointer) if a in offsets]
            place = enclosing[-1] if enclosing else None
        if place is not None:
            places[pointer] = place
    # Lines counted once over the text, in order of position (not once per pointer).
    positions: dict[str, tuple[int, int]] = {}
    line, counted = 1, 0
    for pointer, place in sorted(places.items(), key=lambda item: item[1]):
        line += text.count("\n", counted, place)
        counted = place
        positions[pointer] = (line, place - text.rfind("\n", 0, place))
    return positions


def _positions(source: str, pointers: Iterable[str]) -> dict[str, tuple[int, int]]:
    """Line and column of each pointer in the file ``source``, or none when it cannot be
    read again (standard input, a file gone since): the annotation then has no line."""
    if source in ("<stdin>", "<input>"):
        return {}
    try:
        found = os.stat(source)
        if not stat.S_ISREG(found.st_mode) or found.st_size > MAX_DOCUMENT_BYTES:
            return {}  # a FIFO or a device, or more than a document may hold: never again
        text = Path(source).read_text(encoding="utf-8")
    except (OSError, ValueError):
        return {}
    return pointer_positions(text, pointers)


def _unplaced(problem: Problem, read: bool) -> bool:
    """A problem in a ``.json`` file that was ``read``, located by pointer only (a
    record, array or bundle: validation tracks no positions on its fast path). What
    could not be read (``read`` false, or a problem of intake) is never read again to
    place its problem; nor is anything but a ``.json`` file (a store, standard input)."""
    return (
        read
        and problem.line is None
        and (problem.source or "").lower().endswith(".json")
        and problem.code not in _unread_codes()
    )


@functools.cache
def _unread_codes() -> frozenset[str]:
    """The codes of every problem of input that could not be read (an IntakeError's)."""
    codes, kinds = set(), [IntakeError]
    while kinds:
        kind = kinds.pop()
        codes.add(kind.code)
        kinds.extend(kind.__subclasses__())
    return frozenset(codes)


def _placed(problems: list[Problem]) -> list[Problem]:
    """``problems`` (all of one file) with the line and column of each pointer, read
    off the file once more; as they were where it cannot be read again."""
    positions = _positions(problems[0].source or "", {p.pointer for p in problems})
    placed = []
    for problem in problems:
        found = positions.get(problem.pointer)
        if found is not None:
            problem = replace(problem, line=found[0], column=found[1])
        placed.append(problem)
    return placed


def locate(problems: Iterable[Problem], read: bool = True) -> list[Problem]:
    """``problems`` in their order, each with the line and column it is known at: each
    file whose problems lack them is read once more, and only those files (``read``:
    the problems are of documents that were read, not of input that could not be)."""
    given = list(problems)
    held: dict[str, list[Problem]] = {}
    for problem in given:
        if _unplaced(problem, read):
            held.setdefault(problem.source or "", []).append(problem)
    placed = {source: iter(_placed(found)) for source, found in held.items()}
    return [
        next(placed[problem.source or ""]) if _unplaced(problem, read) else problem
        for problem in given
    ]


class Locator:
    """Streams problems with their line and column: a file's unplaced problems are
    held until the next file's arrive (problems come file by file), then placed."""

    def __init__(self) -> None:
        self._pending: list[Problem] = []

    def add(self, problem: Problem, read: bool = True) -> list[Problem]:
        if _unplaced(problem, read):
            ready = []
            if self._pending and self._pending[0].source != problem.source:
                ready = self.flush()
            self._pending.append(problem)
            return ready
        return [*self.flush(), problem]

    def flush(self) -> list[Problem]:
        if not self._pending:
            return []
        pending, self._pending = self._pending, []
        return _placed(pending)
