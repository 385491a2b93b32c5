"""Folders a command writes whole and owns: ``store export``'s, ``report``'s.

Such a folder is written beside its place under a hidden name, then swapped in whole
(:func:`into_place`), so that a reader or a killed run sees the old folder or the new
one, never half of one. A manifest in it names the writer and every file it wrote with
its size (:func:`write_manifest`); ``--force`` replaces a folder only where
:func:`not_written_by` finds it is the writer's own output, untouched since — never a
folder of someone else's files.
"""

from __future__ import annotations

import os
import shutil
import tempfile

__all__ = [
    "files_under",
    "into_place",
    "new_work_folder",
    "not_written_by",
    "umask",
    "write_manifest",
]

#: The most of a manifest read back (a manifest is a list of file names and sizes).
_MANIFEST_LIMIT = 1 << 26


def umask() -> int:
    """This process's umask (read by setting it, then set back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def new_work_folder(target: str) -> str:
    """A new hidden folder beside ``target`` to write into, with the permissions a new
    folder gets (``0777`` less the umask, not :func:`tempfile.mkdtemp`'s ``0700``)."""
    work = tempfile.mkdtemp(prefix=f".{os.path.basename(target)}.", dir=os.path.dirname(target))
    os.chmod(work, 0o777 & ~umask())
    return work


def files_under(folder: str) -> dict[str, int]:
    """Every entry under ``folder`` that is not a folder (links not followed), by its
    ``/``-separated path relative to ``folder``: its size (-1 for a link)."""
    found: dict[str, int] = {}
    for root, folders, names in os.walk(folder):
        for name in [*names, *(f for f in folders if os.path.islink(os.path.join(root, f)))]:
            path = os.path.join(root, name)
            relative = os.path.relpath(path, folder).replace(os.sep, "/")
            found[relative] = -1 if os.path.islink(path) else os.lstat(path).st_size
    return found


def write_manifest(work: str, name: str, writer: str, **extra: object) -> dict[str, int]:
    """The manifest ``name`` of everything written under ``work`` by ``writer`` (with
    ``extra`` keys beside), flushed to disk; return the files it lists."""
    from orjson import OPT_INDENT_2, OPT_SORT_KEYS, dumps

    files = files_under(work)
    manifest = {**extra, "writer": writer, "files": files}
    with open(os.path.join(work, name), "wb") as handle:
        handle.write(dumps(manifest, option=OPT_INDENT_2 | OPT_SORT_KEYS) + b"\n")
        handle.flush()
        os.fsync(handle.fileno())
    return files


def not_written_by(folder: str, name: str, writer: str) -> str | None:
    """Why the non-empty ``folder`` is not ``writer``'s own output, or None: it holds
    the manifest ``name`` that ``writer`` wrote, and nothing but the files it lists, of
    the sizes it lists."""
    from orjson import loads

    try:
        with open(os.path.join(folder, name), "rb") as handle:
            manifest = loads(handle.read(_MANIFEST_LIMIT))
        listed = manifest["files"]
        if manifest["writer"] != writer or not isinstance(listed, dict):
            raise ValueError
    except FileNotFoundError:
        return f"it holds no {name}, so {writer} did not write it"
    except (OSError, ValueError, TypeError, KeyError):
        return f"its {name} is not one {writer} wrote"
    for path, size in sorted(files_under(folder).items()):
        if path != name and listed.get(path) != size:
            what = "was changed since" if path in listed else "is not"
            return f"{path} {what} what {writer} wrote there"
    return None


def into_place(work: str, target: str) -> None:
    """The finished folder ``work`` at ``target``: swapped with the old one in one step
    where the system can (the old one then removed), else renamed in two."""
    from kernelindex_sdk.base.outputs import exchange

    if not os.path.lexists(target):
        os.rename(work, target)
        return
    if exchange(work, target):
        shutil.rmtree(work, ignore_errors=True)  # the old folder, swapped out
        return
    old = tempfile.mkdtemp(prefix=f".{os.path.basename(target)}.old.", dir=os.path.dirname(target))
    os.rmdir(old)
    os.rename(target, old)
    os.rename(work, target)
    shutil.rmtree(old, ignore_errors=True)
