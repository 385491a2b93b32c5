"""Writing files so that a failure never leaves half a file behind.

Every file the SDK or an adapter writes goes through :func:`atomic_write_bytes`: the
bytes land in a temporary file in the same directory, are flushed to disk, and only
then renamed over the target (``os.replace`` is atomic on POSIX and Windows). A
reader sees the old file or the new one, never a torn one. Writing the same bytes
again leaves the file (and its mtime) untouched, so re-running an import into the
same directory changes nothing.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> bool:
    """Write ``data`` to ``path`` atomically; return False when it already held exactly that."""
    target = Path(path)
    try:
        if target.stat().st_size == len(data) and target.read_bytes() == data:
            return False
    except OSError:
        pass
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as tmp:
            tmp.write(data)
            tmp.flush()
            os.fsync(tmp.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    return True
