"""One line of printable text from anything an input may hold.

Names, titles, pointers, messages and file names come from input the SDK does not
control. Written to a terminal or a log as they are, a ``\\n`` in a record's name
forges a report line, an ESC sequence rewrites the screen, and a bidirectional
override makes text read backwards. Every line the SDK and its commands print goes
through :func:`one_line`, so one problem or one record is always exactly one line.

What is escaped, and how:

* ``\\n``, ``\\r``, ``\\t`` as those two-character escapes;
* the other C0 controls, DEL and the C1 controls as ``\\xNN``;
* a lone surrogate U+DC80..U+DCFF — how Python spells a byte of a file name that is
  not UTF-8 (``surrogateescape``) — as ``\\xNN`` of that byte; other surrogates
  as ``\\uXXXX``;
* the line and paragraph separators U+2028/U+2029 and the bidirectional controls
  (U+061C, U+200E/F, U+202A..U+202E, U+2066..U+2069) as ``\\uXXXX``.

A backslash itself is left as it is, so messages quoting regular expressions stay
readable; an escape is therefore recognisable but not always reversible.

A message that quotes a value quotes it short (:func:`short_repr`, :func:`abbreviated`,
:func:`int_text`): never a whole record, never deeper than a few levels (a cyclic or
100,000-deep value), and never an integer past Python's int-to-str limit, which
``str`` would refuse with a ``ValueError`` of its own.
"""

from __future__ import annotations

import functools
import re
import reprlib
from typing import Any

#: Every character :func:`one_line` escapes.
_UNSAFE_CLASS = (
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


@functools.cache
def _unsafe() -> re.Pattern[str]:
    """The compiled class, on first need: compiling it is a visible part of a
    ``validate`` start-up, and most lines are printable ASCII."""
    return re.compile(_UNSAFE_CLASS)


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code <= 0x9F:
        return f"\\x{code:02x}"
    if 0xDC80 <= code <= 0xDCFF:  # a byte that surrogateescape smuggled in
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}"


def one_line(text: str) -> str:
    """``text`` with every character that could break or disguise a line escaped."""
    if text.isascii() and text.isprintable():
        return text  # printable ASCII holds none of them
    unsafe = _unsafe()
    if unsafe.search(text) is None:
        return text
    return unsafe.sub(_escape, text)


def abbreviated(text: str, limit: int = 40) -> str:
    """``text``, or its start and end around ``…`` when longer than ``limit``."""
    return text if len(text) <= limit else text[: limit - 11] + "…" + text[-10:]


#: Integers up to this many bits (603 decimal digits) are written out in messages:
#: below Python's int-to-str limit at its lowest setting (640 digits).
_INT_TEXT_BITS = 2000


def int_text(value: int) -> str:
    """An integer for a message: its digits (:func:`abbreviated`), or its magnitude
    (``≥2**16609``, ``≤-2**16609``) for one whose digits Python would refuse to
    compute (the int-to-str limit)."""
    bits = value.bit_length()
    if bits <= _INT_TEXT_BITS:
        return abbreviated(str(value))
    return f"≥2**{bits - 1}" if value > 0 else f"≤-2**{bits - 1}"


class _ShortRepr(reprlib.Repr):
    """:class:`reprlib.Repr` (a few levels, a few items) that also survives integers
    past the int-to-str limit, where reprlib calls ``repr`` and fails."""

    def repr_int(self, x: int, level: int) -> str:
        return int_text(x)


_short = _ShortRepr()
_short.maxstring = 60
_short.maxother = 60
_short.maxdict = 3
_short.maxlist = 3


def short_repr(value: Any) -> str:
    """A bounded repr, so a message never echoes a whole record (nor recurses into a
    deep or cyclic value)."""
    return _short.repr(value)
