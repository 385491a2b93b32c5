"""Strict JSON intake: every rejection rule, its location, and the happy path."""

from __future__ import annotations

import dataclasses
import io
import itertools
import json
import math
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, cast
from unittest import mock

import orjson
import pytest
import shared_data
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples
from strategies import dumps_with_whitespace, mutate_somewhere

from kernelindex_sdk.errors import (
    ByteOrderMark,
    DuplicateKey,
    EmptyDocument,
    IntakeError,
    InvalidEncoding,
    MalformedJSON,
    NestingTooDeep,
    NonFiniteNumber,
    NumberOutOfRange,
    UnreadableFile,
)
from kernelindex_sdk.models.strategies import json_values
from kernelindex_sdk.reading import intake, sources
from kernelindex_sdk.reading.intake import (
    MAX_DEPTH,
    MAX_SAFE_INTEGER,
    Document,
    _strict,
    loads,
)
from kernelindex_sdk.reading.intake._locator import Locator
from kernelindex_sdk.reading.intake.jsonl import jsonl_records
from kernelindex_sdk.reading.sources import iter_documents, iter_jsonl, load_file

EXAMPLES = Path(__file__).parent / "examples" / "intake"
SEEDS = shared_data.find("seeds") or Path("shared/seeds")


def raises(data: bytes | str, **kwargs: Any) -> IntakeError:
    """The IntakeError that ``loads`` raises for ``data`` (fails if it parses)."""
    with pytest.raises(IntakeError) as info:
        loads(data, **kwargs)
    return info.value


# ------------------------------------------------------------- one example per rule

# file, exception, line, column, pointer, message fragment
EXAMPLE_CASES = [
    ("duplicate-key.json", DuplicateKey, 5, 5, "/spec", 'duplicate key "status"'),
    ("nan.json", NonFiniteNumber, 4, 17, "/spec/measurements/0/value", "NaN is not valid JSON"),
    ("big-int.json", NumberOutOfRange, 2, 16, "/latencyNs", "outside ±(2**53 - 1)"),
    ("inexact-float.json", NumberOutOfRange, 2, 12, "/ratio", "reads as 0.1"),
    ("bad-utf8.json", InvalidEncoding, 2, 16, "/title", "invalid UTF-8: byte 0xE9"),
    ("lone-surrogate.json", InvalidEncoding, 2, 13, "/name", "lone surrogate escape \\ud800"),
    ("bom.json", ByteOrderMark, 1, 1, "", "byte-order mark at start of input"),
    ("empty.json", EmptyDocument, 1, None, "", "empty document"),
    ("malformed.json", MalformedJSON, 3, 14, "/b/2", "expected a JSON value, found ']'"),
    ("trailing-data.json", MalformedJSON, 2, 1, "", "trailing data after the JSON value"),
]


@pytest.mark.parametrize(
    ("name", "error", "line", "column", "pointer", "fragment"),
    EXAMPLE_CASES,
    ids=[case[0] for case in EXAMPLE_CASES],
)
def test_example_file_is_rejected_precisely(
    name: str,
    error: type[IntakeError],
    line: int,
    column: int | None,
    pointer: str,
    fragment: str,
) -> None:
    path = EXAMPLES / name
    # An inexact float is a number (the double it reads as) unless the lint is asked for.
    strict = name == "inexact-float.json"
    with pytest.raises(error) as info:
        load_file(path, strict_numbers=strict)
    problem = info.value.problem
    assert problem.source == str(path)
    assert (problem.line, problem.column, problem.pointer) == (line, column, pointer)
    assert fragment in problem.message
    assert problem.code == error.code
    assert "\n" not in str(info.value)  # one line
    assert str(info.value).startswith(f"{path}:{line}")


def test_every_example_file_is_covered() -> None:
    bad = {p.name for p in EXAMPLES.glob("*.json")} - {"valid.json"}
    assert bad == {case[0] for case in EXAMPLE_CASES}


def test_duplicate_key_names_both_occurrences() -> None:
    error = raises(b'{"a": {"k": 1,\n "k": 2}}', source="d.json")
    assert isinstance(error, DuplicateKey)
    assert error.problem.pointer == "/a"
    assert (error.problem.line, error.problem.column) == (2, 2)
    assert "first at line 1, column 8" in error.problem.message


def test_duplicate_keys_in_different_objects_are_fine() -> None:
    assert loads(b'[{"a": 1}, {"a": 2}, {"b": {"a": 3}, "a": 4}]') == [
        {"a": 1},
        {"a": 2},
        {"b": {"a": 3}, "a": 4},
    ]


def test_pointer_tokens_are_escaped() -> None:
    error = raises(b'{"a/b": {"c~d": [0, NaN]}}')
    assert error.problem.pointer == "/a~1b/c~0d/1"


@pytest.mark.parametrize(
    ("text", "column", "fragment"),
    [
        ("[NaN]", 2, "NaN"),
        ("[1, Infinity]", 5, "Infinity"),
        ('{"x": -Infinity}', 7, "-Infinity"),
    ],
)
def test_non_finite_numbers(text: str, column: int, fragment: str) -> None:
    error = raises(text)
    assert isinstance(error, NonFiniteNumber)
    assert error.problem.column == column
    assert error.problem.message.startswith(fragment + " is not valid JSON")


@pytest.mark.parametrize(
    "literal",
    [
        str(MAX_SAFE_INTEGER + 1),
        str(-MAX_SAFE_INTEGER - 1),
        "1" * 5000,  # beyond Python's int() digit limit: must still be a clean error
        "1e400",
        "-1e400",
    ],
)
def test_numbers_jcs_cannot_keep(literal: str) -> None:
    error = raises(f'{{"n": [{literal}]}}')
    assert isinstance(error, NumberOutOfRange)
    assert (error.problem.line, error.problem.column, error.problem.pointer) == (1, 8, "/n/0")
    assert len(error.problem.message) < 300  # huge literals are abbreviated


@pytest.mark.parametrize(
    ("literal", "value"),
    [
        ("1e-400", 0.0),
        ("0.10000000000000001", 0.1),
        ("9007199254740993.0", 9007199254740992.0),
        ("2.5e-324", 5e-324),  # subnormal
    ],
)
def test_numbers_whose_text_and_value_differ(literal: str, value: float) -> None:
    """Taken as the double they read as (JCS writes its shortest form); refused by the
    --strict-numbers lint, located like every other intake error."""
    assert loads(f'{{"n": [{literal}]}}') == {"n": [value]}
    error = raises(f'{{"n": [{literal}]}}', strict_numbers=True)
    assert isinstance(error, NumberOutOfRange)
    assert (error.problem.line, error.problem.column, error.problem.pointer) == (1, 8, "/n/0")


@pytest.mark.parametrize(
    ("literal", "value"),
    [
        (str(MAX_SAFE_INTEGER), MAX_SAFE_INTEGER),
        (str(-MAX_SAFE_INTEGER), -MAX_SAFE_INTEGER),
        ("1.10", 1.1),
        ("1.100000000000000000000", 1.1),  # long, but the same decimal value
        ("0.30000000000000004", 0.30000000000000004),
        ("70.51395416259766", 70.51395416259766),
        ("1e20", 1e20),
        ("1E+2", 100.0),
        ("5e-324", 5e-324),
        ("0e999", 0.0),
        ("-0.0", -0.0),
        ("-0", 0),
        ("2.2250738585072014e-308", 2.2250738585072014e-308),
        ("1.7976931348623157e308", 1.7976931348623157e308),
    ],
)
def test_numbers_jcs_keeps(literal: str, value: float) -> None:
    parsed = loads(literal)
    assert parsed == value
    assert type(parsed) is type(value)
    assert math.copysign(1, parsed) == math.copysign(1, value)


def test_lone_surrogate_in_key_points_at_the_object() -> None:
    error = raises(b'{"ok": {"\\udc00": 1}}')
    assert isinstance(error, InvalidEncoding)
    assert (error.problem.column, error.problem.pointer) == (10, "/ok")
    assert "object key" in error.problem.message


@pytest.mark.parametrize(
    ("text", "column"),
    [
        ('"\\ud800"', 2),
        ('"\\udfff"', 2),
        ('"\\ud83d\\ud83d\\ude00"', 2),  # the first high escape is the lone one
        ('"\\ud83d\\ude00\\ude00"', 14),  # the second low escape is
        ('"\\ud83dx"', 2),
        ('"\\\\\\ud800"', 4),  # an escaped backslash, then a real escape
    ],
)
def test_lone_surrogate_escapes(text: str, column: int) -> None:
    error = raises(text)
    assert isinstance(error, InvalidEncoding)
    assert error.problem.column == column


def test_paired_and_literal_surrogate_escapes_are_fine() -> None:
    assert loads('["\\ud83d\\ude00", "\\uD83D\\uDE00"]') == ["😀", "😀"]
    assert loads('"\\\\ud800"') == "\\ud800"  # a backslash and the text "ud800"


def test_raw_surrogate_in_str_input() -> None:
    error = raises('["fine", "bad \udcff"]')
    assert isinstance(error, InvalidEncoding)
    assert (error.problem.column, error.problem.pointer) == (15, "/1")


def test_bad_utf8_column_counts_characters_not_bytes() -> None:
    error = raises('{"é": "ü\n  \xff"}'.encode("latin-1").replace(b"\xe9", "é".encode()))
    assert isinstance(error, InvalidEncoding)
    assert (error.problem.line, error.problem.column) == (1, 8)


def test_truncated_utf8_sequence() -> None:
    error = raises(b'"ok \xe2\x82"')
    assert isinstance(error, InvalidEncoding)
    assert error.problem.column == 5


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"\xef\xbb\xbf{}", "byte-order mark at start of input"),
        ("\ufeff{}", "byte-order mark at start of input"),
        ("{}".encode("utf-16"), "UTF-16"),
        ("{}".encode("utf-32"), "UTF-32"),
        (b"\xfe\xff\x00{\x00}", "UTF-16 (big-endian)"),
        (b"\x00\x00\xfe\xff", "UTF-32 (big-endian)"),
    ],
)
def test_byte_order_marks(data: bytes | str, fragment: str) -> None:
    error = raises(data)
    assert isinstance(error, ByteOrderMark)
    assert (error.problem.line, error.problem.column) == (1, 1)
    assert fragment in error.problem.message
    assert "RFC 8259 §8.1" in error.problem.message


def test_utf16_without_bom_is_an_encoding_error() -> None:
    error = raises("{}".encode("utf-16-le"))
    assert isinstance(error, InvalidEncoding)
    assert "UTF-16 or UTF-32" in error.problem.message


@pytest.mark.parametrize("data", [b"", b"   ", b" \n\t\r\n", ""])
def test_empty_documents(data: bytes | str) -> None:
    assert isinstance(raises(data), EmptyDocument)


@pytest.mark.parametrize(
    ("text", "line", "column", "fragment"),
    [
        ("[1, 2", 1, 6, "expected ',' or ']' after array element, found end of input"),
        ('{"a" 1}', 1, 6, "expected ':' after object key"),
        ('{"a": 1,}', 1, 9, "expected a double-quoted object key, found '}'"),
        ("{'a': 1}", 1, 2, "expected a double-quoted object key"),
        ("[True]", 1, 2, "found 'True'"),
        ("[01]", 1, 2, "leading zeros"),
        ("[1.]", 1, 2, "digits must follow"),
        ("[-]", 1, 2, "invalid number"),
        ('"abc', 1, 1, "unterminated string"),
        ('"a\tb"', 1, 3, "control character U+0009"),
        ('"a\\xb"', 1, 3, "invalid escape \\x"),
        ('"\\u12"', 1, 2, "\\u needs exactly four hex digits"),
        ("{}\n\n  x", 3, 3, "trailing data"),
        ("1 2", 1, 3, "trailing data"),
    ],
)
def test_malformed(text: str, line: int, column: int, fragment: str) -> None:
    error = raises(text)
    assert isinstance(error, MalformedJSON)
    assert (error.problem.line, error.problem.column) == (line, column)
    assert fragment in error.problem.message


def test_first_line_offsets_reported_lines() -> None:
    error = raises(b'{"a": 1,\n "a": 2}', source="x.jsonl", first_line=41)
    assert (error.problem.source, error.problem.line, error.problem.column) == ("x.jsonl", 42, 2)


def test_first_problem_in_document_order_wins() -> None:
    error = raises('{"a": 1, "a": 2, "b": NaN, "c": [}')
    assert isinstance(error, DuplicateKey)


# ----------------------------------------------------------------------- nesting


def test_nesting_at_the_limit_is_fine() -> None:
    text = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert loads(text) is not None


def test_nesting_one_past_the_limit() -> None:
    error = raises("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    assert isinstance(error, NestingTooDeep)
    assert (error.problem.line, error.problem.column) == (1, MAX_DEPTH + 1)
    assert error.problem.pointer == "/0" * MAX_DEPTH


@pytest.mark.parametrize("closed", [True, False])
def test_hundred_thousand_deep_array(closed: bool) -> None:
    depth = 100_000
    text = "[" * depth + ("]" * depth if closed else "")
    assert isinstance(raises(text), NestingTooDeep)


def test_hundred_thousand_deep_object() -> None:
    depth = 100_000
    error = raises('{"a":' * depth + "1" + "}" * depth)
    assert isinstance(error, NestingTooDeep)
    assert error.problem.pointer == "/a" * MAX_DEPTH


def test_brackets_inside_strings_do_not_count() -> None:
    deep_string = json.dumps("[" * 10_000 + '\\"{' * 1000)
    assert loads(f"[{deep_string}, {{}}]") == [json.loads(deep_string), {}]


# ------------------------------------------------------------------- valid inputs


def test_valid_fixture() -> None:
    value = load_file(EXAMPLES / "valid.json")
    assert value["metadata"]["name"] == "café-run"
    assert value["spec"]["escapes"].endswith("emoji😀 literal-backslash-u \\ud800")
    assert value["spec"]["numbers"][-1] == 0.30000000000000004


@pytest.mark.skipif(not SEEDS.is_dir(), reason="shared/seeds not present (tests/shared_data.py)")
@pytest.mark.parametrize("path", sorted(SEEDS.glob("*.json")) if SEEDS.is_dir() else [])
def test_seed_loads(path: Path) -> None:
    data = path.read_bytes()
    assert load_file(path) == json.loads(data)
    assert loads(data.decode()) == json.loads(data)


def test_bytearray_and_memoryview() -> None:
    assert loads(bytearray(b'{"a": [1]}')) == {"a": [1]}  # type: ignore[arg-type]
    assert loads(memoryview(b"[true]")) == [True]  # type: ignore[arg-type]


# Hypothesis: anything json.dumps writes from JCS-safe values reads back unchanged.
_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=20)  # no surrogates
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _text
)
_json_values = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(_text, children, max_size=5),
    max_leaves=40,
)


@settings(max_examples=examples(300), deadline=None)
@given(_json_values, st.sampled_from([None, 1]), st.booleans())
def test_dumps_roundtrip(value: Any, indent: int | None, ensure_ascii: bool) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=ensure_ascii)
    assert loads(text) == value
    assert loads(text.encode()) == value
    # The locating pass must agree that nothing is wrong (it runs only on failures,
    # and must never invent a problem the fast path did not see).
    Locator(text, None, 1).run()


_NOISE = st.sampled_from([*'[]{}",:0123456789-+.eE \\\n\tuNaIfityrlsx', "\ud800", "é"])


@settings(max_examples=examples(200), deadline=None)
@given(_json_values, st.lists(st.tuples(st.integers(0, 10_000), _NOISE), max_size=3), st.data())
def test_mutated_input_is_accepted_or_located(
    value: Any, edits: list[tuple[int, str]], data: st.DataObject
) -> None:
    """Fuzz: damaged JSON either parses (then json agrees) or raises a located IntakeError.

    The fast path and the locating pass must agree: a disagreement would surface as
    the defensive ``_strict._fallback`` error, which this test forbids.
    """
    text = json.dumps(value, indent=data.draw(st.sampled_from([None, 1])))
    for where, noise in edits:
        at = where % (len(text) + 1)
        if data.draw(st.booleans()):
            text = text[:at] + noise + text[at + 1 :]
        else:
            text = text[:at] + noise + text[at:]
    disagreement = AssertionError("the locating pass found no problem")
    try:
        with mock.patch.object(_strict, "_fallback", side_effect=disagreement):
            parsed = loads(text)
    except IntakeError as error:
        assert error.problem.line is not None
        return
    assert parsed == json.loads(text)


# ------------------------------------------------------------------------ files


def test_load_file_missing(tmp_path: Path) -> None:
    with pytest.raises(UnreadableFile) as info:
        load_file(tmp_path / "nope.json")
    assert info.value.problem.message == "no such file or directory"
    assert info.value.problem.source == str(tmp_path / "nope.json")


def test_load_file_directory(tmp_path: Path) -> None:
    with pytest.raises(UnreadableFile) as info:
        load_file(tmp_path)
    assert "directory" in info.value.problem.message


@pytest.mark.parametrize("size", [0, 1, 4095, 65536, 65537, 200_001])
def test_read_bytes_whole_file(tmp_path: Path, size: int) -> None:
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    path = tmp_path / "f.json"
    path.write_bytes(data)
    assert sources.read_bytes(path) == data


def test_read_bytes_when_size_is_unknown() -> None:
    """Regular files whose size fstat does not know (/proc) are read to the end."""
    proc = Path("/proc/self/status")
    if not proc.is_file():
        pytest.skip("no /proc here")
    assert proc.stat().st_size == 0  # what makes the case
    data = sources.read_bytes(proc)
    assert data.startswith(b"Name:") and data.endswith(b"\n")


def test_read_bytes_when_file_grows(tmp_path: Path) -> None:
    """A file longer than fstat said (appended meanwhile) is still read whole."""
    path = tmp_path / "f.json"
    path.write_bytes(b"[1, 2]")
    real_fstat = os.fstat

    def stale_fstat(fd: int) -> Any:
        result = real_fstat(fd)
        return mock.Mock(st_size=result.st_size - 3, st_mode=result.st_mode)

    with mock.patch.object(sources.os, "fstat", stale_fstat):
        assert sources.read_bytes(path) == b"[1, 2]"


# ------------------------------------------------------------------- JSON Lines


def jsonl(data: bytes, source: str = "r.jsonl") -> list[Document | IntakeError]:
    return list(iter_jsonl(io.BytesIO(data), source=source))


def test_jsonl_bad_line_in_the_middle() -> None:
    results = jsonl(b'{"n": 1}\n{"n": 2\n{"n": 3}\n{"n": NaN}\n{"n": 5}\n')
    assert [r.value["n"] for r in results if isinstance(r, Document)] == [1, 3, 5]
    assert [r.line for r in results if isinstance(r, Document)] == [1, 3, 5]
    errors = [r for r in results if isinstance(r, IntakeError)]
    assert [(type(e), e.problem.line) for e in errors] == [
        (MalformedJSON, 2),
        (NonFiniteNumber, 4),
    ]
    assert str(errors[1]).startswith("r.jsonl:4:7: /n: NaN")


def test_jsonl_crlf_and_blank_lines() -> None:
    results = jsonl(b'\r\n{"n": 1}\r\n  \r\n\t\n{"n": 2}\r\n\r\n')
    assert results == [Document("r.jsonl", 2, {"n": 1}), Document("r.jsonl", 5, {"n": 2})]


@pytest.mark.parametrize("line", [b'{"n":0.10000000000000001}', b'{"n": 0.10000000000000001}'])
def test_jsonl_lines_get_the_strict_numbers_lint(line: bytes) -> None:
    """JSON Lines lines, compact (orjson's path) or not (jiter's), are linted when
    asked, at their own line, and read as their double when not."""
    data = b'{"n":1}\n' + line + b"\n"
    plain = list(iter_jsonl(io.BytesIO(data), source="r.jsonl"))
    assert plain == [Document("r.jsonl", 1, {"n": 1}), Document("r.jsonl", 2, {"n": 0.1})]
    linted = list(iter_jsonl(io.BytesIO(data), source="r.jsonl", strict_numbers=True))
    assert linted[0] == Document("r.jsonl", 1, {"n": 1})
    assert isinstance(linted[1], NumberOutOfRange)
    assert (linted[1].problem.line, linted[1].problem.pointer) == (2, "/n")


def test_jsonl_documents_are_frozen_documents() -> None:
    """The JSON Lines loop builds its Documents without the dataclass's __init__:
    still equal, printed and frozen as one built the usual way."""
    (built,) = jsonl(b'{"n": 1}\n')
    assert type(built) is Document and built == Document("r.jsonl", 1, {"n": 1})
    assert repr(built) == repr(Document("r.jsonl", 1, {"n": 1}))
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.line = 2  # type: ignore[misc]
    assert dataclasses.replace(built, line=7) == Document("r.jsonl", 7, {"n": 1})


def test_jsonl_last_line_without_newline() -> None:
    assert jsonl(b'{"n": 1}\n{"n": 2}') == [
        Document("r.jsonl", 1, {"n": 1}),
        Document("r.jsonl", 2, {"n": 2}),
    ]


@pytest.mark.parametrize("data", [b"", b"\n\n", b" \r\n"])
def test_jsonl_empty_stream(data: bytes) -> None:
    results = jsonl(data)
    assert len(results) == 1
    assert isinstance(results[0], EmptyDocument)
    assert results[0].problem.source == "r.jsonl"


def test_jsonl_utf8_bom_is_reported_and_reading_goes_on() -> None:
    results = jsonl(b'\xef\xbb\xbf{"n": 1}\n{"n": 2}\n')
    assert isinstance(results[0], ByteOrderMark)
    assert results[0].problem.line == 1
    assert results[1] == Document("r.jsonl", 2, {"n": 2})


def test_jsonl_utf16_stops_at_the_bom() -> None:
    results = jsonl('{"n": 1}\n{"n": 2}\n'.encode("utf-16"))
    assert len(results) == 1
    assert isinstance(results[0], ByteOrderMark)


def test_jsonl_trailing_data_hint() -> None:
    (error,) = jsonl(b'{"n": 1} {"n": 2}\n')
    assert isinstance(error, MalformedJSON)
    assert "one document per line" in error.problem.message


class _LinesOnly:
    """A stream read a line at a time, never longer than asked: reading it whole fails."""

    def __init__(self, lines: Iterator[bytes]) -> None:
        self._lines = lines

    def readline(self, size: int = -1) -> bytes:
        line = next(self._lines, b"")
        assert size > 0, "iter_jsonl must bound every line it reads"
        assert len(line) <= size
        return line

    def read(self, size: int = -1) -> bytes:
        raise AssertionError("iter_jsonl must not read the whole stream")


def test_jsonl_streams_line_by_line() -> None:
    endless = (b'{"n": %d}\n' % i for i in itertools.count(1))
    stream = cast(BinaryIO, _LinesOnly(endless))
    first = list(itertools.islice(iter_jsonl(stream, source="s"), 3))
    assert [d.value["n"] for d in first if isinstance(d, Document)] == [1, 2, 3]


def test_iter_documents_by_suffix() -> None:
    results = list(iter_documents(str(EXAMPLES / "records.jsonl")))
    assert [type(r).__name__ for r in results] == ["Document", "DuplicateKey", "Document"]
    assert [r.line if isinstance(r, Document) else r.problem.line for r in results] == [1, 3, 4]
    (whole,) = iter_documents(str(EXAMPLES / "valid.json"))
    assert isinstance(whole, Document)
    assert whole.line is None


def test_iter_documents_forced_modes(tmp_path: Path) -> None:
    path = tmp_path / "data.txt"
    path.write_bytes(b'{"n": 1}\n{"n": 2}\n')
    assert len(list(iter_documents(str(path), jsonl=True))) == 2
    (error,) = iter_documents(str(path))
    assert isinstance(error, MalformedJSON)


def test_iter_documents_unreadable(tmp_path: Path) -> None:
    (missing,) = iter_documents(str(tmp_path / "gone.jsonl"))
    assert isinstance(missing, UnreadableFile)
    (directory,) = iter_documents(str(tmp_path))
    assert isinstance(directory, UnreadableFile)


def stdin(data: bytes, **kwargs: Any) -> list[Document | IntakeError]:
    return list(iter_documents("-", stdin=io.BytesIO(data), **kwargs))


def test_stdin_pretty_document() -> None:
    results = stdin(b'\n{\n  "a": [1,\n 2]\n}\n')
    assert results == [Document("<stdin>", None, {"a": [1, 2]})]


def test_stdin_single_line_document() -> None:
    assert stdin(b'\n{"a": 1}\n\n') == [Document("<stdin>", None, {"a": 1})]


def test_stdin_sniffs_json_lines() -> None:
    results = stdin(b'{"n": 1}\n\n{"n": 2}\n{bad\n{"n": 4}\n')
    assert [r.line if isinstance(r, Document) else r.problem.line for r in results] == [1, 3, 4, 5]
    assert all(r.problem.source == "<stdin>" for r in results if isinstance(r, IntakeError))
    assert isinstance(results[2], MalformedJSON)


def test_stdin_first_line_with_a_non_syntax_problem_is_still_json_lines() -> None:
    results = stdin(b'{"n": 1, "n": 1}\n{"n": 2}\n')
    assert isinstance(results[0], DuplicateKey)
    assert results[1] == Document("<stdin>", 2, {"n": 2})


def test_stdin_malformed_document_is_read_whole() -> None:
    (error,) = stdin(b"{\n  \"a\": 1,\n  'b': 2\n}\n")
    assert isinstance(error, MalformedJSON)
    assert (error.problem.source, error.problem.line, error.problem.column) == ("<stdin>", 3, 3)


def test_stdin_empty() -> None:
    (error,) = stdin(b"  \n")
    assert isinstance(error, EmptyDocument)


def test_stdin_forced_modes() -> None:
    assert stdin(b'{"n": 1}\n{"n": 2}\n', jsonl=False)[0].__class__ is MalformedJSON
    assert stdin(b"[1,\n2]\n", jsonl=False) == [Document("<stdin>", None, [1, 2])]
    assert len(stdin(b"[1]\n", jsonl=True)) == 1


# --------------------------------------------------------------- the Rust fast path


def _outcome(data: bytes, fast: bool) -> Any:
    """What ``loads`` makes of ``data`` with or without jiter: the value and its types,
    or the error's type and problem."""
    saved = intake.RUST_PARSERS
    if not fast:
        intake.RUST_PARSERS = False
    try:
        value = loads(data, source="x")
        return ("value", json.dumps(value), repr(value))
    except IntakeError as error:
        return ("error", type(error).__name__, error.problem)
    finally:
        intake.RUST_PARSERS = saved


_NASTY = st.sampled_from(
    [b"1e400", b"-1e309", b"9007199254740993", b"12345678901234567890", b"0.10000000000000001",
     b'"\\ud800"', b'"\\ud83d\\ude00"', b"NaN", b"Infinity", b"01", b"1.", b'"\\x"', b'"a\x01"',
     b"\xef\xbb\xbf{}", b"\xff", b'{"a":1,"a":2}', b"[1,]", b"[" * 210 + b"]" * 210, b"",
     b"\x0c[]", b"1e-400", b"5e-324", b"-0", b'"\xed\xa0\x80"', b"[1]x"]
)  # fmt: skip


def _compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "replace")


#: Compact documents orjson reads without complaint that the strict parser refuses
#: (or reads otherwise): the byte comparison must send each elsewhere.
_NASTY_COMPACT = st.sampled_from(
    [b'{"a":1,"a":1}', b'{"a":1,"a":2}', b'[{"a":{},"a":{}}]', b'{"b":[],"a":0,"b":[]}',
     b"18446744073709551616", b"[18446744073709551615]", b"9007199254740992",
     b"-9007199254740992", b'{"a":9007199254740991}', b"1e16", b"1E400", b"[1.0]", b"-0",
     b"-0.0", b"1e-05", b'"\\u00e9"', b'"\\/"', b"[]\n", b"[]\r\n", b"[]\n\n", b"[] "]
)  # fmt: skip


def test_the_orjson_path_takes_compact_documents_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """A compact document orjson writes back byte for byte never reaches jiter."""

    def jiter_is_not_called(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("jiter called")

    monkeypatch.setattr(intake, "_jiter_from_json", jiter_is_not_called)
    value = {"run": {"a": [1, 2.5, None, True, "é"], "b": {}}, "n": -3}
    for text in (_compact(value), _compact(value) + b"\n", _compact(value) + b"\r\n"):
        assert loads(text) == value
    with pytest.raises(AssertionError):  # a duplicate key: not for orjson's path
        loads(b'{"a":1,"a":1}')


def _indented(value: Any) -> bytes:
    """``json.dumps(value, indent=2, ensure_ascii=False)``: how kernelindex's importers
    (and many tools) write files, and what orjson's ``OPT_INDENT_2`` writes."""
    return json.dumps(value, indent=2, ensure_ascii=False).encode("utf-8", "replace")


#: Indented documents orjson reads without complaint that the strict parser refuses
#: (or reads otherwise), or that are not quite orjson's form.
_NASTY_INDENTED = st.sampled_from(
    [b'{\n  "a": 1,\n  "a": 1\n}', b'{\n  "a": 1,\n  "a": 2\n}\n',
     b'[\n  {\n    "a": {},\n    "a": {}\n  }\n]', b'{\n  "b": [],\n  "a": 0,\n  "b": []\n}',
     b'{\n  "a": 18446744073709551616\n}', b"[\n  9007199254740992\n]",
     b"[\n  -9007199254740992\n]", b'{\n  "a": 1e16\n}', b"[\n  1E400\n]", b"[\n  1.0\n]",
     b"[\n  -0\n]", b"[\n  -0.0\n]", b"[\n  1e-05\n]", b'[\n  "\\u00e9"\n]', b'[\n  "\\/"\n]',
     b"[\n  NaN\n]", b"[\n  Infinity\n]", b'{\n  "a": "\\ud800"\n}', b'{\n  "a": 1\n}\n\n',
     b'{\n  "a": 1\n} ', b'{\n  "a": 1\n}\r\n', b'{\n  "a": 1\r\n}', b'{\n  "a":1\n}',
     b'{\n  "a": [\n  ]\n}', b'{\n  "a": {}\n}', b'\xef\xbb\xbf{\n  "a": 1\n}',
     b'{\n  "a": "\xed\xa0\x80"\n}', b'{\n  "a": 1\n}x']
)  # fmt: skip


def _pandas_like(value: Any) -> bytes:
    """What pandas' ``to_json(orient="records", lines=True)`` writes of a record (its
    ujson: compact, ASCII-escaped, ``/`` escaped as ``\\/``). Every ``/`` of JSON text is
    inside a string, so escaping them all is what ujson does."""
    return json.dumps(value, separators=(",", ":")).replace("/", "\\/").encode()


def _go_like(value: Any) -> bytes:
    """What Go's ``encoding/json`` (``json.Marshal``, HTML escaping on, its default)
    writes of a record: compact, UTF-8, but ``<``, ``>`` and ``&`` as ``\\u003c``,
    ``\\u003e`` and ``\\u0026``, and U+2028/U+2029 escaped. Those characters are only
    ever inside strings, so replacing them all is what Go does. (Go writes some floats
    otherwise too; the reader never sees the writer's floats again.)"""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    for char, escape in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(char, escape)
    return text.encode("utf-8", "replace")


#: What .NET's System.Text.Json writes as itself in a string: printable ASCII less the
#: characters its default encoder (``JavaScriptEncoder.Default``) escapes for HTML.
_DOTNET_PLAIN = frozenset(map(chr, range(0x20, 0x7F))) - set("\"&'+<>`\\")
_DOTNET_SHORT = {"\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _dotnet_string(text: str) -> str:
    out = ['"']
    for char in text:
        if char in _DOTNET_PLAIN:
            out.append(char)
        elif char in _DOTNET_SHORT:
            out.append(_DOTNET_SHORT[char])
        elif ord(char) > 0xFFFF:  # a surrogate pair, each half escaped
            high, low = divmod(ord(char) - 0x10000, 0x400)
            out.append(f"\\u{0xD800 + high:04X}\\u{0xDC00 + low:04X}")
        else:
            out.append(f"\\u{ord(char):04X}")
    out.append('"')
    return "".join(out)


def _dotnet_like(value: Any) -> bytes:
    """What .NET's ``JsonSerializer.Serialize`` writes with its default options: compact;
    in strings every character outside printable ASCII, and ``"``, ``&``, ``'``, ``+``,
    ``<``, ``>`` and the backtick, as ``\\uXXXX`` with upper-case digits (so ``<`` is
    ``\\u003C``); doubles in the shortest round-trip form with ``E`` (``1E-05``,
    ``3.25E+16``). It refuses NaN and the infinities, as .NET does."""

    def write(item: Any) -> str:
        if isinstance(item, dict):
            return "{" + ",".join(_dotnet_string(k) + ":" + write(v) for k, v in item.items()) + "}"
        if isinstance(item, list):
            return "[" + ",".join(map(write, item)) + "]"
        if isinstance(item, str):
            return _dotnet_string(item)
        if item is None or isinstance(item, bool):
            return json.dumps(item)
        if isinstance(item, float):
            if not math.isfinite(item):
                raise TypeError(".NET refuses a non-finite double")
            return repr(item).upper()
        return str(item)

    return write(value).encode()


#: The writers people use, each as a function from a value to its JSON text: orjson,
#: Python's json in its common settings, pandas' form, Go's, .NET's, and a hand-spaced
#: form.
WRITERS: dict[str, Any] = {
    "orjson": orjson.dumps,
    "orjson OPT_INDENT_2": lambda v: orjson.dumps(v, option=orjson.OPT_INDENT_2),
    "json.dumps(d)": lambda v: json.dumps(v).encode("utf-8", "replace"),
    "compact, ensure_ascii=False": _compact,
    "compact, ASCII": lambda v: json.dumps(v, separators=(",", ":")).encode(),
    "spaces, ensure_ascii=False": lambda v: json.dumps(v, ensure_ascii=False).encode(
        "utf-8", "replace"
    ),
    "indent=2": lambda v: json.dumps(v, indent=2).encode(),
    "indent=2, ensure_ascii=False": _indented,
    "indent=4": lambda v: json.dumps(v, indent=4).encode(),
    "pandas to_json(lines=True)": _pandas_like,
    "Go encoding/json": _go_like,
    ".NET System.Text.Json": _dotnet_like,
    "spaces around every token": lambda v: json.dumps(v, separators=(" , ", " : ")).encode(),
}


def _written(writer: str, value: Any) -> bytes | None:
    """``value`` as ``writer`` writes it, or None where it cannot (orjson refuses
    integers beyond 64 bits and writes NaN as null)."""
    try:
        return cast(bytes, WRITERS[writer](value))
    except (TypeError, orjson.JSONEncodeError):
        return None


_RECORD = {
    "title": "GeGLU MLP · liger — ünïcode",
    "kernel": "gemm<128, 64> & epilogue\u2028",
    "url": "https://example.com/a/b?c=d:e",
    "times": "2024-09-03T15:38:37Z",
    "values": [1, -2, 0.5, 1e-05, 3.25e16, -0.0, 9007199254740991, None, True, False],
    "nested": {"a:b": {"": []}, 'quote"': "back\\slash\n"},
}


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_the_orjson_path_takes_every_writer_alone(
    writer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A document from any common writer is read by orjson alone: jiter never runs,
    and the value is the stdlib path's."""

    def jiter_is_not_called(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("jiter called")

    text = WRITERS[writer](_RECORD)
    expected = _outcome(text, fast=False)
    monkeypatch.setattr(intake, "_jiter_from_json", jiter_is_not_called)
    for line in (text, text + b"\n", text + b"\r\n"):
        assert loads(line) == _RECORD
        assert _outcome(line, fast=True) == expected


@pytest.mark.parametrize(
    "text",
    [
        b'{"a":1,"a":2}',
        b'{"a": 1, "a": 1}',
        b'{\n  "b": [],\n  "a": 0,\n  "b": []\n}',
        b'{"a":1,"\\u0061":2}',
        # a duplicate whose colon the text hides as \u003a: the count alone would agree
        b'{"a":1,"a":2,"b":"\\u003a"}',
        b'{"a": 1, "a": 2, "b": "\\u003A"}',
        # ...also after another \u003 escape, as Go writes "<"
        b'{"a":1,"a":2,"b":"\\u003c\\u003a"}',
        b'{"a":1,"a":2,"b":"\\u003e","c":"\\u003A"}',
        # beyond 64 bits orjson reads a float, and writes it with e+
        b"[18446744073709551616]",
        b"[ -9223372036854775809, 1.5 ]",
        b'{"n": 123456789012345678901234567890}',
        b"[9007199254740992]",
        b"[ 18446744073709551615 ]",
    ],
)
def test_what_orjson_merges_or_rewrites_is_refused(text: bytes) -> None:
    """Duplicate keys (orjson keeps the last) and unsafe integers (orjson reads them,
    as floats beyond 64 bits) are refused on the fast path as on the stdlib path."""
    assert _outcome(text, fast=False)[0] == "error"
    assert _outcome(text, fast=True) == _outcome(text, fast=False)


@pytest.mark.parametrize(
    "text",
    [
        b'{"a":"\\u003a"}',
        b'{"a":"\\u003c\\u003A"}',
        b'{"a":"\\u003c","b":"\\u003a"}',
        b'{"a":"\\\\u003a"}',
        b'[1e16, "1234567890123456789012"]',
        b"[1.8446744073709552e+19]",
    ],
)
def test_what_the_counting_cannot_decide_goes_to_jiter(text: bytes) -> None:
    """A ``\\u003a`` escape, or a long run of digits beside a float of 1e16 or more,
    leaves the verdict to jiter: accepted, as on the stdlib path."""
    assert _outcome(text, fast=True) == _outcome(text, fast=False)
    assert _outcome(text, fast=True)[0] == "value"


@settings(max_examples=examples(500), deadline=None)
@given(st.data())
def test_every_writer_gets_the_stdlib_paths_verdicts(data: st.DataObject) -> None:
    """Each writer's text of any value, and of the value with a duplicate key or a
    hidden colon added, read with the Rust parsers or without: the same verdict and
    value."""
    if not intake.RUST_PARSERS:
        pytest.skip("jiter is not installed")
    value = data.draw(json_values | st.dictionaries(st.text(max_size=6), json_values, max_size=5))
    writer = data.draw(st.sampled_from(sorted(WRITERS)))
    text = _written(writer, value)
    if text is None:
        text = WRITERS["json.dumps(d)"](value)
    pieces = [text]
    if isinstance(value, dict) and value:
        key = data.draw(st.sampled_from(sorted(value)))
        member = _written(writer, {key: data.draw(json_values)}) or b"{}"
        if member[1:-1].strip():
            # the same key again, first, written as this writer writes it
            pieces.append(member[:-1].rstrip() + b"," + text[1:])
        pieces.append(text[:-1].rstrip() + b',"x":"\\u003a"}' if text[1:-1].strip() else text)
    document = data.draw(st.sampled_from(pieces))
    if data.draw(st.booleans()):
        document += data.draw(st.sampled_from([b"\n", b"\r\n", b" "]))
    assert _outcome(document, fast=True) == _outcome(document, fast=False)
    _assert_written_is_orjsons(document)


def _assert_written_is_orjsons(text: bytes) -> None:
    """A JSON Lines record's ``written``, where the intake hands one up, is
    ``orjson.dumps`` of its value byte for byte: what the validation proves its memo's
    bytes against (``ValidationSession.passes``)."""
    for line in text.split(b"\n"):
        for document in jsonl_records([line], "r.jsonl", 1, True):
            if isinstance(document, Document) and document.written is not None:
                assert document.written == orjson.dumps(document.value)


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_json_lines_records_carry_orjsons_bytes(writer: str) -> None:
    """Every writer's one-line text of a record read on the fast path hands up
    ``orjson.dumps`` of the value; the stdlib path and a whole file hand up nothing, and
    a Document built by hand has none either (no argument sets it)."""
    text = WRITERS[writer](_RECORD)
    if b"\n" in text:
        return  # an indented writer: no JSON Lines
    (document,) = jsonl_records([text + b"\n"], "r.jsonl", 1, False)
    assert isinstance(document, Document) and document.written == orjson.dumps(_RECORD)
    (strict,) = jsonl_records([text + b"\n"], "r.jsonl", 1, False, strict_numbers=True)
    assert isinstance(strict, Document) and strict.written is None
    assert Document("r.jsonl", 1, _RECORD).written is None
    assert dataclasses.replace(document, line=2).written is None
    assert document == Document("r.jsonl", 1, _RECORD)  # not compared, not printed
    assert "written" not in repr(document)


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        (b'{ "a": 1e400 }', True),
        (b'{ "a": [-1e309, null] }', True),
        (b'{ "a": "null", "b": 1E999 }', True),
        (b'{ "a": null, "b": "null" }', False),
        (b'{ "a": "nu\\u006cl" }', False),
        (b'{ "a": 1e308 }', False),
    ],
)
def test_an_infinity_jiter_reads_is_refused_with_or_without_null(
    text: bytes, refused: bool
) -> None:
    """jiter reads a number beyond the double range as infinity; orjson writes it as
    ``null``, which the text does not hold there. Indented: not orjson's path."""
    assert _outcome(text, fast=True) == _outcome(text, fast=False)
    assert (_outcome(text, fast=True)[0] == "error") is refused


@settings(max_examples=examples(500), deadline=None)
@given(st.data())
def test_jiter_and_the_stdlib_path_agree(data: st.DataObject) -> None:
    """Every verdict and every value the same, with the Rust parser or without it."""
    if not intake.RUST_PARSERS:
        pytest.skip("jiter is not installed")
    rnd = random.Random(data.draw(st.integers(0, 2**32)))
    value = data.draw(json_values)
    text = dumps_with_whitespace(value, rnd).encode()
    compact = _compact(value)
    pieces = [text, data.draw(_NASTY)]
    if data.draw(st.booleans()):
        pieces = [json.dumps(mutate_somewhere(value, rnd)).encode()]
    if data.draw(st.booleans()):  # what orjson's path takes, and what it must not
        pieces = [compact, data.draw(_NASTY_COMPACT)]
        if isinstance(value, dict) and value:
            key = _compact(rnd.choice(sorted(value)))
            pieces.append(b"{" + key + b":0," + compact[1:])  # a duplicate key
        pieces = [rnd.choice(pieces)]
    if data.draw(st.booleans()):  # the same, indented by two spaces
        indented = _indented(value)
        pieces = [indented, indented + b"\n", data.draw(_NASTY_INDENTED)]
        if isinstance(value, dict) and value:
            key = _compact(rnd.choice(sorted(value)))
            pieces.append(b"{\n  " + key + b": 0," + indented[1:])  # a duplicate key
        pieces = [rnd.choice(pieces)]
    document = b"[" + b",".join(pieces) + b"]" if data.draw(st.booleans()) else pieces[0]
    assert _outcome(document, fast=True) == _outcome(document, fast=False)


# --------------------------------------------------------------------------- schema files


def test_big_integers_are_kept_exactly_where_asked_for() -> None:
    """A schema file's bound may be any integer (a Java long's range): ``big_integers``
    keeps it as the exact int, where a record's intake refuses it (JCS cannot hash it)."""
    text = b'{"minimum": -9223372036854775808, "maximum": 9007199254740993, "m": 0.01}'
    value = loads(text, big_integers=True)
    assert value == {"minimum": -(2**63), "maximum": 2**53 + 1, "m": 0.01}
    assert type(value["maximum"]) is int
    with pytest.raises(NumberOutOfRange):
        loads(text)


def test_big_integers_keep_every_other_rule() -> None:
    with pytest.raises(DuplicateKey):
        loads(b'{"a": 1, "a": 2}', big_integers=True)
    with pytest.raises(NonFiniteNumber):
        loads(b'{"a": NaN}', big_integers=True)
    with pytest.raises(NumberOutOfRange, match="more than 400 digits"):
        loads(b'{"a": ' + b"9" * 401 + b"}", big_integers=True, source="s.json")


# ------------------------------------------------------------------ loaded at first need

#: Prints, at exit, the intake's private modules and the tail memo's module that the
#: command loaded.
_LOADED = (
    "import atexit, sys\n"
    "atexit.register(lambda: sys.stderr.write(' '.join(sorted(\n"
    "    m.rpartition('.')[2] for m in sys.modules\n"
    "    if m.startswith('kernelindex_sdk.reading.intake.') or m.endswith('.sharedtails')\n"
    ")) + '\\n'))\n"
    "from kernelindex_sdk.cli.main import main\n"
    "main(sys.argv[1:])\n"
)


@pytest.mark.parametrize(
    ("lines", "loaded"),
    [
        (None, ""),  # one valid JSON file: the common path, nothing more
        ([b"{}\n"], "jsonl sharedtails"),  # JSON Lines, read with the tail memo
        (
            [b'{"a": 1, "a": 2}\n'],
            "_locator _patterns _problems _strict _values jsonl sharedtails",
        ),
    ],
    ids=["one-file", "json-lines", "a-problem"],
)
def test_what_validate_loads_is_what_its_input_needs(
    tmp_path: Path, lines: list[bytes] | None, loaded: str
) -> None:
    """``kernelindex validate one.json`` loads no module of the intake beyond its
    ``__init__``, nor the tail memo: JSON Lines framing, the stdlib path, the locator and
    the words of problems are each loaded by the first input that needs them."""
    seed = sorted(SEEDS.glob("*.json"))[0]
    path = seed
    if lines is not None:
        path = tmp_path / "lines.jsonl"
        path.write_bytes(b"".join(lines))
    done = subprocess.run(
        [sys.executable, "-c", _LOADED, "validate", str(path)],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert done.stderr.splitlines()[-1:] == [loaded], done.stderr
