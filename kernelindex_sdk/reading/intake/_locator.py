"""The locator: re-reads text that a parser refused and raises its first problem, with
line, column and RFC 6901 pointer.

Only a document with a problem gets here, so this pass may be slow; it is a small
iterative (never recursive) pure-Python parser that tracks positions and the pointer,
and asks the same rules as the stdlib path's hooks (``_problems``), so what it
reports is why that path refused. Lines are counted by ``\\n`` (so ``\\r\\n`` files
work) and columns are 1-based code points, not bytes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NoReturn

from kernelindex_sdk.base.escaping import abbreviated
from kernelindex_sdk.base.pointers import escape_token
from kernelindex_sdk.base.recordformat import MAX_DEPTH
from kernelindex_sdk.errors import (
    DuplicateKey,
    EmptyDocument,
    IntakeError,
    InvalidEncoding,
    MalformedJSON,
    NestingTooDeep,
    NonFiniteNumber,
    NumberOutOfRange,
)
from kernelindex_sdk.reading.intake._patterns import RE, WHITESPACE, ws_end
from kernelindex_sdk.reading.intake._problems import (
    big_int_problem,
    constant_message,
    float_problem,
    int_problem,
    lone_surrogate_message,
)


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


@dataclass(eq=False)
class Locator:
    """Re-parse text that the fast path rejected and raise its first problem, located.

    An explicit stack instead of recursion keeps it safe at any depth (it stops at
    :data:`MAX_DEPTH` anyway). Strings are decoded by the json module's own
    ``scanstring`` so string syntax agrees exactly with the fast path.
    """

    text: str
    source: str | None
    first_line: int
    #: What the text is, in messages: "input", or "line" for a JSON Lines record.
    where: str = "input"
    strict_numbers: bool = False
    big_integers: bool = False

    # -- reporting

    def line_column(self, pos: int) -> tuple[int, int]:
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

        The pointer is built only here, from the path of tokens, not once per value: most
        values are never reported.
        """
        pointer = "".join("/" + token for token in (path[:-1] if up else path))
        if pos >= len(self.text):  # "end of input": point just after the last content,
            pos = len(self.text.rstrip(WHITESPACE))  # not at a final newline's next line
        line, column = self.line_column(pos)
        raise cls(message, source=self.source, line=line, column=column, pointer=pointer)

    def found(self, pos: int) -> str:
        """What sits at ``pos``, for 'expected X, found Y' messages."""
        if pos >= len(self.text):
            return "end of input"
        word = RE.word.match(self.text, pos)
        if word:
            return repr(abbreviated(word.group(), 20))
        return repr(self.text[pos])

    # -- lexing

    def skip(self, pos: int) -> int:
        return ws_end(self.text, pos)

    def string(self, pos: int, path: list[str], what: str, up: bool) -> tuple[str, int]:
        """Decode the string starting at the quote at ``pos``; returns (value, end)."""
        try:
            value, end = json.decoder.scanstring(self.text, pos + 1, True)  # type: ignore[attr-defined]
        except json.JSONDecodeError as exc:
            at = exc.pos - (self.text[exc.pos - 1 : exc.pos + 1] == "\\u")  # at the backslash
            self.fail(MalformedJSON, self.string_error(exc, what), at, path, up)
        if RE.surrogate_char.search(value):
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
        atoms = list(RE.string_atom.finditer(self.text, start, stop))
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
                self.fail(NonFiniteNumber, constant_message(name), pos, path)
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
                            if self.where == "line"
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
            line, column = self.line_column(first)
            # On the same line (always so in JSON Lines) the message names no line
            # number: the problem's own location carries it.
            first_at = (
                f"column {column}"
                if line == self.line_column(pos)[0]
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
        match = RE.number.match(text, pos)
        if match is None:
            if text.startswith("-Infinity", pos):
                self.fail(NonFiniteNumber, constant_message("-Infinity"), pos, path)
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
            message = float_problem(literal, float(literal), self.strict_numbers)
        elif self.big_integers:
            message = big_int_problem(literal)
        elif len(literal) >= 16:
            message = int_problem(literal)
        else:
            message = None
        if message is not None:
            self.fail(NumberOutOfRange, message, pos, path)
        return end
