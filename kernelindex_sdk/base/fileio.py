"""Writing files so that a failure never leaves half a file — or half a batch — behind.

Every file the SDK or an adapter writes goes through :func:`atomic_write_bytes` (one
file) or :func:`atomic_write_many` (a batch). A reader sees the old file or the new
one, never a torn one, and writing the same bytes again leaves a file (and its mtime)
untouched, so re-running an import into the same directory changes nothing.

**One writer per directory.** Both functions hold the directory's writer lock
(:func:`directory_lock`: ``flock`` on the directory itself, so no lock file is left
in it) while they write. The lock is re-entrant within a process, so a caller that
must read a directory and then write into it without a second writer slipping in
between (an import merging into a stream) holds it around both.

**All or none, per directory.** A batch is first written into a hidden staging
folder in the target directory (``.kernelindex-batch-*``), synced, and then
*committed* by renaming a journal into that folder; only then are the files renamed
into place, and the folder removed. Whoever takes a directory's lock first finishes
what a killed writer left there: a committed batch is completed (its remaining files
renamed into place), an uncommitted one — and any temporary file of a single write —
is deleted. So:

* a failure or kill before the commit leaves the directory's visible files exactly as
  they were (the staging folder is removed by the next writer);
* after the commit, the whole batch lands: by the writer itself or, if it was killed
  while renaming, by the next writer to take the directory's lock. Between the kill
  and that next writer, a reader can see part of a committed batch — every file of
  it whole;
* a batch spanning several directories is all or none in each directory, committed
  one directory after the other.

A journal is checked whole before it is acted on (:class:`UnsafeJournal`): a staging
folder can hold anything someone left there, and a journal that is not JSON, or names
a file outside its folder (``..``, an absolute path, a symlink), stops the writer with
one line naming the journal — nothing is moved.

Hidden names are left out by every walk (``kernelindex validate DIR`` never reads a
staging folder). New files get the usual permissions (``0666`` less the umask), not
``mkstemp``'s private ``0600``; a replaced file keeps its mode. Every byte is written
whole or raises (:func:`~kernelindex_sdk.base.writes.write_all`): a disk that fills
partway is an ``OSError`` and the temporary file is removed, never renamed in short.
On systems without ``fcntl`` (Windows) there is no lock: one writer at a time is then
the caller's job.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import stat
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from kernelindex_sdk.base.escaping import one_line
from kernelindex_sdk.base.writes import write_all

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

#: Prefix of a batch's staging folder, and of a single write's temporary file.
STAGING_PREFIX = ".kernelindex-batch-"
TEMP_PREFIX = ".kernelindex-tmp-"
#: A staging folder holding this file is committed: its files are to be renamed in.
JOURNAL = "journal.json"
#: A journal larger than this is not one a write leaves (a name pair is ~100 bytes).
JOURNAL_LIMIT = 64 << 20
#: Temporary files that earlier kernelindex versions wrote beside their targets
#: (``.<name>.json.<8 characters>.tmp``), left only by a killed run: removed too.
_LEGACY_TEMP = re.compile(r"\..+\.jsonl?\.[a-z0-9_]{8}\.tmp")


class ExistingFiles(FileExistsError):
    """Files of a batch exist with other content, and replacing them was not allowed."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths = paths
        more = f" and {len(paths) - 1} more" if len(paths) > 1 else ""
        super().__init__(17, f"exists with other content{more}", str(paths[0]))


class UnsafeJournal(OSError):
    """A staging folder's journal that is not one this module writes: never acted on.

    A journal is only trusted as far as it can be checked: a JSON list of
    ``[staged file, target name]`` pairs, each a plain name (no ``/``, no ``..``, not
    absolute), each staged file a regular file inside its staging folder. Anything else
    — garbage, or names that would reach outside the directory — stops the writer
    before a single file is moved, with one line naming the journal and what is wrong;
    the folder is left as it is for a person to look at.
    """

    def __init__(self, journal: Path, reason: str) -> None:
        staging = journal.parent.name
        message = (
            f"a staging journal left in the folder cannot be trusted: {reason}; "
            f"nothing was moved (inspect {staging} and remove it)"
        )
        super().__init__(errno.EINVAL, one_line(message), str(journal))


def _unchanged(target: Path, data: bytes) -> bool:
    try:
        return target.stat().st_size == len(data) and target.read_bytes() == data
    except OSError:
        return False


def _default_mode() -> int:
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def _write_temp(directory: Path, target: Path, data: bytes, prefix: str, *, sync: bool) -> str:
    """Write ``data`` to a new temporary file in ``directory``, with ``target``'s mode."""
    fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=prefix, suffix=".tmp")
    try:
        try:
            write_all(fd, data)  # a disk that fills partway raises: never half a file
            try:
                mode = target.stat().st_mode & 0o7777
            except OSError:
                mode = _default_mode()
            os.chmod(tmp_name, mode)
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    return tmp_name


# ----------------------------------------------------------------------------- lock


class _Held:
    """A directory lock this process holds: the thread lock, the descriptor, the depth."""

    def __init__(self) -> None:
        self.thread_lock = threading.RLock()
        self.fd: int | None = None
        self.depth = 0


_HELD: dict[tuple[int, int], _Held] = {}
_HELD_GUARD = threading.Lock()


@contextlib.contextmanager
def directory_lock(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Hold the writer lock of directory ``path`` (created if missing) until the block ends.

    Exclusive between processes (``flock``; released by the kernel if the holder dies)
    and between threads, re-entrant within one thread. Taking it finishes or removes
    whatever a killed writer left in the directory (see the module docstring). Raises
    ``OSError`` when the directory cannot be created or opened.
    """
    directory = Path(path)
    directory.mkdir(parents=True, exist_ok=True)
    info = directory.stat()
    key = (info.st_dev, info.st_ino)
    with _HELD_GUARD:
        held = _HELD.setdefault(key, _Held())
    with held.thread_lock:
        if held.depth == 0:
            held.fd = _lock_fd(directory)
            try:
                recover(directory)
            except BaseException:
                _unlock_fd(held.fd)
                held.fd = None
                raise
        held.depth += 1
        try:
            yield directory
        finally:
            held.depth -= 1
            if held.depth == 0:
                _unlock_fd(held.fd)
                held.fd = None


def _lock_fd(directory: Path) -> int | None:
    if fcntl is None:  # pragma: no cover - Windows
        return None
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _unlock_fd(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)  # closing the last descriptor releases the flock


def recover(directory: str | os.PathLike[str]) -> None:
    """Finish what killed writers left in ``directory``; call with its lock held.

    A committed staging folder is completed (its files renamed into place), an
    uncommitted one removed; stray temporary files of single writes are deleted.
    """
    root = Path(directory)
    with os.scandir(root) as entries:
        leftovers = [entry for entry in entries if entry.name.startswith(".")]
    for entry in sorted(leftovers, key=lambda e: e.name):
        if entry.name.startswith(STAGING_PREFIX) and entry.is_dir(follow_symlinks=False):
            staging = Path(entry.path)
            journal = _read_journal(staging)
            if journal is not None:
                _rename_into_place(staging, root, journal)
            shutil.rmtree(staging, ignore_errors=False)
        elif (
            entry.name.startswith(TEMP_PREFIX) or _LEGACY_TEMP.fullmatch(entry.name)
        ) and entry.is_file(follow_symlinks=False):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.path)


def _read_journal(staging: Path) -> list[tuple[str, str]] | None:
    """The (staged file, target name) pairs of a committed batch; None if uncommitted.

    Checked whole before anything is acted on (:class:`UnsafeJournal` if it fails):
    the folder may hold anything a person or another program left there, and a journal
    is an instruction to move files.
    """
    path = staging / JOURNAL
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    # Read only a regular file of bounded size: a FIFO would block, /dev/zero never end.
    if not stat.S_ISREG(info.st_mode):
        raise UnsafeJournal(path, "not a regular file")
    if info.st_size > JOURNAL_LIMIT:
        raise UnsafeJournal(path, f"{info.st_size} bytes, more than a write ever leaves")
    data = path.read_bytes()
    try:
        entries = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise UnsafeJournal(path, f"not JSON ({error})") from None
    if not isinstance(entries, list):
        raise UnsafeJournal(path, f"not a list of pairs but {type(entries).__name__}")
    journal: list[tuple[str, str]] = []
    for index, entry in enumerate(entries):
        if not (
            isinstance(entry, list)
            and len(entry) == 2
            and all(isinstance(name, str) for name in entry)
        ):
            raise UnsafeJournal(path, f"entry {index} is not a [staged file, target] pair")
        staged, name = entry
        for role, value in (("staged file", staged), ("target", name)):
            if not _plain_name(value):
                raise UnsafeJournal(
                    path, f"entry {index}: {role} {value!r} is not a plain file name in the folder"
                )
        _check_staged(path, index, staging / staged)
        journal.append((staged, name))
    return journal


def _plain_name(name: str) -> bool:
    """One path component naming a file in its folder: not ``..``, not absolute."""
    separators = [os.sep, *([os.altsep] if os.altsep else []), "\0"]
    return name not in ("", ".", "..") and not any(sep in name for sep in separators)


def _check_staged(journal: Path, index: int, source: Path) -> None:
    """A staged file is a regular file of the staging folder, or gone (already renamed)."""
    try:
        info = source.lstat()
    except FileNotFoundError:
        return
    if not stat.S_ISREG(info.st_mode):
        raise UnsafeJournal(journal, f"entry {index}: staged {source.name!r} is not a regular file")
    if source.resolve().parent != journal.parent.resolve():
        raise UnsafeJournal(journal, f"entry {index}: staged {source.name!r} is outside its folder")


def _rename_into_place(staging: Path, root: Path, journal: list[tuple[str, str]]) -> None:
    for staged, name in journal:
        source = staging / staged
        if os.path.lexists(source):  # absent: renamed before the writer died
            os.replace(source, root / name)
    _sync_directory(root)


def _sync_directory(directory: Path) -> None:
    with contextlib.suppress(OSError):  # not every platform can fsync a directory
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# ----------------------------------------------------------------------------- writes


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> bool:
    """Write ``data`` to ``path`` atomically; return False when it already held exactly that."""
    target = Path(path)
    with directory_lock(target.parent) as directory:
        if _unchanged(target, data):
            return False
        tmp_name = _write_temp(directory, target, data, TEMP_PREFIX, sync=True)
        try:
            os.replace(tmp_name, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
            raise
    return True


def atomic_write_many(
    files: Iterable[tuple[str | os.PathLike[str], bytes]],
    *,
    replace: bool = True,
    advance: Callable[[int], None] | None = None,
) -> list[bool]:
    """Write a batch of files, all or none per directory, with one sync for the batch.

    Returns, per file, whether it changed (False: it already held exactly those
    bytes). With ``replace=False`` a file that exists with other content is never
    replaced: :class:`ExistingFiles` (a ``FileExistsError``) names every such file, and
    nothing is written. Any other failure before the commit leaves every target as it
    was; see the module docstring for what holds after it. ``advance`` (a progress
    bar's) is called with 1 as each file is compared with what is there, and again as
    each changed file is staged: :func:`write_steps` of the batch in all.
    """
    batch = [(Path(path), data) for path, data in files]
    groups: dict[Path, list[int]] = {}
    for index, (target, _) in enumerate(batch):
        groups.setdefault(target.parent, []).append(index)
    changed = [False] * len(batch)
    with contextlib.ExitStack() as stack:
        directories = {
            parent: stack.enter_context(directory_lock(parent)) for parent in sorted(groups)
        }
        existing = []
        tick = advance if advance is not None else _no_progress
        for index, (target, data) in enumerate(batch):
            tick(1)
            if _unchanged(target, data):
                tick(1)  # nothing to stage
                continue
            changed[index] = True
            if not replace and os.path.lexists(target):
                existing.append(target)
        if existing:
            raise ExistingFiles(existing)
        staged = [
            (directories[parent], [i for i in indexes if changed[i]])
            for parent, indexes in groups.items()
        ]
        staged = [(directory, indexes) for directory, indexes in staged if indexes]
        batches = []
        try:
            for directory, indexes in staged:
                batches.append(_stage(directory, [batch[i] for i in indexes], tick))
            if batches:
                os.sync()
            for staging, journal in batches:
                _commit(staging, journal)
        except BaseException:
            for staging, _ in batches:
                shutil.rmtree(staging, ignore_errors=True)
            raise
        for (directory, _), (staging, journal) in zip(staged, batches, strict=True):
            _rename_into_place(staging, directory, journal)
            shutil.rmtree(staging)
    return changed


def write_steps(files: int) -> int:
    """The steps :func:`atomic_write_many` counts through ``advance`` for ``files`` files."""
    return 2 * files


def _no_progress(n: int) -> None:
    """The ``advance`` of a batch nobody watches."""


def _stage(
    directory: Path, files: list[tuple[Path, bytes]], tick: Callable[[int], None] = _no_progress
) -> tuple[Path, list[tuple[str, str]]]:
    """Write ``files`` into a new staging folder of ``directory``; its uncommitted journal."""
    staging = Path(tempfile.mkdtemp(dir=directory, prefix=STAGING_PREFIX))
    by_name: dict[str, str] = {}  # target name -> staged file
    try:
        for target, data in files:
            tmp_name = _write_temp(staging, target, data, "", sync=False)
            tick(1)
            # A name given twice: the last bytes win, as they would written in order.
            by_name.pop(target.name, None)
            by_name[target.name] = os.path.basename(tmp_name)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return staging, [(staged, name) for name, staged in by_name.items()]


def _commit(staging: Path, journal: list[tuple[str, str]]) -> None:
    """Make a staged batch count: its journal, whole and on disk, under its final name."""
    text = json.dumps(journal, ensure_ascii=True).encode("ascii")
    pending = staging / (JOURNAL + ".tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0)
    fd = os.open(pending, flags | getattr(os, "O_CLOEXEC", 0))
    try:
        write_all(fd, text)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(pending, staging / JOURNAL)
    _sync_directory(staging)
