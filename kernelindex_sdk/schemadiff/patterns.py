"""Which member names a ``patternProperties`` regex applies to: told only where sure.

``patternProperties`` is compared member by member (:mod:`.normal`, :mod:`.walk`): a
member's schema is its ``properties`` entry and every pattern whose regex matches its
name; ``additionalProperties`` applies to the names no entry and no pattern covers. So
the diff must tell whether a regex matches a name — and be right, or say it cannot.

JSON Schema reads the regex as ECMA-262; python-jsonschema, the reference engine,
matches member names with Python's ``re.search`` (not the ECMA ``$`` that
:func:`~kernelindex_sdk.validating.engine.ecma_anchors` gives ``pattern``). :func:`matches` answers
only where both readings agree: the regex compiles in Python, the ECMA ``$`` gives the
same answer, and a name with a character beyond printable ASCII meets no escape
(``\\d``, ``\\s``...), ``.`` or flag, whose meaning there differs between the two.
Otherwise it answers None, and the claim that depends on it stays undecided.

:func:`names` makes member names in a region of names (matching some regexes and none
of others) from :func:`~.regexgen.examples`, each checked by :func:`matches`: a
candidate for a witness, which the engine still judges whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import cache
from itertools import islice

from kernelindex_sdk.schemadiff.regexgen import examples
from kernelindex_sdk.validating.engine import ecma_anchors

__all__ = ["compiles", "matches", "names", "universal"]

#: What reads a character beyond printable ASCII differently in Python and ECMA-262:
#: an escape (``\\d``, ``\\s`` — Python's takes ``\\x1c`` as a space), ``.`` (ECMA's
#: refuses ``\\r``), a flag (``(?i)``).
_UNICODE_SENSITIVE = re.compile(r"[\\.]|\(\?")
_PLAIN = re.compile(r"[ -~]*")
#: Candidate names looked through per region.
_LOOK = 64


@cache
def _compiled(regex: str) -> tuple[re.Pattern[str], re.Pattern[str]] | None:
    """The regex as python-jsonschema reads it and with ECMA ``$``; None if either fails."""
    try:
        return re.compile(regex), re.compile(ecma_anchors(regex))
    except (re.error, RecursionError, OverflowError):
        return None


def compiles(regex: str) -> bool:
    """Whether ``regex`` is one :func:`matches` can read at all (Python compiles it)."""
    return _compiled(regex) is not None


def matches(regex: str, name: str) -> bool | None:
    """Whether ``regex`` matches member ``name`` (a search, as ``patternProperties``
    applies it), or None where the readings may differ (see the module's doc)."""
    compiled = _compiled(regex)
    if compiled is None:
        return None
    if not _PLAIN.fullmatch(name) and _UNICODE_SENSITIVE.search(regex):
        return None
    if any(ord(char) > 0xFFFF for char in name):
        return None  # one code point to Python, two UTF-16 units to ECMA without /u
    python, ecma = (bool(c.search(name)) for c in compiled)
    return python if python == ecma else None


def universal(regex: str) -> bool:
    """Whether ``regex`` matches every name, as plainly as ``.*`` says so (a search that
    matches the empty string at the start, before anything else is asked)."""
    return regex in ("", "^", ".*", "^.*", "(.*)", "^(.*)")


def names(
    within: Iterable[str], outside: Iterable[str] = (), avoid: Iterable[str] = ()
) -> Iterator[str]:
    """Member names every regex of ``within`` matches and none of ``outside`` does, not
    among ``avoid`` — each answer told for sure by :func:`matches`. With ``within``
    empty, plain names (``x``, ``extra``...) are tried."""
    inside, other, taken = list(within), list(outside), set(avoid)
    pool: Iterable[str]
    if inside:
        # Each example, and with something after it (a search matches more than the
        # example: "^x" is also "xa"; a declared name may be the example itself).
        pool = (
            n + more
            for regex in inside
            for n in islice(examples(regex), _LOOK)
            for more in ("", "a", "_1", "-z")
        )
    else:
        pool = ["x", "y", "z", "extra", "k1", "k2", "X", "x1", "other", "member"]
    seen: set[str] = set()
    for name in pool:
        if name in seen or name in taken:
            continue
        seen.add(name)
        if name and _within(name, inside, other):
            yield name
    if "" in seen and _within("", inside, other):
        yield ""  # a member named "" is one, but a witness reads better with a name


def _within(name: str, inside: list[str], outside: list[str]) -> bool:
    return all(matches(r, name) is True for r in inside) and all(
        matches(r, name) is False for r in outside
    )
