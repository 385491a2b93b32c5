"""Strict JSON intake: the lowest layer of the SDK.

Everything the SDK reads passes through here first, so that every later layer
(schemas, models, digests) can assume the value is *unambiguous* JSON: the same
bytes mean the same record to every conforming parser, and JCS (RFC 8785) can
canonicalise it without changing it. Concretely we reject, each with its own
:class:`~kernelindex_sdk.errors.IntakeError` subclass and a precise location:

* syntax errors and trailing data (:class:`MalformedJSON`);
* empty or whitespace-only input (:class:`EmptyDocument`);
* a byte-order mark, UTF-8 or UTF-16/32 (:class:`ByteOrderMark`, RFC 8259 §8.1);
* bytes that are not UTF-8, and lone surrogates, raw or ``\\ud800``-escaped,
  which no UTF-8 encoder can write back (:class:`InvalidEncoding`);
* duplicate object keys: parsers disagree on which value wins (:class:`DuplicateKey`);
* ``NaN``/``Infinity``: Python accepts them, JSON does not (:class:`NonFiniteNumber`);
* integers beyond ±(2**53 - 1) and numbers no IEEE double holds exactly, because
  JCS would silently rewrite them and change the digest (:class:`NumberOutOfRange`);
* nesting deeper than :data:`MAX_DEPTH`, before it reaches a recursive parser
  (:class:`NestingTooDeep`).

Three parsers, one verdict:

1. **The Rust parsers** (:func:`fast_loads`, here: orjson, then jiter) read nearly every
   document alone, and prove what they read against the rules above.
2. **The stdlib path** (``_strict``: Python's C scanner with strict hooks) reads what
   they cannot decide, everything where they are not installed, ``str`` text and the
   ``strict_numbers`` and ``big_integers`` modes.
3. **The locator** (``_locator``) re-reads text that a parser refused, tracking
   positions and the RFC 6901 pointer, and raises the *first* problem in document order
   with its line, column and pointer.

This module holds the public names and what reading a valid document runs: the limits
(facts of the wire, defined in :mod:`kernelindex_sdk.base.recordformat`),
:class:`Document`, :func:`loads` and the Rust parsers. JSON Lines framing builds on them
in a public module of its own (:mod:`.jsonl`), loaded by the readers of JSON Lines.
Everything else is a private module loaded at first need, so that a run reading valid
JSON files loads none of them: the stdlib path and the locator, the rules and the words
of each problem (``_problems``), the regular expressions (``_patterns``), and the checks
of Python values built in Python (``_values``). Their public names are here too, each
importing its module on first use. Every import goes one way: the private modules take
nothing from here, and this module nothing from :mod:`.jsonl`.

Lines are counted by ``\\n`` (so ``\\r\\n`` files work) and columns are 1-based
code points, not bytes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kernelindex_sdk.base.frozenvalue import FrozenValue
from kernelindex_sdk.base.lightimport import names_on_first_use

# The limits are facts of the wire that layers below and beside this one need too.
from kernelindex_sdk.base.recordformat import MAX_BIG_INTEGER_DIGITS, MAX_DEPTH, MAX_SAFE_INTEGER

if TYPE_CHECKING:
    from kernelindex_sdk.reading.intake._problems import lone_surrogate_message, size_text
    from kernelindex_sdk.reading.intake._values import (
        has_raw_surrogate,
        is_strict_json,
        json_problems,
    )

__all__ = [
    "FALLBACK",
    "MAX_BIG_INTEGER_DIGITS",
    "MAX_DEPTH",
    "MAX_SAFE_INTEGER",
    "RUST_PARSERS",
    "Document",
    "fast_loads",
    "has_raw_surrogate",
    "is_strict_json",
    "json_problems",
    "loads",
    "lone_surrogate_message",
    "size_text",
]

#: The public names defined in a private module → that module, imported at the first use
#: of one of them and then kept here.
__getattr__ = names_on_first_use(
    __name__,
    {
        "lone_surrogate_message": f"{__name__}._problems",
        "size_text": f"{__name__}._problems",
        "has_raw_surrogate": f"{__name__}._values",
        "is_strict_json": f"{__name__}._values",
        "json_problems": f"{__name__}._values",
    },
    globals(),
)


class Document(FrozenValue):
    """One parsed top-level JSON document and where it came from.

    ``line`` is the line of a JSON Lines record, ``None`` for a whole-file document,
    so reporters can say ``file:line`` for records and just ``file`` otherwise. A frozen
    dataclass to :mod:`dataclasses` (:mod:`kernelindex_sdk.base.frozenvalue`).

    ``written`` (a slot, no field: not compared, not shown, no argument) is
    ``orjson.dumps(value)``, byte for byte, when the intake made those bytes anyway (a
    JSON Lines record the Rust parsers read; else None): a later layer that needs the
    bytes of a member (the validation's memo of referenced records) can prove them
    against it instead of writing the member again. Only the intake sets it (the
    constructor, ``replace`` and unpickling leave it None), so it is never bytes a
    caller made up.

    ``shared`` (a slot too, set the same way) is the
    :class:`~kernelindex_sdk.reading.sharedtails.SharedTail` the value's last members come
    from, when a :class:`~kernelindex_sdk.reading.sharedtails.TailMemo` read the line (those
    members are then objects shared with other documents, and ``written`` is None);
    else None.

    ``offered`` (a slot too) is True when the ``take`` given with the memo was asked for
    this document and did not take it (:func:`.jsonl.jsonl_records`): its caller's quick check
    has already said "not known to pass", so it is not asked again.
    """

    __match_args__ = ("source", "line", "value")
    __slots__ = (*__match_args__, "written", "shared", "offered")
    source: str
    line: int | None
    value: Any
    if TYPE_CHECKING:  # no annotation at run time: slots, not fields
        written: bytes | None
        shared: Any  # SharedTail | None (sharedtails is above this module)
        offered: bool

    def __init__(self, source: str, line: int | None, value: Any) -> None:
        _set = object.__setattr__
        _set(self, "source", source)
        _set(self, "line", line)
        _set(self, "value", value)
        _set(self, "written", None)
        _set(self, "shared", None)
        _set(self, "offered", False)


_jiter_from_json: Callable[..., Any] | None
try:  # a published wheel (Rust); without it, the same verdicts from the stdlib path
    from jiter import from_json as _jiter_from_json
except ImportError:  # pragma: no cover - depends on the environment
    _jiter_from_json = None

_orjson_loads: Callable[[bytes], Any] | None
try:  # orjson checks what jiter leaves open (below); without it, no fast path
    from orjson import OPT_INDENT_2 as _INDENT_2
    from orjson import OPT_STRICT_INTEGER as _STRICT_INTEGER
    from orjson import dumps as _orjson_dumps
    from orjson import loads as _orjson_loads
except ImportError:  # pragma: no cover - depends on the environment
    _jiter_from_json = _orjson_loads = None


_STRICT_INDENT_2 = _STRICT_INTEGER | _INDENT_2 if _orjson_loads is not None else 0

#: Whether orjson and jiter are installed. Without them every document takes the stdlib
#: path, with the same verdicts and values.
RUST_PARSERS = _jiter_from_json is not None


def fast_loads(data: bytes) -> Any:
    """The document and ``orjson.dumps`` of it (None when that was not made: text in
    orjson's indented form), parsed in Rust when that can decide alone; else
    ``FALLBACK``. The bytes are :attr:`Document.written` of a JSON Lines record.

    Two parsers, the cheaper first; whatever neither can decide goes to the stdlib
    path, which says precisely what is wrong. The verdicts and the values are the
    stdlib path's, as ``tests/test_intake.py`` checks differentially over many writers.

    1. orjson, whatever wrote the text (orjson, Python's ``json`` with any separators,
       indent or ``ensure_ascii``, pandas, other languages' writers). orjson itself
       refuses NaN/Infinity, numbers beyond the double range, invalid UTF-8, lone
       surrogates, a byte-order mark, control characters, trailing data and nesting
       deeper than 1,024. What it lets through, and how each is ruled out from its
       strict re-serialisation ``written`` (``OPT_STRICT_INTEGER``, which also
       refuses nesting deeper than 254; compact, or indented by two spaces when the
       text starts as orjson's indented form does):

       * a duplicate key, which it merges (the last wins). Outside strings a ``:``
         separates each member; inside them orjson writes ``:`` as itself, and the
         text can hide one only as ``\\u003a`` or ``\\u003A``. So in text without
         those, the text holds as many ``:`` as ``written`` exactly when it holds as
         many members as the value: the members a duplicate merged away are missing
         from ``written``, with their colons. Other ``\\u003`` escapes hide no colon:
         Go's ``encoding/json`` writes every ``<`` and ``>`` as ``\\u003c`` and
         ``\\u003e``, and kernels' names hold them (``gemm<128, 64>``). orjson's own
         forms skip the counting: ``written`` is then the text itself, byte for byte
         (for most records ``json.dumps(value, indent=2, ensure_ascii=False)`` is
         orjson's indented form);
       * an integer beyond ±(2**53 − 1): up to 64 bits it is read exactly and
         ``OPT_STRICT_INTEGER`` refuses it; beyond, it is read as a float, which orjson
         writes with an exponent ``e+`` (every double of magnitude 1e16 or more), and
         such an integer is a run of 19 or more digits in the text. A ``written`` with
         ``e+`` and a text with such a run go to jiter.

       Depth and the rest are the first parse's. So every writer's text is decided as
       orjson's own form is by a byte-for-byte comparison: a parse and a write in Rust,
       a comparison or two byte counts.
    2. jiter (``catch_duplicate_keys``, ``allow_inf_nan=False``), for what the counting
       cannot decide (an escaped colon, a long run of digits beside a big float).
       It refuses everything the strict parser refuses but two things: an integer
       beyond ±(2**53 − 1), which it reads exactly, and a number beyond the double
       range, which it reads as infinity. orjson's strict dump of the result finds both
       (it raises on the first and writes infinity as ``null``, so the count of
       ``null`` changes).
    """
    assert _jiter_from_json is not None and _orjson_loads is not None
    # Written indented when the text starts as orjson's indented form does, so that
    # form too skips the counting (both forms hold one ':' a member).
    # (The second byte first: a one-byte slice is a cached object, no new bytes.)
    form = (
        _STRICT_INDENT_2 if data[1:2] == b"\n" and data[:4] in _INDENT_2_STARTS else _STRICT_INTEGER
    )
    try:
        value = _orjson_loads(data)
        written = _orjson_dumps(value, None, form)  # positional: no keywords to parse
    except (ValueError, TypeError):  # orjson.JSONDecodeError, JSONEncodeError
        pass
    else:
        size = len(written)
        if data.startswith(written) and (len(data) == size or data[size:] in _NEWLINES):
            # orjson's own form: nothing merged, nothing rewritten
            return value, (written if form == _STRICT_INTEGER else None)
        # Each test is the cheapest C form of it: ``find`` of one byte is a memchr (and
        # ``find`` rather than ``in``: ``bytes in bytes`` first tries the argument as an
        # int, and raises and clears a TypeError); ``\u003`` is looked for from the first
        # backslash on; and counting by deleting (memchr again) is cheaper than
        # ``bytes.count``.
        if (
            (
                (start := data.find(b"\\")) < 0
                or (escape := data.find(b"\\u003", start)) < 0
                or _no_escaped_colon(data, escape)
            )
            and size - len(written.replace(b":", b"")) == len(data) - len(data.replace(b":", b""))
            and (
                written.find(b"+") < 0
                or written.find(b"e+") < 0
                or re.search(_LONG_DIGITS, data) is None
            )
        ):
            return value, (written if form == _STRICT_INTEGER else None)
    try:
        value = _jiter_from_json(data, catch_duplicate_keys=True, allow_inf_nan=False)
        written = _orjson_dumps(value, option=_STRICT_INTEGER)
    except (ValueError, TypeError):  # jiter's errors; orjson.JSONEncodeError
        return FALLBACK
    # Infinity is written as null: with no null written there is none, and the text
    # need not be counted (most records hold no null).
    if b"null" in written and written.count(b"null") != data.count(b"null"):
        return FALLBACK
    return value, written


def _no_escaped_colon(data: bytes, escape: int) -> bool:
    """Whether no ``\\u003a`` or ``\\u003A`` is in ``data`` from ``escape``, the first
    ``\\u003`` in it. An ``\\u003`` at the very end, or one after an escaped backslash
    (``\\\\u003a``, no escape at all), counts as one too: a false "no" costs only the
    slower parser."""
    while escape >= 0:
        if data[escape + 5 : escape + 6] in _COLON_DIGITS:
            return False
        escape = data.find(b"\\u003", escape + 5)
    return True


#: What follows ``\\u003`` in a colon's escape (U+003A), and the nothing at the end.
_COLON_DIGITS = (b"a", b"A", b"")


#: What may follow a JSON Lines line's document when orjson's bytes are compared.
_NEWLINES = (b"\n", b"\r\n")

#: How a document orjson indents by two spaces starts (an object or an array).
_INDENT_2_STARTS = (b"{\n  ", b"[\n  ")

#: A run of digits as long as the shortest integer orjson reads as a float
#: (-9223372036854775809, 19 digits): beside a float written with ``e+``, it may be one.
#: Compiled (and kept by ``re``) at its first use: few documents get that far.
_LONG_DIGITS = rb"[0-9]{19}"

#: Returned by :func:`fast_loads` when the stdlib path must decide.
FALLBACK: Any = object()


def loads(
    data: bytes | str,
    *,
    source: str | None = None,
    first_line: int = 1,
    strict_numbers: bool = False,
    big_integers: bool = False,
) -> Any:
    """Parse one JSON document strictly (see the module docstring for what is refused).

    ``source`` names the input in problems; ``first_line`` is the line number of the
    first line of ``data`` (a JSON Lines record passes its own line number), so
    reported lines point into the real file.

    Every number literal that reads as a finite double is accepted (JCS writes its
    shortest form); ``strict_numbers`` also refuses literals whose text and value
    disagree (the ``--strict-numbers`` lint). ``big_integers`` keeps integers of any
    size (up to :data:`MAX_BIG_INTEGER_DIGITS` digits) exactly, as Python ints: what a
    JSON Schema file may hold (``minimum: -9223372036854775808``), never a record, which
    JCS must be able to hash. Raises a subclass of
    :class:`~kernelindex_sdk.errors.IntakeError`, and ``TypeError`` for anything but
    ``str``, ``bytes``, ``bytearray`` or ``memoryview`` (a list of ints is not text,
    and ``bytes(2**53)`` would be 8 PiB of zeros).
    """
    if not isinstance(data, (str, bytes, bytearray, memoryview)):
        raise TypeError(
            f"loads() takes str, bytes, bytearray or memoryview, not {type(data).__name__}"
        )
    if big_integers:
        strict_numbers = False
    elif RUST_PARSERS and not strict_numbers and not isinstance(data, str):
        read = fast_loads(data if isinstance(data, bytes) else bytes(data))
        if read is not FALLBACK:
            return read[0]
    return (_strict_loads or _stdlib_path())(
        data, source, first_line, "input", strict_numbers, big_integers=big_integers
    )


#: The stdlib path's reader, once :func:`_stdlib_path` has loaded it.
_strict_loads: Callable[..., Any] | None = None


def _stdlib_path() -> Callable[..., Any]:
    """The stdlib path's reader, loaded the first time a document needs it."""
    global _strict_loads
    from kernelindex_sdk.reading.intake._strict import strict_loads

    _strict_loads = strict_loads
    return strict_loads
