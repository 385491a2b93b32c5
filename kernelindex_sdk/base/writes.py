"""Writes that are whole or raise: a short write never passes as success.

``write(2)`` may take fewer bytes than it was given and report success for those: a
pipe whose reader leaves mid-write (``| head -c 100``), a disk that fills partway.
A raw stream passes that on by design: its ``write`` returns the short count. Under
``PYTHONUNBUFFERED=1`` or ``python -u`` (usual in containers and CI) standard output's
``.buffer`` *is* the raw ``FileIO``, and ``TextIOWrapper`` ignores the count altogether
— so ``canonicalize BIG.json | head -c 100`` exited 0, and ``> FILE`` on a filling
disk left the file cut short with exit 0. (A ``BufferedWriter`` retries and raises;
a rule that holds only with some environment variables unset is no rule.)

Every write the SDK and its commands make ends here:

* :func:`write_all` writes every byte to a descriptor, or raises the ``OSError`` that
  stopped it: ``BrokenPipeError`` for a reader gone, ``ENOSPC`` for a full disk. The
  atomic file writers (:mod:`kernelindex_sdk.base.fileio`) write their temporary files
  with it.
* :func:`whole_text_stream` gives a text stream (standard output) the same rule: text,
  ``.buffer`` and ``print`` all go through :class:`WholeWrites`, and the command line
  turns what is raised into a quiet 141 or one line and exit 2
  (``kernelindex_sdk.cli.main``).
"""

from __future__ import annotations

import errno
import io
import os
import typing
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

__all__ = ["WholeWrites", "whole_text_stream", "write_all"]


def write_all(fd: int, data: ReadableBuffer) -> int:
    """Write all of ``data`` to descriptor ``fd``; return its length, or raise ``OSError``.

    A descriptor left non-blocking by whoever shares it (a pipe) is waited on, not
    failed: ``EAGAIN`` is a full pipe, not an error.
    """
    view = memoryview(data).cast("B")
    total = len(view)
    while view:
        try:
            written = os.write(fd, view)
        except BlockingIOError:
            import select  # only here: not worth its import at every start-up

            select.select([], [fd], [])
            continue
        if written <= 0:  # never for a request of one byte or more; never loop on it
            raise OSError(errno.EIO, "the write took no bytes")
        view = view[written:]
    return total


class WholeWrites(io.RawIOBase):
    """A raw stream over a descriptor it does not own, whose ``write`` is whole.

    Under a ``BufferedWriter`` it makes every write of the buffered stream whole too:
    the buffer hands its bytes here and hears back all of them, or an ``OSError``.
    Closing it leaves the descriptor open (it is standard output's).
    """

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data: ReadableBuffer, /) -> int:
        return write_all(self._fd, data)


def whole_text_stream(stream: TextIO) -> TextIO:
    """A text stream writing to ``stream``'s descriptor as ``stream`` does — same
    encoding, errors, newlines, line buffering — but only ever whole.

    ``stream`` is flushed first; an unbuffered one (``-u``) gets an unbuffered one.
    One without a descriptor (a test's capture, a ``StringIO``, None where there is no
    standard output) is returned as it is: it has no short writes to hide. Newlines
    are translated as the interpreter's own standard output translates them (to
    ``os.linesep``).
    """
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return stream
    stream.flush()
    raw = WholeWrites(fd)
    # Unbuffered stays unbuffered (``-u``: every write reaches the descriptor at once);
    # a raw stream is what the interpreter itself puts under an unbuffered stdout.
    unbuffered = isinstance(getattr(stream, "buffer", None), io.RawIOBase)
    binary = typing.cast(io.BufferedWriter, raw) if unbuffered else io.BufferedWriter(raw)
    return io.TextIOWrapper(
        binary,
        encoding=stream.encoding,
        errors=stream.errors,
        line_buffering=bool(stream.line_buffering),
        write_through=getattr(stream, "write_through", False),
    )
