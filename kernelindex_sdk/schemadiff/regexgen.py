"""Strings that a regular expression matches: candidate values for witnesses.

A witness for a change to a string field is a string one side's ``pattern`` admits
(and perhaps the other's rejects), often of a given length: a slug 65 characters long
when ``maxLength`` went from 128 to 64. The strings are made from Python's own parse of
the pattern, deterministically: a base string (each character class's most typical
member, each repeat at its minimum, the first alternative), then variants that change
one choice each, each stretched to a wanted length by repeating one repeat's unit.

The pattern is read as :func:`~kernelindex_sdk.validating.engine.python_regex` writes it (an
ECMA-262 named group as Python's). Constructs it cannot make a string for
(conditional groups, unknown escapes, ECMA-262 syntax Python does not parse) give no
string; lookarounds are ignored. Every string
is a *candidate*: the caller checks it against the real validator, so a wrong guess
costs a try, never a wrong witness.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

from kernelindex_sdk.validating.engine import python_regex

if sys.version_info >= (3, 11):
    from re import _parser as _sre
else:  # pragma: no cover - Python 3.10 (sre_parse warns as deprecated from 3.11)
    import sre_parse as _sre

__all__ = ["examples"]

#: Characters tried first, in this order, when a class admits them.
_PREFERRED = "a1A_-.0xZ9"
#: Characters a negated class or ``.`` picks from.
_POOL = "a1A_-.x0zZ9 /:@~é"
_MAX_CLASS = 10
_MAX_VARIANTS = 64
#: Longest string made (a pattern demanding more gives none: a witness stays readable).
MAX_LENGTH = 1 << 16


class _Unsupported(Exception):
    pass


def examples(pattern: str, length: int | None = None) -> Iterator[str]:
    """Strings ``pattern`` should match; exactly ``length`` long when it is given."""
    try:
        parsed = _sre.parse(python_regex(pattern))
        base = _Gen({}, None)
        text = base.seq(parsed)
    except Exception:  # re.error, _Unsupported: no string, and no guess either
        return
    variants: list[dict[int, int]] = [{}]
    variants += [{i: j} for i, n in enumerate(base.points) for j in range(1, n)]
    seen: set[str] = set()
    for overrides in variants[:_MAX_VARIANTS]:
        gen = _Gen(overrides, None)
        try:
            text = gen.seq(parsed)
        except _Unsupported:
            continue
        for candidate in _fitted(parsed, overrides, gen, text, length):
            if candidate not in seen:
                seen.add(candidate)
                yield candidate


def _fitted(parsed: Any, overrides: dict[int, int], gen: _Gen, text: str, length: int | None):  # type: ignore[no-untyped-def]
    """``text`` if it has the wanted length, else ``text`` stretched to it."""
    if length is None or len(text) == length:
        yield text
        return
    if length > MAX_LENGTH:
        return
    delta = length - len(text)
    if delta > 0 and not _anchored_at_end(parsed):
        yield text + "a" * delta  # a search matches with anything after the match
    for point, low, high, unit, current in gen.repeats:
        if unit <= 0 or (current + delta) % unit:
            continue
        count = (current + delta) // unit
        if low <= count <= high:
            stretched = _Gen(overrides, (point, count))
            try:
                candidate = stretched.seq(parsed)
            except _Unsupported:
                continue
            if len(candidate) == length:
                yield candidate


class _Gen:
    """One generation: ``overrides`` picks alternative ``j`` at choice point ``i``;
    ``stretch`` repeats one repeat's unit a given number of times."""

    def __init__(self, overrides: dict[int, int], stretch: tuple[int, int] | None) -> None:
        self.overrides = overrides
        self.stretch = stretch
        #: Alternatives at each choice point, in the order met.
        self.points: list[int] = []
        #: (choice point, min, max, unit length, text length) of each repeat met.
        self.repeats: list[tuple[int, int, float, int, int]] = []
        self.groups: dict[int, str] = {}

    def choose(self, alternatives: int) -> tuple[int, int]:
        index = len(self.points)
        self.points.append(alternatives)
        return index, min(self.overrides.get(index, 0), alternatives - 1)

    def seq(self, items: Any) -> str:
        return "".join(self.item(str(op), av) for op, av in items)

    def item(self, op: str, av: Any) -> str:
        if op == "LITERAL":
            return chr(av)
        if op == "NOT_LITERAL":
            return next(c for c in _POOL if ord(c) != av)
        if op == "ANY":
            return "a-x"[self.choose(3)[1]]
        if op == "IN":
            chars = _class_chars(av)
            if not chars:
                raise _Unsupported
            return chars[self.choose(len(chars))[1]]
        if op == "CATEGORY":
            chars = _class_chars([(_category_op(), av)])
            return chars[self.choose(len(chars))[1]]
        if op == "BRANCH":
            branches = av[1]
            return self.seq(branches[self.choose(len(branches))[1]])
        if op == "SUBPATTERN":
            group, sub = av[0], av[-1]
            text = self.seq(sub)
            if group:
                self.groups[group] = text
            return text
        if op == "ATOMIC_GROUP":
            return self.seq(av)
        if op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            return self.repeat(*av)
        if op in ("AT", "ASSERT", "ASSERT_NOT"):
            return ""
        if op == "GROUPREF":
            return self.groups.get(av, "")
        raise _Unsupported(op)

    def repeat(self, low: int, high: int, sub: Any) -> str:
        if low > MAX_LENGTH or (self.stretch is not None and self.stretch[1] > MAX_LENGTH):
            raise _Unsupported("too long")
        top: float = float("inf") if high == _sre.MAXREPEAT else high
        counts = [c for c in (low, low + 1, low + 2) if c <= top]
        point, pick = self.choose(len(counts))
        unit = _Gen({}, None).seq(sub)  # the default unit, to measure and to stretch with
        if self.stretch is not None and self.stretch[0] == point:
            text = unit * self.stretch[1]
        else:
            text = "".join(self.seq(sub) for _ in range(counts[pick]))
        self.repeats.append((point, low, top, len(unit), len(text)))
        return text


def _anchored_at_end(parsed: Any) -> bool:
    items = list(parsed)
    return (
        bool(items)
        and str(items[-1][0]) == "AT"
        and str(items[-1][1]) in ("AT_END", "AT_END_STRING")
    )


def _category_op() -> Any:
    """The opcode of a category inside a class (``\\d`` in ``[\\d_]``)."""
    return _sre.CATEGORY


def _class_chars(items: Any) -> list[str]:
    """Members of a character class, most typical first (at most ten)."""
    negate = any(str(op) == "NEGATE" for op, _ in items)
    tests = [(str(op), av) for op, av in items if str(op) != "NEGATE"]

    def member(char: str) -> bool:
        code = ord(char)
        for op, av in tests:
            if op == "LITERAL" and code == av:
                return True
            if op == "RANGE" and av[0] <= code <= av[1]:
                return True
            if op == "CATEGORY" and _in_category(str(av), char):
                return True
        return False

    if negate:
        return [c for c in _POOL if not member(c)][:_MAX_CLASS]
    found = [c for c in _PREFERRED if member(c)]
    for op, av in tests:
        if op == "LITERAL":
            found.append(chr(av))
        elif op == "RANGE":
            found += [chr(av[0]), chr(av[1]), chr((av[0] + av[1]) // 2)]
        elif op == "CATEGORY":
            found += [c for c in _POOL if _in_category(str(av), c)]
    return list(dict.fromkeys(found))[:_MAX_CLASS]


def _in_category(category: str, char: str) -> bool:
    name = category.removeprefix("CATEGORY_")
    negated = name.startswith("NOT_")
    name = name.removeprefix("NOT_")
    if name == "DIGIT":
        result = char.isdigit()
    elif name == "SPACE":
        result = char.isspace()
    elif name == "WORD":
        result = char.isalnum() or char == "_"
    else:
        result = False
    return result != negated
