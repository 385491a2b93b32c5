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
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from kernelindex_sdk.base.pointers import escape_token

__all__ = ["pointer_positions"]

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
