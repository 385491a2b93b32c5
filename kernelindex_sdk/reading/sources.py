"""Where documents come from: PATH arguments, directories, JSON Lines, standard input.

Every command and the library read input through this module, so one rule decides
what is read and how, and nothing that cannot be read is ever skipped silently:

* ``-`` is standard input, sniffed as one document or JSON Lines (:func:`read_stdin`).
* A named regular file is read whatever its name: as JSON Lines when it ends in
  ``.jsonl`` or ``.ndjson`` (any case), else as one document.
* A named directory is walked (:func:`walk`): sorted by name, each directory's files
  before its subdirectories, entries whose name starts with ``.`` left out, and of
  the rest the regular files ending in ``.json``, ``.jsonl`` or ``.ndjson`` (any case)
  read. Symbolic links are followed, to files and to directories alike; a link back
  to a directory being walked is a :class:`~kernelindex_sdk.errors.SymlinkLoop`, and
  a dangling link an :class:`~kernelindex_sdk.errors.UnreadableFile`.
* A named regular file whose name ends in ``.kistore`` (any case), or whose name does
  not end in ``.json``, ``.jsonl`` or ``.ndjson`` and that starts with DuckDB's magic
  bytes, is a kernelindex store (:class:`StoreSource`, :mod:`kernelindex_sdk.reading.kistore`):
  its records are read back as the documents they were added as, and one that is no
  readable store (empty, cut short, corrupt, not DuckDB at all) is one problem naming
  it. A walk never reads a store (a store kept
  beside the files it indexes would count every record twice).
* Only regular files are read. A FIFO, socket or device, named or found under one of
  those names in a walk, is a :class:`~kernelindex_sdk.errors.NotARegularFile`: a
  FIFO would block forever and ``/dev/zero`` never ends. Files are opened with
  ``O_NONBLOCK`` and checked again with ``fstat``, so a FIFO swapped in after the
  walk cannot hang a reader either.
* One document — a whole file, a JSON Lines line, standard input — larger than
  ``max_bytes`` (:data:`MAX_DOCUMENT_BYTES`, 256 MiB by default) is a
  :class:`~kernelindex_sdk.errors.DocumentTooLarge`, found before it is held in
  memory: a file by its size, a line or a stream by reading at most the limit. Past
  such a line only a regular file is read on; any other stream stops there, as its
  line's end may never come (:func:`bounded_lines`).
* A directory that cannot be listed, a missing path, a file that cannot be opened:
  each is one :class:`~kernelindex_sdk.errors.IntakeError` naming the path.

Errors are *yielded* in input order beside the documents, never raised, so one bad
path does not hide the rest and every caller sees every problem.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import typing
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from typing import TYPE_CHECKING, Final

from kernelindex_sdk.base.frozenvalue import FrozenValue
from kernelindex_sdk.errors import (
    ByteOrderMark,
    DocumentTooLarge,
    EmptyDocument,
    IntakeError,
    InvalidEncoding,
    MalformedJSON,
    NotARegularFile,
    SymlinkLoop,
    UnreadableDirectory,
    UnreadableFile,
)

# JSON Lines framing and the words of problems are imported where they are needed: a
# run that reads one JSON file loads neither.
from kernelindex_sdk.reading.intake import Document, loads

if TYPE_CHECKING:
    from kernelindex_sdk.reading.intake.jsonl import OverlongLine
    from kernelindex_sdk.reading.kistore import CheckedDocument, StoreFacts
    from kernelindex_sdk.reading.sharedtails import TailMemo, Take

__all__ = [
    "JSONL_SUFFIXES",
    "MAX_DOCUMENT_BYTES",
    "STDIN",
    "STORE_SUFFIX",
    "SUFFIXES",
    "FileSource",
    "Source",
    "StdinSource",
    "StoreSource",
    "documents",
    "expand",
    "iter_documents",
    "iter_jsonl",
    "load_file",
    "names_store",
    "open_regular",
    "read",
    "read_bytes",
    "read_stdin",
    "read_store_facts",
    "read_trusting_store",
    "standard_input",
    "walk",
]

#: What a walk reads (compared in lower case).
SUFFIXES: Final = (".json", ".jsonl", ".ndjson")
#: Read as JSON Lines, named or walked (compared in lower case).
JSONL_SUFFIXES: Final = (".jsonl", ".ndjson")
#: A named file of this suffix (any case) is read as a store whatever its bytes.
STORE_SUFFIX: Final = ".kistore"
#: The PATH argument that names standard input.
STDIN: Final = "-"
#: The largest document read: a whole file, one JSON Lines line, standard input.
MAX_DOCUMENT_BYTES: Final = 256 << 20

_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_DRAIN_BYTES = 1 << 20
#: The buffer a JSON Lines file is read through. ``open``'s default, 8 KiB, holds only a
#: few bundle lines, so ``readline`` would make a ``read`` call and move a part-line to
#: the buffer's start every few lines.
LINE_BUFFER_BYTES: Final = 256 << 10


class FileSource(FrozenValue):
    """A regular file to read: as JSON Lines or as one document."""

    __match_args__ = __slots__ = ("path", "jsonl", "size")
    path: str
    jsonl: bool
    #: Its size when the walk saw it (None when the walk did not stat it).
    size: int | None

    def __init__(self, path: str, jsonl: bool, size: int | None = None) -> None:
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "jsonl", jsonl)
        object.__setattr__(self, "size", size)


class StdinSource(FrozenValue):
    """Standard input: ``jsonl`` None sniffs the format (see :func:`read_stdin`)."""

    __match_args__ = __slots__ = ("jsonl", "name")
    jsonl: bool | None
    name: str

    def __init__(self, jsonl: bool | None = None, name: str = "<stdin>") -> None:
        object.__setattr__(self, "jsonl", jsonl)
        object.__setattr__(self, "name", name)


class StoreSource(FrozenValue):
    """A kernelindex store file named as a PATH (:mod:`kernelindex_sdk.reading.kistore`)."""

    __match_args__ = __slots__ = ("path",)
    path: str

    def __init__(self, path: str) -> None:
        object.__setattr__(self, "path", path)


Source = FileSource | StdinSource | StoreSource


def is_jsonl_name(path: str) -> bool:
    """Whether a file of this name is read as JSON Lines."""
    return path.lower().endswith(JSONL_SUFFIXES)


def is_walked_name(name: str) -> bool:
    """Whether a walk reads a regular file of this name."""
    return not name.startswith(".") and name.lower().endswith(SUFFIXES)


# --------------------------------------------------------------------------- paths


def expand(paths: Iterable[str]) -> Iterator[Source | IntakeError]:
    """What each PATH argument names, in order: sources to read, or why not. A path
    that is no ``str`` or path object (or ``paths`` given as one ``str``) is a
    ``TypeError``."""
    if isinstance(paths, str):
        raise TypeError("expected a list of paths, not one str")
    for arg in paths:
        if isinstance(arg, os.PathLike):
            arg = os.fspath(arg)
        if not isinstance(arg, str):
            raise TypeError(f"a path is a str, not {type(arg).__name__}")
        if arg == STDIN:
            yield StdinSource()
            continue
        try:
            info = os.stat(arg)
        except (OSError, ValueError) as exc:
            yield path_error(arg, exc)
            continue
        mode = info.st_mode
        if stat.S_ISDIR(mode):
            yield from walk(arg, info)
        elif stat.S_ISREG(mode):
            if _is_store(arg):
                yield StoreSource(arg)
            else:
                yield FileSource(arg, is_jsonl_name(arg), info.st_size)
        else:
            yield _not_regular(arg, mode, named=True)


def names_store(arg: str) -> bool:
    """Whether a PATH argument is read as a store (:func:`expand`'s rule): a regular
    file named ``*.kistore``, or not named like JSON and starting like a DuckDB
    database."""
    return arg != STDIN and os.path.isfile(arg) and _is_store(arg)


def _is_store(path: str) -> bool:
    """A regular file's name and first bytes say it is a store. (The name first: a
    JSON file's check then costs no import of the store module, whose ``tempfile``
    and ``shutil`` would weigh on ``validate one.json``'s start-up.)"""
    lower = path.lower()
    if lower.endswith(STORE_SUFFIX):
        return True
    if lower.endswith(SUFFIXES):
        return False
    from kernelindex_sdk.reading.kistore import is_store_file

    return is_store_file(path)


def walk(root: str, root_info: os.stat_result | None = None) -> Iterator[FileSource | IntakeError]:
    """Every file a walk of ``root`` reads, and every entry it cannot (module docstring).

    Iterative (a deep tree cannot exhaust the stack). Loops are found by the device
    and inode of the directories on the way down, so a link to a sibling is walked
    and only a link back up is refused.
    """
    if root_info is None:
        try:
            root_info = os.stat(root)
        except (OSError, ValueError) as exc:
            yield path_error(root, exc)
            return
    stack: list[tuple[str, frozenset[tuple[int, int]]]] = [
        (root, frozenset({(root_info.st_dev, root_info.st_ino)}))
    ]
    while stack:
        directory, above = stack.pop()
        try:
            with os.scandir(directory) as listing:
                entries = sorted(
                    (entry for entry in listing if not entry.name.startswith(".")),
                    key=lambda entry: entry.name,
                )
        except OSError as exc:
            yield UnreadableDirectory(f"cannot read directory: {_reason(exc)}", source=directory)
            continue
        subdirectories: list[tuple[str, frozenset[tuple[int, int]]]] = []
        for entry in entries:
            try:
                if entry.is_symlink():
                    info = entry.stat()  # where it leads
                    if stat.S_ISDIR(info.st_mode):
                        key = (info.st_dev, info.st_ino)
                        if key in above:
                            yield SymlinkLoop(
                                "symbolic link loop: leads back to a directory being walked;"
                                " not walked again",
                                source=entry.path,
                            )
                        else:
                            subdirectories.append((entry.path, above | {key}))
                        continue
                    mode = info.st_mode
                elif entry.is_dir(follow_symlinks=False):
                    info = entry.stat(follow_symlinks=False)
                    subdirectories.append((entry.path, above | {(info.st_dev, info.st_ino)}))
                    continue
                elif entry.is_file(follow_symlinks=False):
                    mode = stat.S_IFREG  # d_type said so: no stat needed
                else:
                    mode = entry.stat(follow_symlinks=False).st_mode
            except OSError as exc:
                yield _entry_error(entry.path, exc)
                continue
            if not is_walked_name(entry.name):
                continue
            if stat.S_ISREG(mode):
                yield FileSource(entry.path, is_jsonl_name(entry.name))
            else:
                yield _not_regular(entry.path, mode, named=False)
        stack.extend(reversed(subdirectories))


def _reason(exc: OSError) -> str:
    if isinstance(exc, PermissionError):
        return "permission denied"
    if isinstance(exc, FileNotFoundError):
        return "no such file or directory"
    return str(exc.strerror or exc).lower()


def path_error(path: str, exc: OSError | ValueError) -> IntakeError:
    """Why a PATH argument names nothing readable."""
    if isinstance(exc, ValueError):  # an embedded NUL: no file can have that name
        return UnreadableFile("not a usable path: it holds a NUL character", source=path)
    if exc.errno == errno.ELOOP:
        return SymlinkLoop("symbolic link loop: the path never resolves", source=path)
    if isinstance(exc, NotADirectoryError):
        return UnreadableFile("no such file or directory (a part of it is a file)", source=path)
    return UnreadableFile(_reason(exc), source=path)


def _entry_error(path: str, exc: OSError) -> IntakeError:
    """Why an entry found by a walk cannot be read."""
    if exc.errno == errno.ELOOP:
        return SymlinkLoop("symbolic link loop: the link never resolves", source=path)
    if isinstance(exc, FileNotFoundError):
        return UnreadableFile("dangling symbolic link: its target does not exist", source=path)
    return UnreadableFile(f"cannot read: {_reason(exc)}", source=path)


_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


def _not_regular(path: str, mode: int, *, named: bool) -> IntakeError:
    what = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    hint = "; use - for standard input" if named else ""
    return NotARegularFile(f"is {what}, not a regular file: not read{hint}", source=path)


# --------------------------------------------------------------------------- reading


def documents(
    paths: Iterable[str],
    *,
    max_bytes: int = MAX_DOCUMENT_BYTES,
    stdin: typing.BinaryIO | None = None,
    strict_numbers: bool = False,
) -> Iterator[Document | IntakeError]:
    """Every document under ``paths``, and every reason something was not read, in order."""
    for source in expand(paths):
        if isinstance(source, IntakeError):
            yield source
        else:
            yield from read(source, max_bytes=max_bytes, stdin=stdin, strict_numbers=strict_numbers)


def standard_input() -> typing.BinaryIO | None:
    """Standard input, read through a buffer of ``LINE_BUFFER_BYTES``: for a process
    that has read none of it yet (the command line), to pass as ``stdin`` to
    :func:`read` or :class:`~kernelindex_sdk.validating.pipeline.Pipeline`.

    ``sys.stdin.buffer`` reads 8 KiB at a time: JSON Lines piped in would then cost more
    a line than the same file named. The reader made here shares the descriptor and
    never closes it. Bytes already taken
    into ``sys.stdin.buffer`` would not be seen by it, which is why this is no default
    of :func:`read`. Where standard input has no descriptor (a test's stand-in, an
    embedding), it is ``sys.stdin.buffer`` itself; None where the process has none
    (started with it closed), which :func:`read` then reports.
    """
    stream: typing.BinaryIO | None = getattr(sys.stdin, "buffer", None)
    if stream is None:
        return None
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation: no descriptor
        return stream
    return open(fd, "rb", buffering=LINE_BUFFER_BYTES, closefd=False)


def read(
    source: Source,
    *,
    max_bytes: int = MAX_DOCUMENT_BYTES,
    stdin: typing.BinaryIO | None = None,
    strict_numbers: bool = False,
    on_read: Callable[[int], None] | None = None,
    tails: TailMemo | None = None,
    take: Take | None = None,
) -> Iterator[Document | IntakeError]:
    """The documents of one source (errors yielded, not raised). ``strict_numbers``:
    refuse number literals whose text and value disagree (see ``intake.loads``).
    ``on_read`` is told the bytes read as they are read — line by line in JSON Lines
    and standard input, a whole file at once — for a progress bar that moves while a
    long file is read. ``tails`` reads JSON Lines lines, of a file or standard input, and
    offers each document it reads to ``take`` (see
    :func:`~kernelindex_sdk.reading.intake.jsonl.jsonl_records`: for a caller that checks each
    document and drops it)."""
    if isinstance(source, StdinSource):
        stream = stdin if stdin is not None else getattr(sys.stdin, "buffer", None)
        if stream is None:  # started with standard input closed (``<&-``)
            yield UnreadableFile(
                "cannot read: standard input is closed (no byte stream)", source=source.name
            )
            return
        if on_read is not None:
            stream = typing.cast(typing.BinaryIO, _Counted(stream, on_read))
        yield from read_stdin(
            stream,
            jsonl=source.jsonl,
            max_bytes=max_bytes,
            name=source.name,
            strict_numbers=strict_numbers,
            tails=tails,
            take=take,
        )
    elif isinstance(source, StoreSource):
        from kernelindex_sdk.reading.kistore import store_documents

        yield from store_documents(source.path, on_wait=_say_waiting)
    elif source.jsonl:
        yield from _read_jsonl(source.path, max_bytes, strict_numbers, on_read, tails, take)
    else:
        try:
            data = read_bytes(source.path, max_bytes=max_bytes)
            if on_read is not None:
                on_read(len(data))
            value = loads(data, source=source.path, strict_numbers=strict_numbers)
            yield Document(source.path, None, value)
        except IntakeError as exc:
            yield exc


def read_trusting_store(
    path: str, fingerprint: str
) -> Iterator[Document | CheckedDocument | IntakeError]:
    """The documents of the store at ``path`` as :func:`read` gives them, except that,
    when every add of the store wrote the checks ``fingerprint`` the caller runs, they
    come as :class:`~kernelindex_sdk.reading.kistore.CheckedDocument` (with their digests),
    which the caller may take as checked (docs/store.md, "Trusting a store's checks")."""
    from kernelindex_sdk.reading.kistore import read_store

    yield from read_store(path, on_wait=_say_waiting, trusted_by=fingerprint)


def read_store_facts(path: str, fingerprint: str) -> StoreFacts | None:
    """The store at ``path`` through its facts, for a reader that trusts it
    (:func:`~kernelindex_sdk.reading.kistore.read_facts`); None where it must be read through
    :func:`read_trusting_store` instead."""
    from kernelindex_sdk.reading.kistore import read_facts

    return read_facts(path, trusted_by=fingerprint, on_wait=_say_waiting)


def _say_waiting(message: str) -> None:
    """A store another process holds: say on stderr that we wait, not why we hang."""
    from kernelindex_sdk.base.escaping import one_line

    sys.stderr.write(one_line(f"kernelindex: {message}") + "\n")
    sys.stderr.flush()


def open_regular(path: str | os.PathLike[str]) -> tuple[int, int]:
    """A descriptor of a regular file and its size; raises IntakeError otherwise."""
    name = os.fspath(path)
    try:
        fd = os.open(name, _OPEN_FLAGS)
    except (OSError, ValueError) as exc:
        raise path_error(str(name), exc) from None
    try:
        info = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise UnreadableFile(f"cannot read: {_reason(exc)}", source=str(name)) from None
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        if stat.S_ISDIR(info.st_mode):
            raise UnreadableFile("is a directory, not a file", source=str(name))
        raise _not_regular(str(name), info.st_mode, named=True)
    return fd, info.st_size


def _too_large(source: str, size: int | None, limit: int) -> DocumentTooLarge:
    from kernelindex_sdk.reading.intake import size_text

    what = f"{size_text(size)}: " if size is not None else ""
    return DocumentTooLarge(
        f"{what}larger than {size_text(limit)}, the limit for one document: not read",
        source=source,
    )


def read_bytes(path: str | os.PathLike[str], *, max_bytes: int = MAX_DOCUMENT_BYTES) -> bytes:
    """The whole content of a regular file of at most ``max_bytes``.

    With the fewest system calls: ``open``, ``fstat``, one ``read`` of the size plus
    one byte (which returns the size exactly when it reached the end), and more reads
    only if the file changed size or does not know it (``/proc``). Raises
    :class:`~kernelindex_sdk.errors.IntakeError` subclasses, never a bare ``OSError``.
    """
    name = str(os.fspath(path))
    fd, size = open_regular(path)
    try:
        if size > max_bytes:
            raise _too_large(name, size, max_bytes)
        data = os.read(fd, size + 1)
        if size and len(data) == size:
            return data
        parts, total = [data], len(data)
        while data:
            if total > max_bytes:
                raise _too_large(name, None, max_bytes)
            data = os.read(fd, max(size, 1 << 16))
            parts.append(data)
            total += len(data)
        return b"".join(parts)
    except OSError as exc:
        raise UnreadableFile(f"cannot read: {_reason(exc)}", source=name) from None
    finally:
        os.close(fd)


def load_file(
    path: str | os.PathLike[str],
    *,
    max_bytes: int = MAX_DOCUMENT_BYTES,
    strict_numbers: bool = False,
    big_integers: bool = False,
) -> typing.Any:
    """Read one regular file and parse it strictly (:func:`~kernelindex_sdk.reading.intake.loads`;
    ``big_integers`` for a schema file, whose bounds may be any integer).

    Raises an :class:`~kernelindex_sdk.errors.IntakeError` subclass — never a bare
    ``OSError`` — when the file cannot be read or parsed.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"load_file() takes a path, not {type(path).__name__}")
    data = read_bytes(path, max_bytes=max_bytes)
    return loads(
        data, source=str(os.fspath(path)), strict_numbers=strict_numbers, big_integers=big_integers
    )


def bounded_lines(
    stream: typing.BinaryIO, max_bytes: int = MAX_DOCUMENT_BYTES
) -> Iterator[bytes | OverlongLine]:
    """The lines of ``stream``; a line longer than ``max_bytes`` (its ``\\n`` aside)
    becomes an :class:`~kernelindex_sdk.reading.intake.jsonl.OverlongLine`. Memory stays bounded by
    the limit, and reading by the input's end *or* the limit, whatever the input.

    Past an overlong line, only a regular file is read on (its bytes skipped up to the
    next ``\\n``, then the next line): a file ends. Any other stream — a pipe, a FIFO,
    a terminal, ``< /dev/zero``, an object without a descriptor — may never send the
    ``\\n``, so reading stops at the limit: the line is ``stopped`` and the last one.
    """
    from kernelindex_sdk.reading.intake.jsonl import OverlongLine

    readline = stream.readline
    limit = max_bytes + 1
    step = min(limit, _DRAIN_BYTES)
    while True:
        line = readline(step)
        if len(line) < step or line[-1:] == b"\n":
            if not line:
                return
            yield line
            continue
        if _is_regular_file(stream):
            # A long line of a file: measured first, a step at a time and nothing kept,
            # so a line past the limit is refused without ever being held; one within
            # it is then read again, whole (read whole at once, a line far past the limit
            # would be held in memory before it could be refused).
            yield _measured_line(stream, line, limit, step)
            continue
        # A long line of a stream that cannot be read twice: read on a step at a time,
        # so that a line past the limit is held once (never also joined) before it is
        # dropped.
        parts = [line]
        size = len(line)
        while size < limit and line[-1:] != b"\n":
            line = readline(min(step, limit - size))
            if not line:
                break
            parts.append(line)
            size += len(line)
        if size < limit or line[-1:] == b"\n":
            yield b"".join(parts)
            continue
        del parts
        if not _is_regular_file(stream):
            yield OverlongLine(max_bytes, size, stopped=True)
            return
        while line and line[-1:] != b"\n":
            line = readline(_DRAIN_BYTES)
            size += len(line)
        yield OverlongLine(max_bytes, size)


def _measured_line(
    stream: typing.BinaryIO, first: bytes, limit: int, step: int
) -> bytes | OverlongLine:
    """The line of a regular file that starts with ``first`` (a whole step, no ``\\n``):
    its length found by reading on without keeping anything, then, if within the
    limit, the line read again from its start; else the file is left after it."""
    from kernelindex_sdk.reading.intake.jsonl import OverlongLine

    size = len(first)
    start = stream.tell() - size
    line = first
    while size < limit and line[-1:] != b"\n":
        line = stream.readline(min(step, limit - size))
        if not line:
            break
        size += len(line)
    if size < limit or line[-1:] == b"\n":
        stream.seek(start)
        return stream.readline(size)
    while line and line[-1:] != b"\n":
        line = stream.readline(_DRAIN_BYTES)
        size += len(line)
    return OverlongLine(limit - 1, size)


def _is_regular_file(stream: typing.BinaryIO) -> bool:
    """Whether ``stream`` reads a regular file, whose end comes (``fstat``)."""
    try:
        return stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):  # no descriptor: not known to end
        return False


class _Counted:
    """A binary stream that tells ``on_read`` how many bytes each read returned."""

    def __init__(self, stream: typing.BinaryIO, on_read: Callable[[int], None]) -> None:
        self._stream = stream
        self._on_read = on_read

    def readline(self, size: int = -1) -> bytes:
        line = self._stream.readline(size)
        self._on_read(len(line))
        return line

    def read(self, size: int = -1) -> bytes:
        data = self._stream.read(size)
        self._on_read(len(data))
        return data

    def fileno(self) -> int:
        return self._stream.fileno()


def _read_jsonl(
    path: str,
    max_bytes: int,
    strict_numbers: bool,
    on_read: Callable[[int], None] | None = None,
    tails: TailMemo | None = None,
    take: Take | None = None,
) -> Iterator[Document | IntakeError]:
    from kernelindex_sdk.reading.intake.jsonl import jsonl_records

    try:
        fd, _ = open_regular(path)
    except IntakeError as exc:
        yield exc
        return
    with open(fd, "rb", buffering=LINE_BUFFER_BYTES) as opened:
        handle = (
            opened if on_read is None else typing.cast(typing.BinaryIO, _Counted(opened, on_read))
        )
        lines = bounded_lines(handle, max_bytes)
        yield from jsonl_records(lines, path, 1, False, strict_numbers, tails, take)


def iter_jsonl(
    stream: typing.BinaryIO,
    *,
    source: str,
    max_bytes: int = MAX_DOCUMENT_BYTES,
    strict_numbers: bool = False,
    tails: TailMemo | None = None,
    take: Take | None = None,
) -> Iterator[Document | IntakeError]:
    """Read JSON Lines: one strict JSON document per ``\\n``- or ``\\r\\n``-ended line.

    Streams line by line, so memory stays flat on inputs of any size. A bad line
    yields its :class:`IntakeError` (located at that line) and reading goes on, so one
    run reports every bad record. Lines holding only whitespace are skipped; a stream
    with no document at all yields one :class:`EmptyDocument`. A UTF-16/32 byte-order
    mark stops the stream, since no later line can be read either. ``tails`` and
    ``take``: see :func:`read`.
    """
    from kernelindex_sdk.reading.intake.jsonl import jsonl_records

    lines = bounded_lines(stream, max_bytes)
    return jsonl_records(lines, source, 1, False, strict_numbers, tails, take)


def read_stdin(
    stream: typing.BinaryIO,
    *,
    jsonl: bool | None = None,
    max_bytes: int = MAX_DOCUMENT_BYTES,
    name: str = "<stdin>",
    strict_numbers: bool = False,
    tails: TailMemo | None = None,
    take: Take | None = None,
) -> Iterator[Document | IntakeError]:
    """Standard input as documents: JSON Lines, one document, or sniffed (``jsonl=None``).

    The sniffing rule: read up to the first non-blank line. If that line on its own is
    a complete JSON text (it parses, or fails for a reason other than syntax or
    encoding: a duplicate key, a number, ...) *and* another non-blank line follows,
    the input cannot be one document (that would be trailing data), so it is read as
    JSON Lines, streaming. Otherwise (a pretty-printed document, or a single line) the
    whole input is read as one document. ``tails`` and ``take``: see :func:`read`.
    """
    if jsonl:
        yield from iter_jsonl(
            stream,
            source=name,
            max_bytes=max_bytes,
            strict_numbers=strict_numbers,
            tails=tails,
            take=take,
        )
    elif jsonl is None:
        yield from _sniff(stream, name, max_bytes, strict_numbers, tails, take)
    else:
        try:
            data = stream.read(max_bytes + 1)
        except OSError as exc:
            yield UnreadableFile(f"cannot read: {_reason(exc)}", source=name)
            return
        if len(data) > max_bytes:
            yield _too_large(name, None, max_bytes)
            return
        yield _one_document(data, name, strict_numbers)


def _one_document(data: bytes, source: str, strict_numbers: bool) -> Document | IntakeError:
    """An input that is not JSON Lines, read whole: its one document, or why not."""
    try:
        return Document(source, None, loads(data, source=source, strict_numbers=strict_numbers))
    except IntakeError as exc:
        return exc


def _sniff(
    stream: typing.BinaryIO,
    source: str,
    max_bytes: int,
    strict_numbers: bool,
    tails: TailMemo | None = None,
    take: Take | None = None,
) -> Iterator[Document | IntakeError]:
    from kernelindex_sdk.reading.intake.jsonl import is_blank_line, jsonl_records

    lines = bounded_lines(stream, max_bytes)
    head: list[bytes | OverlongLine] = []
    total = 0
    try:
        for raw in lines:
            head.append(raw)
            if not isinstance(raw, bytes):
                # Too long for one document either way: read on as JSON Lines, which
                # reports this line and goes on with the next.
                yield from jsonl_records(
                    chain(head, lines), source, 1, False, strict_numbers, tails, take
                )
                return
            total += len(raw)
            if not is_blank_line(raw):
                break
        else:
            yield EmptyDocument(
                "empty document: no JSON value (the input is empty or whitespace only)",
                source=source,
                line=1,
            )
            return
        first_line = head[-1]
        assert isinstance(first_line, bytes)
        first_lineno = len(head)
        try:
            first: Document | IntakeError = Document(
                source,
                first_lineno,
                loads(
                    first_line,
                    source=source,
                    first_line=first_lineno,
                    strict_numbers=strict_numbers,
                ),
            )
        except (MalformedJSON, InvalidEncoding, ByteOrderMark):
            rest = stream.read(max_bytes + 1 - total)
            if total + len(rest) > max_bytes:
                yield _too_large(source, None, max_bytes)
                return
            yield _one_document(
                b"".join(typing.cast(list[bytes], head)) + rest, source, strict_numbers
            )
            return
        except IntakeError as exc:
            first = exc
        for raw in lines:
            head.append(raw)
            if not isinstance(raw, bytes) or not is_blank_line(raw):
                break
        else:  # a single document on one line, perhaps with blank lines around it
            if isinstance(first, Document):
                first = first._replace(line=None)
            yield first
            return
    except OSError as exc:
        yield UnreadableFile(f"cannot read: {_reason(exc)}", source=source)
        return
    yield first
    yield from jsonl_records(
        chain([head[-1]], lines), source, len(head), True, strict_numbers, tails, take
    )


def iter_documents(
    path: str,
    *,
    jsonl: bool | None = None,
    stdin: typing.BinaryIO | None = None,
    max_bytes: int = MAX_DOCUMENT_BYTES,
    strict_numbers: bool = False,
) -> Iterator[Document | IntakeError]:
    """Every top-level document of one file (or of stdin for ``"-"``), or why not.

    ``jsonl=None`` decides by suffix for files (:data:`JSONL_SUFFIXES`, any case) and
    sniffs standard input (:func:`read_stdin`). A whole-file document yields one
    :class:`Document` with ``line=None``. Problems are yielded, not raised; a ``path``
    that is no path at all is a ``TypeError``.
    """
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str):
        raise TypeError(f"iter_documents() takes a path, not {type(path).__name__}")
    if path == STDIN:
        yield from read(
            StdinSource(jsonl), max_bytes=max_bytes, stdin=stdin, strict_numbers=strict_numbers
        )
        return
    as_jsonl = is_jsonl_name(path) if jsonl is None else jsonl
    yield from read(FileSource(path, as_jsonl), max_bytes=max_bytes, strict_numbers=strict_numbers)
