"""JSON Lines framing: the one loop every JSON Lines reader runs over raw lines.

Files, standard input and the byte ranges of a file that parallel workers read all
hand their lines to :func:`jsonl_records`, which numbers them, skips blank ones, reads
each with the Rust parsers (or a tail memo that uses them), and only where those cannot
decide with the stdlib path, which is loaded at the first line that needs it.

A module of its own, public, beside the intake's ``__init__`` rather than behind it: it
builds on what that holds (:class:`~kernelindex_sdk.reading.intake.Document`, the Rust
parsers), and only readers of JSON Lines load it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from kernelindex_sdk.errors import (
    ByteOrderMark,
    DocumentTooLarge,
    EmptyDocument,
    IntakeError,
    UnreadableFile,
)
from kernelindex_sdk.reading import intake
from kernelindex_sdk.reading.intake import FALLBACK, Document

_WS_BYTES = frozenset(b" \t\n\r")

#: Returned by a tail memo's ``read`` for a document its ``take`` took (nothing to yield).
TAKEN: Any = object()


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
    ``offered``, its slots set directly: the loop makes one per line, and
    ``Document.__init__`` would add an ``object.__setattr__`` call per field."""
    document: Document = _new_object(Document)
    _set_source(document, source)
    _set_line(document, line)
    _set_value(document, value)
    _set_written(document, written)
    _set_shared(document, shared)
    _set_offered(document, offered)
    return document


def is_blank_line(raw: bytes) -> bool:
    """Whether a JSON Lines line holds only whitespace (then it is skipped)."""
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
        from kernelindex_sdk.reading.intake._problems import size_text

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
    take: Callable[[Any, bytes | None, Any], bool] | None = None,
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
    instead of the Rust parsers alone: a line ending as an earlier one did is parsed
    only up to that end, and its document's last members are shared with other
    documents (for a caller that checks documents and drops them; the verdicts are the
    same). The memo offers each document it reads to ``take`` (when given) first: one
    taken is not yielded at all (no :class:`Document` is made), one not taken is
    yielded with ``offered`` True.
    """
    lineno = first_lineno - 1
    # What loads does first for bytes, asked once rather than per line.
    fast = intake.fast_loads if intake.RUST_PARSERS and not strict_numbers else None
    with_tails = tails.read if tails is not None and fast is not None else None
    offered = with_tails is not None and take is not None
    strict_loads: Callable[..., Any] | None = None  # the stdlib path, at its first line
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
                read = with_tails(raw, take)
                if read is not FALLBACK:
                    if read is not TAKEN:
                        yield _document(source, lineno, read[0], read[1], read[2], offered)
                    continue
            else:
                read = fast(raw) if fast is not None else FALLBACK
                if read is not FALLBACK:
                    yield _document(source, lineno, read[0], read[1])
                    continue
            if strict_loads is None:
                strict_loads = _stdlib_path()
            try:
                value = strict_loads(raw, source, lineno, "line", strict_numbers)
            except IntakeError as exc:
                yield exc
                if isinstance(exc, ByteOrderMark) and lineno == 1 and not _utf8_bom(raw):
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


def _stdlib_path() -> Callable[..., Any]:
    """The stdlib path's reader, loaded at the first line the Rust parsers leave to it."""
    from kernelindex_sdk.reading.intake._strict import strict_loads

    return strict_loads


def _utf8_bom(raw: bytes) -> bool:
    """Whether a line starts with UTF-8's byte-order mark (not UTF-16/32's)."""
    from kernelindex_sdk.reading.intake._strict import UTF8_BOM

    return raw.startswith(UTF8_BOM)


def empty_jsonl(source: str) -> EmptyDocument:
    """The problem of a JSON Lines input that holds only blank lines."""
    return EmptyDocument("empty JSON Lines input: no documents, only blank lines", source=source)


def _too_large(line: OverlongLine, source: str, lineno: int) -> DocumentTooLarge:
    return DocumentTooLarge(line.message(), source=source, line=lineno)
