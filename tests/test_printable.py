"""``one_line``: whatever a record holds, what is printed of it stays one honest line."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kernelindex_sdk.base.escaping import one_line

#: The characters the module docstring promises to escape, written out here again so
#: the test does not read the class it checks.
_PROMISED = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        ("plain name", "plain name"),
        ("", ""),
        ("a\nb", "a\\nb"),
        ("a\rb\tc", "a\\rb\\tc"),
        ("\x1b[2J", "\\x1b[2J"),
        ("del\x7f", "del\\x7f"),
        ("c1\x85", "c1\\x85"),
        ("line\u2028sep", "line\\u2028sep"),
        ("abc\u202edcba", "abc\\u202edcba"),
        ("\u2066isolate\u2069", "\\u2066isolate\\u2069"),
        ("byte\udcff", "byte\\xff"),  # surrogateescape's spelling of byte 0xFF
        ("lone\ud800", "lone\\ud800"),
        ("caf\u00e9 \u00a0\u4e2d", "caf\u00e9 \u00a0\u4e2d"),  # printable, not ASCII
        ("back\\slash", "back\\slash"),
    ],
)
def test_each_kind_of_character_is_printed_as_promised(text: str, printed: str) -> None:
    assert one_line(text) == printed


def _documented(char: str) -> str:
    """One character as the module docstring says it is printed."""
    if not _PROMISED.match(char):
        return char
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char)
    if named:
        return named
    code = ord(char)
    if code <= 0x9F:
        return f"\\x{code:02x}"
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}"


@given(st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from("\ud800\udcff\udfff")))
def test_any_text_is_printed_character_by_character_as_documented(text: str) -> None:
    printed = one_line(text)
    assert printed == "".join(map(_documented, text))
    assert _PROMISED.search(printed) is None


@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E)))
def test_printable_ascii_is_printed_unchanged(text: str) -> None:
    assert one_line(text) is text


def test_every_character_outside_the_class_is_printed_unchanged() -> None:
    # Exhaustive over the BMP: the quick ASCII path and the class agree everywhere.
    for code in range(0x10000):
        char = chr(code)
        if _PROMISED.match(char):
            assert one_line(char) != char, f"U+{code:04X} printed as it is"
        else:
            assert one_line(char) == char, f"U+{code:04X} ({unicodedata.name(char, '?')})"
