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

Speed is a requirement (thousands of small files per CLI run, ~100k JSONL records
per second), so the design has two passes:

1. **Fast path.** :func:`json.JSONDecoder` (the C scanner) with cheap hooks:
   ``object_pairs_hook`` compares ``len(dict(pairs))`` with ``len(pairs)``,
   ``parse_constant`` refuses ``NaN``/``Infinity``, ``parse_int``/``parse_float``
   only look closely at long literals, and a regex pre-check on the raw text decides
   whether strings need a surrogate walk at all. A hook that spots a problem raises
   an internal marker; it does not work out *where* (that would slow every call).
2. **Locating pass.** Only when something is wrong, :class:`_Locator`, a small
   iterative (never recursive) pure-Python parser, re-reads the text tracking
   positions and the RFC 6901 pointer, and raises the *first* problem in document
   order with its line, column and pointer.

Lines are counted by ``\\n`` (so ``\\r\\n`` files work) and columns are 1-based
code points, not bytes.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import accumulate
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn

from kernelindex_sdk.base.frozenvalue import FrozenValue
from kernelindex_sdk.base.pointers import escape_token
from kernelindex_sdk.base.printable import abbreviated, int_text, short_repr
from kernelindex_sdk.errors import (
    ByteOrderMark,
    DocumentTooLarge,
    DuplicateKey,
    EmptyDocument,
    IntakeError,
    InvalidEncoding,
    MalformedJSON,
    NestingTooDeep,
    NonFiniteNumber,
    NumberOutOfRange,
    Problem,
    UnreadableFile,
)

__all__ = [
    "MAX_DEPTH",
    "MAX_SAFE_INTEGER",
    "Document",
    "OverlongLine",
    "has_raw_surrogate",
    "is_blank_line",
    "is_strict_json",
    "json_problems",
    "jsonl_records",
    "loads",
    "lone_surrogate_message",
]

#: Deepest nesting of arrays/objects accepted. Real records are < 10 deep; the limit
#: exists so hostile input cannot exhaust the stack of a recursive parser.
MAX_DEPTH: int = 256

#: Largest integer an IEEE double (and so JCS, I-JSON, JavaScript) holds exactly.
MAX_SAFE_INTEGER = 2**53 - 1

_MIN_NORMAL = sys.float_info.min  # below this, doubles lose precision (subnormals)
_MAX_FLOAT = sys.float_info.max
_WHITESPACE = " \t\n\r"  # the only whitespace RFC 8259 (and the json module) allow
_WS_BYTES = frozenset(b" \t\n\r")
_BRACKET_DELTA = {"[": 1, "{": 1, "]": -1, "}": -1}


class _Patterns:
    """The regular expressions of the stdlib path and of error location, each compiled
    on first use: a document the Rust parsers read needs none of them, and compiling
    them all costs ~2% of a ``validate`` start-up (#14)."""

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


_RE = _Patterns()

_UTF8_BOM = b"\xef\xbb\xbf"
# Longest first: the UTF-32-LE mark starts with the UTF-16-LE one.
_OTHER_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32 (little-endian)"),
    (b"\x00\x00\xfe\xff", "UTF-32 (big-endian)"),
    (b"\xff\xfe", "UTF-16 (little-endian)"),
    (b"\xfe\xff", "UTF-16 (big-endian)"),
)
_BOM_FIRST_BYTES = (b"\xef", b"\xff", b"\xfe", b"\x00")
_BOM_MESSAGE = (
    "byte-order mark at start of {where}: JSON text must not start with one "
    "(RFC 8259 §8.1); save as UTF-8 without BOM"
)
_WIDE_BOM_MESSAGE = (
    "{name} byte-order mark at start of {where}: JSON text must be UTF-8 without a "
    "byte-order mark (RFC 8259 §8.1); re-save it as UTF-8"
)


class Document(FrozenValue):
    """One parsed top-level JSON document and where it came from.

    ``line`` is the line of a JSON Lines record, ``None`` for a whole-file document,
    so reporters can say ``file:line`` for records and just ``file`` otherwise. A frozen
    dataclass to :mod:`dataclasses` (:mod:`kernelindex_sdk.base.frozenvalue`).

    ``written`` (a slot, no field: not compared, not shown, no argument) is
    ``orjson.dumps(value)``, byte for byte, when the intake made those bytes anyway (a
    JSON Lines record the fast path read; else None): a later layer that needs the
    bytes of a member (the validation's memo of referenced records) can prove them
    against it instead of writing the member again. Only the intake sets it (the
    constructor, ``replace`` and unpickling leave it None), so it is never bytes a
    caller made up.

    ``shared`` (a slot too, set the same way) is the
    :class:`~kernelindex_sdk.reading.sharedtails.SharedTail` the value's last members come
    from, when a :class:`~kernelindex_sdk.reading.sharedtails.TailMemo` read the line (those
    members are then objects shared with other documents, and ``written`` is None);
    else None.

    ``offered`` (a slot too) is True when the memo's ``take`` was asked for this
    document and did not take it (:func:`jsonl_records`): its caller's quick check
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


_new_object = object.__new__
_set_source = Document.__dict__["source"].__set__
_set_line = Document.__dict__["line"].__set__
_set_value = Document.__dict__["value"].__set__
_set_written = Document.__dict__["written"].__set__
_set_shared = Document.__dict__["shared"].__set__
_set_offered = Document.__dict__["offered"].__set__


def _document(
    source: str,
    line: int | None,
    value: Any,
    written: bytes | None,
    shared: Any = None,
    offered: bool = False,
) -> Document:
    """``Document(source, line, value)`` with its ``written``, ``shared`` and
    ``offered``, its slots set directly: the JSON Lines loop makes one per line, and
    ``Document.__init__`` (an ``object.__setattr__`` call per field) costs ~2k
    instructions more."""
    document: Document = _new_object(Document)
    _set_source(document, source)
    _set_line(document, line)
    _set_value(document, value)
    _set_written(document, written)
    _set_shared(document, shared)
    _set_offered(document, offered)
    return document


# --------------------------------------------------------------------------- checks
# Shared by the fast hooks and the locating pass, so both agree on what is wrong.


def _int_problem(literal: str) -> str | None:
    """Why an integer literal is unacceptable, or None.

    JSON forbids leading zeros, so a literal of more than 16 digits is at least
    10**16 > 2**53 - 1 without converting it (which also avoids Python's
    4300-digit ``int()`` limit on hostile input).
    """
    digits = len(literal) - (literal[0] == "-")
    if digits > 16 or abs(int(literal)) > MAX_SAFE_INTEGER:
        return (
            f"integer {abbreviated(literal)} is outside ±(2**53 - 1): an IEEE double cannot hold "
            "it exactly, so JCS (RFC 8785) would change it; write it as a string"
        )
    return None


#: Longest integer literal a schema file may hold (``big_integers``): Python's own
#: ``int()`` refuses more than 4300 digits, and no bound needs a tenth of them.
MAX_BIG_INTEGER_DIGITS = 400


def _big_int_problem(literal: str) -> str | None:
    """Why an integer literal is unacceptable where integers of any size are kept
    exactly (a schema's ``minimum: -9223372036854775808``), or None."""
    if len(literal) - (literal[0] == "-") > MAX_BIG_INTEGER_DIGITS:
        return f"integer {abbreviated(literal)} has more than {MAX_BIG_INTEGER_DIGITS} digits"
    return None


def _float_problem(literal: str, value: float, strict: bool = False) -> str | None:
    """Why a number literal with a fraction or exponent is unacceptable, or None.

    Every literal that reads as a finite IEEE double is a number: JCS (RFC 8785)
    writes the double's shortest form, so ``333333333.33333329``, ``4.50`` and
    ``1E30`` are accepted and canonicalized to ``333333333.3333333``, ``4.5`` and
    ``1e+30`` — two writers printing one double differently get one digest. Only a
    literal beyond the double range (it would read as infinity) is refused.

    ``strict`` (the ``--strict-numbers`` lint) also refuses a literal whose text and
    value disagree: one that underflows to 0, or that no double holds exactly (JCS
    would write other digits). Literals with <= 15 significant digits always match
    in the normal range, so the exact :class:`Decimal` comparison is only made for
    long literals and subnormals (which have fewer bits of precision).
    """
    if value in (float("inf"), float("-inf")):
        return (
            f"number {abbreviated(literal)} overflows an IEEE double (it would read as "
            "infinity); JCS (RFC 8785) cannot represent it"
        )
    if not strict:
        return None
    if value == 0.0:
        mantissa = literal.lower().partition("e")[0]
        if mantissa.strip("-.0"):
            return (
                f"number {abbreviated(literal)} underflows an IEEE double (it reads as 0); "
                "JCS (RFC 8785) would write 0 (--strict-numbers)"
            )
        return None
    from decimal import Decimal  # only long literals and subnormals get here

    if Decimal(literal) != Decimal(repr(value)):
        return (
            f"number {abbreviated(literal)} has no exact IEEE double: it reads as {value!r}, "
            "which JCS (RFC 8785) writes instead (--strict-numbers)"
        )
    return None


def _constant_message(name: str) -> str:
    return f"{name} is not valid JSON: RFC 8259 numbers are finite (and JCS cannot write it)"


# ------------------------------------------------------------------------ fast path


class _Reject(Exception):
    """Raised by a fast-path hook: something is wrong, the locating pass says what."""


# The hooks run once per object/number of every document: locals bound as default
# arguments and no work beyond a length test on the common path.


def _pairs_hook(
    pairs: list[tuple[str, Any]], _dict: type[dict[str, Any]] = dict, _len: Any = len
) -> dict[str, Any]:
    obj = _dict(pairs)
    if _len(obj) != _len(pairs):
        raise _Reject
    return obj


def _parse_constant(name: str) -> Any:
    raise _Reject


def _parse_int(literal: str, _int: type[int] = int, _len: Any = len) -> int:
    # 2**53 - 1 has 16 digits: shorter literals cannot exceed it and skip the check.
    if _len(literal) >= 16 and _int_problem(literal) is not None:
        raise _Reject
    return _int(literal)


def _parse_big_int(literal: str, _int: type[int] = int, _len: Any = len) -> int:
    if _len(literal) > MAX_BIG_INTEGER_DIGITS and _big_int_problem(literal) is not None:
        raise _Reject
    return _int(literal)


def _parse_float(literal: str, _float: type[float] = float, _hi: float = _MAX_FLOAT) -> float:
    # float() of a JSON number literal is never NaN: only an overflow is refused.
    value = _float(literal)
    if -_hi <= value <= _hi:
        return value
    raise _Reject


def _parse_float_strict(
    literal: str,
    _float: type[float] = float,
    _len: Any = len,
    _repr: Any = repr,
    _lo: float = _MIN_NORMAL,
    _hi: float = _MAX_FLOAT,
) -> float:
    value = _float(literal)
    # A literal with >= 16 significant digits has >= 17 characters (a '.' or 'e' too),
    # and one written by Python (or any shortest-repr printer) equals repr(value).
    if _lo <= abs(value) <= _hi and (_len(literal) <= 16 or literal == _repr(value)):
        return value
    if _float_problem(literal, value, strict=True) is not None:
        raise _Reject
    return value


def _decoder(
    parse_float: Callable[[str], Any], parse_int: Callable[[str], Any]
) -> json.JSONDecoder:
    """A strict stdlib decoder: duplicate keys and NaN/Infinity refused, numbers read by
    the given rules (the three intake modes differ only there)."""
    return json.JSONDecoder(
        object_pairs_hook=_pairs_hook,
        parse_float=parse_float,
        parse_int=parse_int,
        parse_constant=_parse_constant,
        strict=True,
    )


_DECODER = _decoder(_parse_float, _parse_int)
_STRICT_NUMBERS_DECODER = _decoder(_parse_float_strict, _parse_int)
#: Schema files (``big_integers``): integers of any size kept exactly, as JSON Schema
#: reads them (a bound is compared, never hashed by JCS); everything else as strict.
_BIG_INTEGERS_DECODER = _decoder(_parse_float, _parse_big_int)
# The C scanners themselves: decode() would add a Python frame and two regex matches.
_scan_once: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]
_scan_once_strict: Callable[[str, int], tuple[Any, int]] = _STRICT_NUMBERS_DECODER.scan_once  # type: ignore[attr-defined]
_scan_once_big: Callable[[str, int], tuple[Any, int]] = _BIG_INTEGERS_DECODER.scan_once  # type: ignore[attr-defined]


def _ws_end(text: str, pos: int) -> int:
    """Position of the first non-whitespace character at or after ``pos``."""
    match = _RE.ws.match(text, pos)
    return match.end() if match else pos  # the pattern matches even the empty string


def _too_deep(text: str) -> bool:
    """Whether brackets outside strings nest deeper than :data:`MAX_DEPTH`.

    Exact for any prefix the C parser would accept, so it always runs before the
    C parser can recurse too far. Costs two C-level regex passes.
    """
    brackets = _RE.non_bracket.sub("", _RE.string.sub("", text))
    return max(accumulate(map(_BRACKET_DELTA.__getitem__, brackets)), default=0) > MAX_DEPTH


def has_raw_surrogate(text: str) -> bool:
    """Whether str input holds a surrogate code point (e.g. from ``surrogateescape``).

    Encoding is C-fast; a regex search over non-ASCII text is about 5x slower.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _has_surrogate(value: Any) -> bool:
    """Whether any key or string in a parsed value holds a surrogate code point.

    The json module joins escaped *pairs* into one character, so whatever surrogate
    survives parsing is a lone one. Iterative: depth is already bounded, but no need
    to spend the stack.
    """
    search = _RE.surrogate_char.search
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if search(item):
                return True
        elif isinstance(item, dict):
            for key in item:
                if search(key):
                    return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _parse_text(
    text: str,
    source: str | None,
    first_line: int,
    raw_surrogates: bool,
    where: str,
    strict_numbers: bool = False,
    big_integers: bool = False,
) -> Any:
    """Strictly parse decoded text: fast path, then the locating pass on failure."""
    if (text.count("[") + text.count("{") > MAX_DEPTH and _too_deep(text)) or (
        raw_surrogates and has_raw_surrogate(text)
    ):
        _Locator(text, source, first_line, where, strict_numbers, big_integers).run()
        raise _fallback(text, source, first_line, None)  # pragma: no cover - defensive
    try:
        start = 0
        if text[:1] in _WHITESPACE:  # "" in "..." is True: the empty text goes here too
            start = _ws_end(text, 0)
        scan = (
            _scan_once_big if big_integers else _scan_once_strict if strict_numbers else _scan_once
        )
        value, end = scan(text, start)
        if end != len(text) and _ws_end(text, end) != len(text):
            raise _Reject
    except (_Reject, StopIteration, ValueError, RecursionError) as exc:
        # ValueError covers json.JSONDecodeError and int()'s digit limit.
        _Locator(text, source, first_line, where, strict_numbers, big_integers).run()
        raise _fallback(text, source, first_line, exc) from exc
    if _RE.surrogate_escape.search(text) and _has_surrogate(value):
        _Locator(text, source, first_line, where, strict_numbers, big_integers).run()
        raise _fallback(text, source, first_line, None)  # pragma: no cover - defensive
    return value


def _fallback(
    text: str, source: str | None, first_line: int, exc: BaseException | None
) -> IntakeError:
    """An error for when the locating pass disagrees with the fast path (a bug).

    Never expected; it keeps a disagreement from turning into silent acceptance.
    """
    if isinstance(exc, json.JSONDecodeError):
        return MalformedJSON(
            exc.msg, source=source, line=exc.lineno + first_line - 1, column=exc.colno
        )
    if isinstance(exc, RecursionError):
        return NestingTooDeep("nesting too deep for the parser", source=source, line=first_line)
    return MalformedJSON(
        f"rejected by the strict parser ({type(exc).__name__})", source=source, line=first_line
    )


# ------------------------------------------------------------------- locating pass


def _quote(key: str) -> str:
    """A key as it would appear in JSON, one line, shortened if huge."""
    return abbreviated(json.dumps(key, ensure_ascii=False), 60)


class _Frame:
    """One open array or object in the locating pass."""

    __slots__ = ("index", "is_object", "seen")

    def __init__(self, is_object: bool) -> None:
        self.is_object = is_object
        self.index = 0
        self.seen: dict[str, int] = {}


class _Locator:
    """Re-parse text that the fast path rejected and raise its first problem, located.

    An explicit stack instead of recursion keeps it safe at any depth (it stops at
    :data:`MAX_DEPTH` anyway). Strings are decoded by the json module's own
    ``scanstring`` so string syntax agrees exactly with the fast path.
    """

    def __init__(
        self,
        text: str,
        source: str | None,
        first_line: int,
        where: str = "input",
        strict_numbers: bool = False,
        big_integers: bool = False,
    ) -> None:
        self.text = text
        self.source = source
        self.strict_numbers = strict_numbers
        self.big_integers = big_integers
        self.first_line = first_line
        self.where_name = where  # "input", or "line" for a JSON Lines record

    # -- reporting

    def where(self, pos: int) -> tuple[int, int]:
        """1-based (line, column) of a code-point offset."""
        line = self.text.count("\n", 0, pos) + self.first_line
        column = pos - self.text.rfind("\n", 0, pos)
        return line, column

    def fail(
        self,
        cls: type[IntakeError],
        message: str,
        pos: int,
        path: Sequence[str] = (),
        up: bool = False,
    ) -> NoReturn:
        """Raise ``cls`` at ``pos``; the pointer is ``path`` (less its last token if ``up``).

        The pointer is built only here: building one per value slowed the pass by ~60%.
        """
        pointer = "".join("/" + token for token in (path[:-1] if up else path))
        if pos >= len(self.text):  # "end of input": point just after the last content,
            pos = len(self.text.rstrip(_WHITESPACE))  # not at a final newline's next line
        line, column = self.where(pos)
        raise cls(message, source=self.source, line=line, column=column, pointer=pointer)

    def found(self, pos: int) -> str:
        """What sits at ``pos``, for 'expected X, found Y' messages."""
        if pos >= len(self.text):
            return "end of input"
        word = _RE.word.match(self.text, pos)
        if word:
            return repr(abbreviated(word.group(), 20))
        return repr(self.text[pos])

    # -- lexing

    def skip(self, pos: int) -> int:
        return _ws_end(self.text, pos)

    def string(self, pos: int, path: list[str], what: str, up: bool) -> tuple[str, int]:
        """Decode the string starting at the quote at ``pos``; returns (value, end)."""
        try:
            value, end = json.decoder.scanstring(self.text, pos + 1, True)  # type: ignore[attr-defined]
        except json.JSONDecodeError as exc:
            at = exc.pos - (self.text[exc.pos - 1 : exc.pos + 1] == "\\u")  # at the backslash
            self.fail(MalformedJSON, self.string_error(exc, what), at, path, up)
        if _RE.surrogate_char.search(value):
            self.lone_surrogate(pos + 1, end - 1, path, up, what)
        return value, end

    def string_error(self, exc: json.JSONDecodeError, what: str) -> str:
        if exc.msg.startswith("Unterminated"):
            return f"unterminated {what}: no closing double quote"
        if exc.msg.startswith("Invalid control"):
            return (
                f"unescaped control character U+{ord(self.text[exc.pos]):04X} in {what}: "
                "write it as a \\u escape"
            )
        if exc.msg.startswith("Invalid \\uXXXX"):
            return f"invalid \\u escape in {what}: \\u needs exactly four hex digits"
        if exc.msg.startswith("Invalid \\escape"):
            return (
                f"invalid escape {self.text[exc.pos : exc.pos + 2]} in {what}: JSON allows "
                '\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX'
            )
        return f"{exc.msg} in {what}"  # pragma: no cover - json has no other messages

    def lone_surrogate(
        self, start: int, stop: int, path: list[str], up: bool, what: str
    ) -> NoReturn:
        """Find and report the first lone surrogate in the raw string body [start, stop)."""
        atoms = list(_RE.string_atom.finditer(self.text, start, stop))
        i = 0
        while i < len(atoms):
            atom = atoms[i]
            hex_digits = atom.group(1)
            i += 1
            if hex_digits is None:
                if atom.group()[0] == "\\":
                    continue  # a simple escape such as \\ or \n
                self.fail(  # a raw surrogate code point (str input, or undecodable bytes)
                    InvalidEncoding,
                    lone_surrogate_message(atom.group(), what),
                    atom.start(),
                    path,
                    up,
                )
            code = int(hex_digits, 16)
            if 0xD800 <= code <= 0xDBFF and i < len(atoms):
                low = atoms[i].group(1)  # json pairs a high escape with the very next one
                if atoms[i].start() == atom.end() and low and 0xDC00 <= int(low, 16) <= 0xDFFF:
                    i += 1
                    continue
            if 0xD800 <= code <= 0xDFFF:
                self.fail(
                    InvalidEncoding,
                    f"lone surrogate escape {atom.group()} in {what}: a high \\uD800-\\uDBFF "
                    "escape must be followed by a low \\uDC00-\\uDFFF one; alone it is not a "
                    "Unicode character",
                    atom.start(),
                    path,
                    up,
                )
        raise AssertionError("no lone surrogate found")  # pragma: no cover

    # -- parsing

    def run(self) -> None:
        """Parse the whole text; raise the first problem found (return if there is none)."""
        text = self.text
        n = len(text)
        pos = self.skip(0)
        if pos >= n:
            raise EmptyDocument(
                "empty document: no JSON value (the input is empty or whitespace only)",
                source=self.source,
                line=self.first_line,
            )
        stack: list[_Frame] = []
        path: list[str] = []  # escaped tokens leading to the value being parsed
        while True:
            # ---- one value at pos (whitespace already skipped)
            char = text[pos] if pos < n else ""
            if char in ("[", "{"):
                if len(stack) >= MAX_DEPTH:
                    self.fail(
                        NestingTooDeep,
                        f"arrays/objects nested deeper than {MAX_DEPTH} levels",
                        pos,
                        path,
                    )
                frame = _Frame(char == "{")
                pos = self.skip(pos + 1)
                if pos < n and text[pos] == ("}" if frame.is_object else "]"):
                    pos += 1  # empty container: a complete value
                else:
                    stack.append(frame)
                    if frame.is_object:
                        path.append("")
                        pos = self.member_key(frame, pos, path)
                    else:
                        path.append("0")
                    continue
            elif char == '"':
                _, pos = self.string(pos, path, "string", False)
            elif char and char in "-0123456789":
                pos = self.number(pos, path)
            elif text.startswith("true", pos):
                pos += 4
            elif text.startswith("false", pos):
                pos += 5
            elif text.startswith("null", pos):
                pos += 4
            elif text.startswith(("NaN", "Infinity"), pos):
                name = "NaN" if char == "N" else "Infinity"
                self.fail(NonFiniteNumber, _constant_message(name), pos, path)
            else:
                self.fail(
                    MalformedJSON, f"expected a JSON value, found {self.found(pos)}", pos, path
                )
            # ---- a value is complete: commas, closing brackets, end of input
            while True:
                pos = self.skip(pos)
                if not stack:
                    if pos < n:
                        hint = (
                            "JSON Lines holds one document per line"
                            if self.where_name == "line"
                            else "a JSON file holds one document; use JSON Lines for several"
                        )
                        self.fail(
                            MalformedJSON,
                            f"trailing data after the JSON value: found {self.found(pos)} ({hint})",
                            pos,
                        )
                    return
                frame = stack[-1]
                closer = "}" if frame.is_object else "]"
                char = text[pos] if pos < n else ""
                if char == ",":
                    pos = self.skip(pos + 1)
                    if frame.is_object:
                        pos = self.member_key(frame, pos, path)
                    else:
                        frame.index += 1
                        path[-1] = str(frame.index)
                    break
                if char == closer:
                    stack.pop()
                    path.pop()
                    pos += 1
                    continue
                container = "object member" if frame.is_object else "array element"
                self.fail(
                    MalformedJSON,
                    f"expected ',' or '{closer}' after {container}, found {self.found(pos)}",
                    pos,
                    path,
                    up=True,
                )

    def member_key(self, frame: _Frame, pos: int, path: list[str]) -> int:
        """Parse ``"key" :`` at pos; sets the path's last token; returns the value's pos."""
        if pos >= len(self.text) or self.text[pos] != '"':
            self.fail(
                MalformedJSON,
                f"expected a double-quoted object key, found {self.found(pos)}",
                pos,
                path,
                up=True,
            )
        key, end = self.string(pos, path, "object key", True)
        first = frame.seen.get(key)
        if first is not None:
            line, column = self.where(first)
            # On the same line (always so in JSON Lines) the message names no line
            # number: the problem's own location carries it.
            first_at = (
                f"column {column}"
                if line == self.where(pos)[0]
                else f"line {line}, column {column}"
            )
            self.fail(
                DuplicateKey,
                f"duplicate key {_quote(key)} (first at {first_at}): "
                "parsers disagree on which value wins",
                pos,
                path,
                up=True,
            )
        frame.seen[key] = pos
        path[-1] = escape_token(key)
        colon = self.skip(end)
        if colon >= len(self.text) or self.text[colon] != ":":
            self.fail(
                MalformedJSON,
                f"expected ':' after object key {_quote(key)}, found {self.found(colon)}",
                colon,
                path,
                up=True,
            )
        return self.skip(colon + 1)

    def number(self, pos: int, path: list[str]) -> int:
        """Check the number at pos; returns the position after it."""
        text = self.text
        match = _RE.number.match(text, pos)
        if match is None:
            if text.startswith("-Infinity", pos):
                self.fail(NonFiniteNumber, _constant_message("-Infinity"), pos, path)
            self.fail(MalformedJSON, f"invalid number: {self.found(pos)}", pos, path)
        literal = match.group()
        end = match.end()
        following = text[end : end + 1]
        if following and following in "0123456789" and match.group(1).lstrip("-") == "0":
            self.fail(MalformedJSON, "invalid number: leading zeros are not allowed", pos, path)
        if following and following in ".eE":
            self.fail(
                MalformedJSON,
                "invalid number: digits must follow the decimal point and the exponent",
                pos,
                path,
            )
        if match.group(2) or match.group(3):
            message = _float_problem(literal, float(literal), self.strict_numbers)
        elif self.big_integers:
            message = _big_int_problem(literal)
        elif len(literal) >= 16:
            message = _int_problem(literal)
        else:
            message = None
        if message is not None:
            self.fail(NumberOutOfRange, message, pos, path)
        return end


# ---------------------------------------------------------------------- public API


def _check_bom(data: bytes, source: str | None, first_line: int, where: str) -> None:
    """Reject byte-order marks and UTF-16/32 text (RFC 8259 §8.1 wants plain UTF-8)."""
    if data.startswith(_UTF8_BOM):
        raise ByteOrderMark(
            _BOM_MESSAGE.format(where=where), source=source, line=first_line, column=1
        )
    for mark, name in _OTHER_BOMS:
        if data.startswith(mark):
            raise ByteOrderMark(
                _WIDE_BOM_MESSAGE.format(name=name, where=where),
                source=source,
                line=first_line,
                column=1,
            )
    if b"\x00" in data[:2]:
        raise InvalidEncoding(
            "NUL byte at start of input: this looks like UTF-16 or UTF-32 text; JSON text "
            "must be UTF-8 (RFC 8259 §8.1)",
            source=source,
            line=first_line,
            column=1 + (data[:1] != b"\x00"),
        )


def _decode(data: bytes, source: str | None, first_line: int, where: str) -> str:
    """Strict UTF-8 decoding; a bad byte is reported at its line and column."""
    if data[:1] in _BOM_FIRST_BYTES or data[1:2] == b"\x00":
        _check_bom(data, source, first_line, where)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad, reason = exc.start, exc.reason
    line_start = data.rfind(b"\n", 0, bad) + 1
    line = data.count(b"\n", 0, bad) + first_line
    column = len(data[line_start:bad].decode("utf-8")) + 1
    # The pointer, if the locating pass (on text with the bad bytes escaped) stops there.
    pointer = ""
    try:
        _Locator(data.decode("utf-8", "surrogateescape"), source, first_line).run()
    except IntakeError as located:
        if (located.problem.line, located.problem.column) == (line, column):
            pointer = located.problem.pointer
    raise InvalidEncoding(
        f"invalid UTF-8: byte 0x{data[bad]:02X} ({reason}); JSON text must be UTF-8",
        source=source,
        line=line,
        column=column,
        pointer=pointer,
    )


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


def _fast_loads(data: bytes) -> Any:
    """The document and ``orjson.dumps`` of it (None when that was not made: text in
    orjson's indented form), parsed in Rust when that can decide alone; else
    ``_FALLBACK``. The bytes are :attr:`Document.written` of a JSON Lines record.

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

       Depth and the rest are the first parse's. The check is what the earlier
       byte-for-byte comparison established for orjson's own form, established for
       every writer: a parse and a write in Rust, a comparison or two byte counts.
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
        # int, and raises and clears a TypeError, ~0.8k instructions); ``\u003`` is looked
        # for from the first backslash on; and counting by deleting (memchr again) costs
        # ~40 % less than ``bytes.count``.
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
        return _FALLBACK
    # Infinity is written as null: with no null written there is none, and the text
    # need not be counted (most records hold no null).
    if b"null" in written and written.count(b"null") != data.count(b"null"):
        return _FALLBACK
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

#: Returned by :func:`_fast_loads` when the stdlib path must decide.
_FALLBACK: Any = object()

#: Returned by a tail memo's read for a document its ``take`` took (nothing to yield).
_TAKEN: Any = object()


def _loads(
    data: bytes | str,
    source: str | None,
    first_line: int,
    where: str,
    strict_numbers: bool = False,
    big_integers: bool = False,
) -> Any:
    if big_integers:
        return _strict_loads(data, source, first_line, where, False, big_integers=True)
    if _jiter_from_json is not None and not strict_numbers and not isinstance(data, str):
        read = _fast_loads(data if isinstance(data, bytes) else bytes(data))
        if read is not _FALLBACK:
            return read[0]
    return _strict_loads(data, source, first_line, where, strict_numbers)


def _strict_loads(
    data: bytes | str,
    source: str | None,
    first_line: int,
    where: str,
    strict_numbers: bool,
    *,
    big_integers: bool = False,
) -> Any:
    """The stdlib path: slower, and it says precisely what is wrong."""
    if isinstance(data, str):
        if data[:1] == "\ufeff":
            raise ByteOrderMark(
                _BOM_MESSAGE.format(where=where), source=source, line=first_line, column=1
            )
        return _parse_text(
            data, source, first_line, not data.isascii(), where, strict_numbers, big_integers
        )
    if not isinstance(data, bytes):
        data = bytes(data)  # bytearray, memoryview
    text = _decode(data, source, first_line, where)
    return _parse_text(text, source, first_line, False, where, strict_numbers, big_integers)


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
    return _loads(data, source, first_line, "input", strict_numbers, big_integers)


def is_blank_line(raw: bytes) -> bool:
    # Most records start with "{": only lines starting with whitespace pay for strip().
    # (jsonl_records has this inline.)
    return not raw or (raw[0] in _WS_BYTES and not raw.strip(b" \t\r\n"))


class OverlongLine:
    """Stands in, among the lines given to :func:`jsonl_records`, for a line longer
    than the reader's limit: the reader skipped its bytes rather than hold them.

    ``stopped`` says the reader went no further: the line came from a stream whose end
    is not known (a pipe, a FIFO, a device), which is read no further than the limit,
    so this is the last "line" there is.
    """

    __slots__ = ("limit", "size", "stopped")

    def __init__(self, limit: int, size: int, stopped: bool = False) -> None:
        #: The limit it broke, and the bytes it took (its ``\n`` included).
        self.limit = limit
        self.size = size
        self.stopped = stopped

    def message(self) -> str:
        """What is wrong, for the one line that reports it."""
        text = f"line longer than {size_text(self.limit)}, the limit for one document: not read"
        if self.stopped:
            return text + "; a stream is read no further than that, so nothing after it either"
        return text


def jsonl_records(
    lines: Iterable[bytes | OverlongLine],
    source: str,
    first_lineno: int,
    seen_any: bool,
    strict_numbers: bool = False,
    tails: Any = None,
) -> Iterator[Document | IntakeError]:
    """The JSON Lines loop over raw lines numbered from ``first_lineno``.

    Every JSON Lines reader (files, stdin, the ranges of a file that parallel workers
    read) runs this one loop. A bad line yields its :class:`IntakeError`, located at
    that line, and reading goes on; an :class:`OverlongLine` yields
    :class:`DocumentTooLarge`. A read error (``OSError`` from ``lines``) ends the
    stream with :class:`UnreadableFile` at the line it stopped on. ``seen_any`` says
    whether a document came before these lines: only a stream with no document at all
    yields :class:`EmptyDocument`.

    ``tails``, a :class:`~kernelindex_sdk.reading.sharedtails.TailMemo`, reads the lines
    instead of the fast path alone: a line ending as an earlier one did is parsed only
    up to that end, and its document's last members are shared with other documents
    (for a caller that checks documents and drops them; the verdicts are the same).
    The memo offers each document it reads to its ``take`` (when set) first: one
    taken is not yielded at all (no :class:`Document` is made), one not taken is
    yielded with ``offered`` True.
    """
    lineno = first_lineno - 1
    # What _loads does first for bytes, asked once rather than per line.
    fast = _fast_loads if _jiter_from_json is not None and not strict_numbers else None
    with_tails = tails.read if tails is not None and fast is not None else None
    offered = with_tails is not None and tails.take is not None
    try:
        for lineno, raw in enumerate(lines, first_lineno):
            if type(raw) is not bytes and not isinstance(raw, bytes):
                seen_any = True
                yield _too_large(raw, source, lineno)
                continue
            # is_blank_line, inline: most lines start with "{".
            if not raw or (raw[0] in _WS_BYTES and not raw.strip(b" \t\r\n")):
                continue
            seen_any = True
            if with_tails is not None:
                read = with_tails(raw)
                if read is not _FALLBACK:
                    if read is not _TAKEN:
                        yield _document(source, lineno, read[0], read[1], read[2], offered)
                    continue
            else:
                read = fast(raw) if fast is not None else _FALLBACK
                if read is not _FALLBACK:
                    yield _document(source, lineno, read[0], read[1])
                    continue
            try:
                value = _strict_loads(raw, source, lineno, "line", strict_numbers)
            except IntakeError as exc:
                yield exc
                if isinstance(exc, ByteOrderMark) and lineno == 1 and not raw.startswith(_UTF8_BOM):
                    return  # UTF-16/32: every later "line" would be garbage too
                continue
            yield _document(source, lineno, value, None)
    except OSError as exc:
        yield UnreadableFile(
            f"read failed here: {exc.strerror or exc}", source=source, line=lineno + 1
        )
        return
    if not seen_any:
        yield empty_jsonl(source)


def empty_jsonl(source: str) -> EmptyDocument:
    """The problem of a JSON Lines input that holds only blank lines."""
    return EmptyDocument("empty JSON Lines input: no documents, only blank lines", source=source)


def _too_large(line: OverlongLine, source: str, lineno: int) -> DocumentTooLarge:
    return DocumentTooLarge(line.message(), source=source, line=lineno)


def size_text(size: int) -> str:
    """A byte count for messages: ``256 MiB``, ``1.5 KiB``, ``12 bytes``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift:
            value = size / (1 << shift)
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{size} bytes"


# ---------------------------------------------------------------- Python values


def lone_surrogate_message(char: str, what: str) -> str:
    """Why a lone surrogate (``char``) in a string or key (``what``) is refused."""
    return (
        f"lone surrogate U+{ord(char):04X} in {what}: not a Unicode character, so it "
        "cannot be written as UTF-8"
    )


def json_problems(value: Any, *, pointer: str = "") -> list[Problem]:
    """Why a Python value is not one strict JSON document, each problem located.

    Walked iteratively, so any depth and cycles are safe: nesting deeper than
    :data:`MAX_DEPTH` (a cycle is infinitely deep), keys that are not strings, values
    of no JSON type, non-finite floats, integers beyond ±(2**53 − 1), and strings or
    keys holding a lone surrogate — what strict intake refuses in text, refused in
    objects too. The one walk over Python values that any depth is safe in: code that
    recurses over a value (cattrs, an encoder) catches its ``RecursionError`` and asks
    this why.
    """
    problems: list[Problem] = []
    on_path: set[int] = set()
    # (value, pointer, depth, leaving): containers are pushed again to leave them.
    stack: list[tuple[Any, str, int, bool]] = [(value, pointer, 0, False)]
    while stack:
        item, at, depth, leaving = stack.pop()
        if leaving:
            on_path.discard(id(item))
            continue
        kind = type(item)
        if kind is dict or kind is list or isinstance(item, (dict, list, tuple)):
            if id(item) in on_path:
                problems.append(Problem("cycle: the value contains itself", "not-json", at))
                continue
            if depth >= MAX_DEPTH:
                message = f"arrays/objects nested deeper than {MAX_DEPTH} levels"
                problems.append(Problem(message, NestingTooDeep.code, at))
                continue
            on_path.add(id(item))
            stack.append((item, at, depth, True))
            if isinstance(item, dict):
                for key, child in reversed(list(item.items())):
                    if not isinstance(key, str):
                        problems.append(
                            Problem(
                                f"object key {short_repr(key)} is a {type(key).__name__}, "
                                "not a string",
                                "not-json",
                                at,
                            )
                        )
                        continue
                    surrogate = _RE.surrogate_char.search(key)
                    if surrogate is not None:
                        message = lone_surrogate_message(surrogate.group(), "object key")
                        problems.append(Problem(message, InvalidEncoding.code, at))
                        continue
                    stack.append((child, f"{at}/{escape_token(key)}", depth + 1, False))
            else:
                for index in range(len(item) - 1, -1, -1):
                    stack.append((item[index], f"{at}/{index}", depth + 1, False))
        elif isinstance(item, str):
            surrogate = _RE.surrogate_char.search(item)
            if surrogate is not None:
                message = lone_surrogate_message(surrogate.group(), "string")
                problems.append(Problem(message, InvalidEncoding.code, at))
        elif isinstance(item, (bool, type(None))):
            continue
        elif isinstance(item, int):
            if not -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:
                message = (
                    f"integer {int_text(item)} is outside ±(2**53 - 1): JCS cannot write it exactly"
                )
                problems.append(Problem(message, NumberOutOfRange.code, at))
        elif isinstance(item, float):
            if not math.isfinite(item):
                problems.append(Problem(f"{item!r} is not a JSON number", NonFiniteNumber.code, at))
        elif hasattr(type(item), "__attrs_attrs__"):
            continue  # a model nested in plain JSON: as_json at the top takes care of it
        else:
            problems.append(Problem(f"{type(item).__name__} is not a JSON value", "not-json", at))
    problems.sort(key=lambda p: p.pointer)
    return problems


def is_strict_json(value: Any) -> bool:
    """Whether :func:`json_problems` finds nothing, decided fast: one iterative walk
    that builds no pointers (a cycle shows as nesting beyond the limit). The precise
    problems are worked out only when this says no.

    Strings are not searched for lone surrogates here: that would cost every string of
    every record, and the encoders meet them anyway (``dumps`` and ``canonicalize``
    then ask :func:`json_problems`, which looks)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    pop, push = stack.pop, stack.append
    limit = MAX_DEPTH
    while stack:
        item, depth = pop()
        if type(item) is dict:
            for key in item:
                if type(key) is not str:
                    return False
            children: Iterable[Any] = item.values()
        elif type(item) is list:
            children = item
        else:  # only the top level is not a container here
            children = (item,)
            depth -= 1
        if depth >= limit:
            return False
        for child in children:
            kind = type(child)
            if kind is str or kind is bool or child is None:
                continue
            if kind is int:
                if not -MAX_SAFE_INTEGER <= child <= MAX_SAFE_INTEGER:
                    return False
            elif kind is float:
                if child - child != 0.0:  # NaN and the infinities
                    return False
            elif kind is dict or kind is list:
                push((child, depth + 1))
            else:
                return False  # a tuple, a subclass, a model, anything else: look closely
    return True
