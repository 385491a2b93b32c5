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

Each output format has its own escaping on top of :func:`one_line`, here too, so every
writer of that format uses the same one: :func:`markdown_cell` for Markdown (tables,
headings, lists: ``compare``, ``scripts/seed-table``), :func:`github_data` and
:func:`github_property` for GitHub Actions workflow commands, :func:`xml_text` for
JUnit XML, :func:`html_text` and :func:`html_lines` for HTML text and attribute values
(``report``'s site), and :func:`html_href` for a link taken from a record (only
``http``/``https``: never a ``javascript:`` or ``data:`` URL).

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


#: A surrogate code point: what ``surrogateescape`` makes of a byte that is not UTF-8.
_SURROGATE_CLASS = "[\ud800-\udfff]"
#: How many of the bytes :func:`not_utf8` lists before it stops.
_LISTED_BYTES = 16


def not_utf8(what: str, text: str) -> str | None:
    """Why ``text``, given as ``what`` (``--set``, a file name), cannot go into a record;
    None when it can.

    Python decodes the command line, the environment and file names with
    ``surrogateescape``: a byte that is not UTF-8 arrives as a lone surrogate, which no
    record may hold (JSON text is Unicode, and ``validate`` refuses it). Every option,
    argument or name whose text a command writes into a record is asked this first,
    so such bytes are refused in one line that names ``what`` and shows the bytes as
    ``\\xNN`` — never written into a record that its own ``validate`` then refuses.
    """
    if text.isascii():
        return None
    found = re.findall(_SURROGATE_CLASS, text)
    if not found:
        return None
    shown = "".join(one_line(char) for char in found[:_LISTED_BYTES])
    more = "…" if len(found) > _LISTED_BYTES else ""
    return one_line(
        f"{what} {text}: not UTF-8 text (bytes {shown}{more}); a record holds Unicode text only"
    )


#: Markdown's characters, each written so that GitHub shows it as itself: HTML's three
#: as entities, the rest backslash-escaped (CommonMark lets any ASCII punctuation be).
#: ``\\`` first in meaning: an input backslash never escapes what follows it.
_MARKDOWN = {
    "\\": "\\\\",
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    "|": "\\|",  # a table's cell separator (GFM escapes it even inside code spans)
    "`": "\\`",
    "*": "\\*",
    "_": "\\_",
    "[": "\\[",
    "]": "\\]",
    "#": "\\#",
    "!": "\\!",
    "~": "\\~",  # strikethrough
    "$": "\\$",  # GitHub's math
}


@functools.cache
def _markdown_patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """Markdown's characters; the autolinks GitHub makes of bare text
    (``http://``, ``www.``); what a line may start with to become a list, a quote or a
    heading underline (``-``, ``+``, ``=``, ``1.``, ``1)``)."""
    characters = re.compile("[" + re.escape("".join(_MARKDOWN)) + "]")
    autolink = re.compile(r":(?=//)|(?<=[wW]{3})\.")
    start = re.compile(r"^(?:[-+=]|[0-9]+(?=[.)](?:\s|$)))")
    return characters, autolink, start


def _markdown_start(match: re.Match[str]) -> str:
    found = match.group()
    return "\\" + found if not found[0].isdigit() else found + "\\"


def markdown_cell(text: str) -> str:
    """``text`` as Markdown that GitHub renders as exactly that text, on one line: for
    a table cell, a heading, a list item or a line of a ``$GITHUB_STEP_SUMMARY``.

    :func:`one_line` first (a newline would end the cell or start a block), then
    ``&``, ``<``, ``>`` as entities (no HTML, no ``<!--`` comment, no raw tag) and every
    other Markdown character — ``\\ | ` * _ [ ] # ! ~ $`` — backslash-escaped; the
    ``:`` of ``scheme://`` and the ``.`` of ``www.`` escaped too, so bare text never
    becomes a link; and a start that would make a list, a quote or a heading underline
    (``-``, ``+``, ``=``, ``1.``) escaped. Never put the result in a code span:
    escapes are not read there.
    """
    line = one_line(text)
    characters, autolink, start = _markdown_patterns()
    line = characters.sub(lambda match: _MARKDOWN[match.group()], line)
    line = autolink.sub(lambda match: "\\" + match.group(), line)
    return start.sub(_markdown_start, line, count=1)


def github_data(text: str) -> str:
    """A GitHub Actions workflow command's message (``::error ...::MESSAGE``): ``%``,
    CR and LF percent-encoded (GitHub's rule, which its runner decodes back), then every
    other control escaped as :func:`one_line` does, so a command is one line."""
    return one_line(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def github_property(text: str) -> str:
    """A workflow command's property value (``file=``, ``title=``): as
    :func:`github_data`, and ``:`` and ``,`` encoded too, which end a property."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")


#: What XML 1.0 cannot hold beyond what :func:`one_line` escapes: U+FFFE and U+FFFF.
_NOT_XML = re.compile("[\ufffe\uffff]")


def xml_text(text: str) -> str:
    """``text`` as one line every XML 1.0 parser takes (a JUnit report's names and
    messages): :func:`one_line` escapes the controls and surrogates XML forbids, and
    U+FFFE and U+FFFF are written ``\\uXXXX``. ``&``, ``<``, ``>`` and quotes are the
    XML writer's to escape (ElementTree does)."""
    return _NOT_XML.sub(lambda match: f"\\u{ord(match.group()):04x}", one_line(text))


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


def _html_escape(text: str) -> str:
    """``& < > " '`` as character references (``&`` first), as :func:`html.escape`
    writes them, without importing :mod:`html` (and its entity table) at start-up."""
    if not ("&" in text or "<" in text or ">" in text or '"' in text or "'" in text):
        return text
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#x27;")
    )


def html_text(text: str) -> str:
    """``text`` as HTML that a browser shows as exactly that text, on one line, safe
    in an element's content and in a quoted attribute value alike: :func:`one_line`
    first (controls, surrogates and bidirectional overrides escaped: a surrogate cannot
    even be encoded to UTF-8), then ``& < > " '`` as character references."""
    return _html_escape(one_line(text))


def html_lines(text: str) -> str:
    """:func:`html_text` line by line, the newlines kept: a ``<pre>`` block (a
    record's JSON) that reads as the text it shows."""
    flat = text.replace("\n", " ")
    if one_line(flat) == flat:
        return _html_escape(text)  # nothing but newlines for one_line to do
    return "\n".join(html_text(line) for line in text.split("\n"))


#: URL schemes a link taken from input may have; any other is shown as text only.
_LINKABLE = ("http://", "https://")


def html_href(url: str) -> str | None:
    """``url`` as an ``href`` attribute's value (escaped), when it is an absolute
    ``http``/``https`` URL; None otherwise, so that the caller shows it as text.

    Browsers drop tabs and newlines and ignore leading spaces and case in a scheme
    (`` JaVa\tscript:``): anything but a plain, lower-cased-equal ``http(s)://``
    start with no whitespace or controls anywhere is not linked.
    """
    if not url.lower().startswith(_LINKABLE) or any(c.isspace() for c in url):
        return None
    if not (url.isascii() and url.isprintable()):
        return None
    return html_text(url)
