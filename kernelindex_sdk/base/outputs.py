"""Where a writer may write: never over, into or around what it reads.

Every command that writes an output it was named (a folder it replaces, files it
writes into a folder, one file) checks its output against its inputs here first, with
symbolic links resolved, so that no spelling of a path (``b``, ``./b/``, a link to
``b``) lets an output land on an input:

* :func:`input_inside` — an input that is the output, or lies inside it: a folder
  replaced whole would take it along.
* :func:`folder_holding` — an input folder that is the output or holds it: what is
  written there would be read as input next time.
* :func:`same_input` — an input that is the very file to be written.

And :func:`exchange`, which swaps two folders in one step where the system can
(Linux ``renameat2(RENAME_EXCHANGE)``), so that a folder replaced whole is, at every
moment, the old one or the new one — even for a process killed in between.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterable

__all__ = [
    "OutputOverInput",
    "exchange",
    "folder_holding",
    "input_inside",
    "real",
    "same_input",
    "within",
]


class OutputOverInput(ValueError):
    """An output named where it would replace, hold or be read as one of the inputs:
    refused before anything is written, ``--force`` or not. One line."""


def real(path: str | os.PathLike[str]) -> str:
    """``path`` absolute, with every symbolic link resolved (as far as it exists)."""
    return os.path.realpath(os.fspath(path))


def within(path: str, folder: str) -> bool:
    """Whether the resolved ``path`` is the resolved ``folder`` or lies under it."""
    inner, outer = real(path), real(folder)
    return inner == outer or inner.startswith(outer.rstrip(os.sep) + os.sep)


def input_inside(output: str | os.PathLike[str], inputs: Iterable[str]) -> str | None:
    """The first of ``inputs`` that is ``output`` or lies inside it, or None."""
    for name in inputs:
        if within(name, os.fspath(output)):
            return name
    return None


def folder_holding(output: str | os.PathLike[str], inputs: Iterable[str]) -> str | None:
    """The first of ``inputs`` that is a folder holding ``output`` (or is it), or None."""
    for name in inputs:
        if os.path.isdir(name) and within(os.fspath(output), name):
            return name
    return None


def same_input(output: str | os.PathLike[str], inputs: Iterable[str]) -> str | None:
    """The first of ``inputs`` that is the file ``output`` (by its resolved path, or as
    a hard link of it), or None."""
    target = os.fspath(output)
    for name in inputs:
        if real(name) == real(target):
            return name
        with contextlib.suppress(OSError):
            if os.path.samefile(name, target):
                return name
    return None


def exchange(first: str, second: str) -> bool:
    """Swap the two existing paths in one step; False where the system cannot (no
    ``renameat2``, or a file system without it): the caller then renames in two."""
    import ctypes

    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    at_cwd, rename_exchange = -100, 2
    if renameat2(at_cwd, os.fsencode(first), at_cwd, os.fsencode(second), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), second)
