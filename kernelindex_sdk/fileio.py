"""Writing files so that a failure never leaves half a file behind.

Every file the SDK or an adapter writes goes through :func:`atomic_write_bytes` (one
file) or :func:`atomic_write_many` (a batch): the bytes land in a temporary file in the
same directory, reach the disk, and only then are renamed over the target
(``os.replace`` is atomic on POSIX and Windows). A reader sees the old file or the new
one, never a torn one. Writing the same bytes again leaves the file (and its mtime)
untouched, so re-running an import into the same directory changes nothing.

New files get the usual permissions (``0666`` less the umask), not ``mkstemp``'s
private ``0600``; a replaced file keeps its mode.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


def _unchanged(target: Path, data: bytes) -> bool:
    try:
        return target.stat().st_size == len(data) and target.read_bytes() == data
    except OSError:
        return False


def _default_mode() -> int:
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def _temp_copy(target: Path, data: bytes, *, sync: bool) -> str:
    """Write ``data`` to a temporary file beside ``target``; return its name."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as tmp:
            tmp.write(data)
            tmp.flush()
            try:
                mode = target.stat().st_mode & 0o7777
            except OSError:
                mode = _default_mode()
            os.chmod(tmp_name, mode)
            if sync:
                os.fsync(tmp.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    return tmp_name


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> bool:
    """Write ``data`` to ``path`` atomically; return False when it already held exactly that."""
    target = Path(path)
    if _unchanged(target, data):
        return False
    tmp_name = _temp_copy(target, data, sync=True)
    try:
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    return True


def atomic_write_many(files: Iterable[tuple[str | os.PathLike[str], bytes]]) -> list[bool]:
    """Write a batch of files, all or none, with one sync instead of one per file.

    Every changed file is first written to a temporary beside its target; only when all
    of them are written (and synced, once, with ``os.sync``) are they renamed into
    place. A failure while writing leaves every target as it was. Returns, per file,
    whether it changed (False: it already held exactly those bytes).
    """
    pending: list[tuple[str, Path]] = []
    changed: list[bool] = []
    renamed = 0
    try:
        for path, data in files:
            target = Path(path)
            if _unchanged(target, data):
                changed.append(False)
                continue
            pending.append((_temp_copy(target, data, sync=False), target))
            changed.append(True)
        if pending:
            os.sync()
        for tmp_name, target in pending:
            os.replace(tmp_name, target)
            renamed += 1
    except BaseException:
        for tmp_name, _ in pending[renamed:]:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
        raise
    return changed
