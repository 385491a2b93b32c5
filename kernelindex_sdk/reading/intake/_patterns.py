"""The lexical pieces of JSON text that the stdlib path, the locator and the walk over
Python values share: its whitespace, and regular expressions compiled on first use.

Each user of this module is itself loaded only on first need, and each needs only some
of the patterns: a pattern is compiled when it is first asked for, so a run compiles
only those it uses.
"""

from __future__ import annotations

import re
from typing import ClassVar

#: The only whitespace RFC 8259 (and the json module) allow.
WHITESPACE = " \t\n\r"


class Patterns:
    """The regular expressions, each compiled on first use and then kept."""

    _SOURCES: ClassVar[dict[str, tuple[str, int]]] = {
        "ws": (r"[ \t\n\r]*", 0),
        "number": (r"(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?", 0),
        "word": (r"[A-Za-z_][A-Za-z0-9_]*", 0),
        # A JSON string, escapes included (unrolled loop: fast on long strings).
        "string": (r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL),
        "non_bracket": (r"[^\[\]{}]+", 0),
        # Any \uD800-\uDFFF escape. May fire on "\\ud800" (an escaped backslash): that
        # only costs a walk of the parsed value, which then finds nothing.
        "surrogate_escape": (r"\\u[dD][89a-fA-F]", 0),
        "surrogate_char": ("[\ud800-\udfff]", 0),
        # Inside a raw string body: an escape (\uXXXX or \x) or a raw surrogate.
        "string_atom": (r"\\u([0-9a-fA-F]{4})|\\.|[\ud800-\udfff]", re.DOTALL),
    }

    ws: re.Pattern[str]
    number: re.Pattern[str]
    word: re.Pattern[str]
    string: re.Pattern[str]
    non_bracket: re.Pattern[str]
    surrogate_escape: re.Pattern[str]
    surrogate_char: re.Pattern[str]
    string_atom: re.Pattern[str]

    def __getattr__(self, name: str) -> re.Pattern[str]:
        # Only called while ``name`` is not yet an attribute: compiled once, then kept.
        try:
            source, flags = self._SOURCES[name]
        except KeyError:
            raise AttributeError(name) from None
        pattern = re.compile(source, flags)
        setattr(self, name, pattern)
        return pattern


RE = Patterns()


def ws_end(text: str, pos: int) -> int:
    """Position of the first non-whitespace character at or after ``pos``."""
    match = RE.ws.match(text, pos)
    return match.end() if match else pos  # the pattern matches even the empty string
