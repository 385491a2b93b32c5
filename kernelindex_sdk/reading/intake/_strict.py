"""The stdlib path: Python's C scanner with strict hooks, for what the Rust parsers do
not read.

It reads every document where orjson and jiter are not installed, what they cannot
decide alone, text given as ``str``, and the ``strict_numbers`` and ``big_integers``
modes. The hooks are cheap on the common path: ``object_pairs_hook`` compares
``len(dict(pairs))`` with ``len(pairs)``, ``parse_constant`` refuses ``NaN``/``Infinity``,
``parse_int``/``parse_float`` look closely only at long literals, and a regex pre-check on
the text decides whether strings need a surrogate walk at all. A hook that spots a
problem raises a marker and does not work out *where*: the locator (``_locator``,
loaded at the first problem) re-reads the text and raises the first problem, located.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from itertools import accumulate
from typing import Any

from kernelindex_sdk.base.recordformat import MAX_BIG_INTEGER_DIGITS, MAX_DEPTH
from kernelindex_sdk.errors import (
    ByteOrderMark,
    IntakeError,
    InvalidEncoding,
    MalformedJSON,
    NestingTooDeep,
)
from kernelindex_sdk.reading.intake._patterns import RE, WHITESPACE, ws_end
from kernelindex_sdk.reading.intake._problems import big_int_problem, float_problem, int_problem
from kernelindex_sdk.reading.intake._values import has_raw_surrogate

_MIN_NORMAL = sys.float_info.min  # below this, doubles lose precision (subnormals)
_MAX_FLOAT = sys.float_info.max
_BRACKET_DELTA = {"[": 1, "{": 1, "]": -1, "}": -1}

UTF8_BOM = b"\xef\xbb\xbf"
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


class _Reject(Exception):
    """Raised by a hook: something is wrong, and the locator says what."""


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
    if _len(literal) >= 16 and int_problem(literal) is not None:
        raise _Reject
    return _int(literal)


def _parse_big_int(literal: str, _int: type[int] = int, _len: Any = len) -> int:
    if _len(literal) > MAX_BIG_INTEGER_DIGITS and big_int_problem(literal) is not None:
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
    if float_problem(literal, value, strict=True) is not None:
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


def _too_deep(text: str) -> bool:
    """Whether brackets outside strings nest deeper than :data:`MAX_DEPTH`.

    Exact for any prefix the C parser would accept, so it always runs before the
    C parser can recurse too far. Costs two C-level regex passes.
    """
    brackets = RE.non_bracket.sub("", RE.string.sub("", text))
    return max(accumulate(map(_BRACKET_DELTA.__getitem__, brackets)), default=0) > MAX_DEPTH


def _has_surrogate(value: Any) -> bool:
    """Whether any key or string in a parsed value holds a surrogate code point.

    The json module joins escaped *pairs* into one character, so whatever surrogate
    survives parsing is a lone one. Iterative: depth is already bounded, but no need
    to spend the stack.
    """
    search = RE.surrogate_char.search
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
    """Strictly parse decoded text: the C scanner with the hooks, then the locator on
    failure."""
    if (text.count("[") + text.count("{") > MAX_DEPTH and _too_deep(text)) or (
        raw_surrogates and has_raw_surrogate(text)
    ):
        _locate(text, source, first_line, where, strict_numbers, big_integers)
        raise _fallback(text, source, first_line, None)  # pragma: no cover - defensive
    try:
        start = 0
        if text[:1] in WHITESPACE:  # "" in "..." is True: the empty text goes here too
            start = ws_end(text, 0)
        scan = (
            _scan_once_big if big_integers else _scan_once_strict if strict_numbers else _scan_once
        )
        value, end = scan(text, start)
        if end != len(text) and ws_end(text, end) != len(text):
            raise _Reject
    except (_Reject, StopIteration, ValueError, RecursionError) as exc:
        # ValueError covers json.JSONDecodeError and int()'s digit limit.
        _locate(text, source, first_line, where, strict_numbers, big_integers)
        raise _fallback(text, source, first_line, exc) from exc
    if RE.surrogate_escape.search(text) and _has_surrogate(value):
        _locate(text, source, first_line, where, strict_numbers, big_integers)
        raise _fallback(text, source, first_line, None)  # pragma: no cover - defensive
    return value


def _fallback(
    text: str, source: str | None, first_line: int, exc: BaseException | None
) -> IntakeError:
    """An error for when the locator finds nothing wrong in text the scanner refused (a
    bug).

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


def _locate(
    text: str,
    source: str | None,
    first_line: int,
    where: str = "input",
    strict_numbers: bool = False,
    big_integers: bool = False,
) -> None:
    """Raise the first problem of ``text``, located; return if the locator finds none.
    The locator is loaded here, at the first problem."""
    from kernelindex_sdk.reading.intake._locator import Locator

    Locator(text, source, first_line, where, strict_numbers, big_integers).run()


def _check_bom(data: bytes, source: str | None, first_line: int, where: str) -> None:
    """Reject byte-order marks and UTF-16/32 text (RFC 8259 §8.1 wants plain UTF-8)."""
    if data.startswith(UTF8_BOM):
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
        _locate(data.decode("utf-8", "surrogateescape"), source, first_line)
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


def strict_loads(
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
