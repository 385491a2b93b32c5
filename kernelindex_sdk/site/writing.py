"""Writing a site into a folder: whole or not at all, and never over what it did not write.

The site is written into a hidden folder beside its final place (``.<name>.<random>``)
and swapped into place in one step (:func:`~kernelindex_sdk.base.outputs.exchange`)
once every page is written, so a run that is killed or fails leaves the old folder (or
nothing) where the site goes — never part of a site presented as a whole one; a killed
run's hidden folder is left beside it, named as such.

The folder holds a manifest (:data:`MANIFEST`) of every file written, by which a later
``force`` recognises the tool's own output: an existing non-empty folder is replaced
only with ``force``, and only when everything in it is what a report wrote there
(same names, same sizes); a folder holding anything else is refused, ``force`` or not.
Never an output that is, or holds, or lies inside an input: replacing it would delete
the input, and a site inside an input folder (its schema files are ``.json``) would be
read as input next time.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from typing import Final

from kernelindex_sdk.site.build import Site

#: The manifest a report writes into its folder, listing every file with its size.
MANIFEST: Final = ".kernelindex-report.json"
_WRITER: Final = "kernelindex report"


class SiteRefused(ValueError):
    """The output cannot be written: not empty (and no ``force``), not the report's own,
    an input's place, or its parent missing. The message is one line."""


def write_site(
    site: Site,
    out: str,
    *,
    force: bool = False,
    inputs: Iterable[str] = (),
    on_file: Callable[[str], None] | None = None,
) -> int:
    """Write every page of ``site`` into the folder ``out``; return how many files.

    ``inputs``: the paths the site was read from (never replaced or written into).
    ``on_file`` is told each path as it is written (a progress bar). Raises
    :class:`SiteRefused` before writing anything where ``out`` may not be written, and
    ``OSError`` where writing fails (nothing is then in place).
    """
    target = _output_folder(out, list(inputs), force)
    work = tempfile.mkdtemp(prefix=f".{os.path.basename(target)}.", dir=os.path.dirname(target))
    try:
        os.chmod(work, 0o777 & ~_umask())
        sizes = _write_pages(site, work, on_file)
        _write_manifest(work, sizes)
        _into_place(work, target)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return len(sizes)


def _write_pages(site: Site, work: str, on_file: Callable[[str], None] | None) -> dict[str, int]:
    sizes: dict[str, int] = {}
    made: set[str] = set()
    for path in site.paths():
        data = site.page(path)
        if data is None:  # pragma: no cover - paths() names only pages that exist
            continue
        folder = os.path.dirname(path)
        if folder and folder not in made:
            os.makedirs(os.path.join(work, folder), exist_ok=True)
            made.add(folder)
        with open(os.path.join(work, path), "wb") as handle:
            handle.write(data)
        sizes[path] = len(data)
        if on_file is not None:
            on_file(path)
    return sizes


def _output_folder(out: str, inputs: list[str], force: bool) -> str:
    """Where ``out`` resolves to, once it is known that a report may write there."""
    from kernelindex_sdk.base.outputs import folder_holding, input_inside, real

    if not out:
        raise SiteRefused("--out must not be empty")
    inside = input_inside(out, inputs)
    if inside is not None:
        raise SiteRefused(
            f"{out}: holds the input {inside}: replacing it would delete it; nothing written"
        )
    holding = folder_holding(out, inputs)
    if holding is not None:
        raise SiteRefused(
            f"{out}: is inside the input folder {holding}: the site's files would be read as"
            " input next time; write it elsewhere. Nothing written"
        )
    target = real(out)
    if not os.path.isdir(os.path.dirname(target)):
        raise SiteRefused(f"{out}: the folder it would be made in does not exist; nothing written")
    if not os.path.lexists(target):
        return target
    if not os.path.isdir(target):
        raise SiteRefused(f"{out}: exists and is not a folder; nothing written")
    if not os.listdir(target):
        return target
    if not force:
        raise SiteRefused(
            f"{out}: exists and is not empty; use --force to replace an earlier report"
        )
    foreign = _not_written_by_report(target)
    if foreign is not None:
        raise SiteRefused(f"{out}: not replaced, even with --force: {foreign}; nothing written")
    return target


def _files(folder: str) -> dict[str, int]:
    """Every entry under ``folder`` that is not a folder (links not followed), by its
    ``/``-separated path relative to ``folder``: its size (-1 for a link)."""
    found: dict[str, int] = {}
    for root, folders, names in os.walk(folder):
        for name in [*names, *(f for f in folders if os.path.islink(os.path.join(root, f)))]:
            path = os.path.join(root, name)
            relative = os.path.relpath(path, folder).replace(os.sep, "/")
            found[relative] = -1 if os.path.islink(path) else os.lstat(path).st_size
    return found


def _write_manifest(work: str, sizes: dict[str, int]) -> None:
    from orjson import OPT_INDENT_2, OPT_SORT_KEYS, dumps

    manifest = {"writer": _WRITER, "files": sizes}
    with open(os.path.join(work, MANIFEST), "wb") as handle:
        handle.write(dumps(manifest, option=OPT_INDENT_2 | OPT_SORT_KEYS) + b"\n")
        handle.flush()
        os.fsync(handle.fileno())


def _not_written_by_report(folder: str) -> str | None:
    """Why the non-empty ``folder`` is not a report's own output, or None: it holds the
    manifest a report wrote and nothing but the files it lists, of the sizes it lists."""
    from orjson import loads

    try:
        with open(os.path.join(folder, MANIFEST), "rb") as handle:
            manifest = loads(handle.read(1 << 26))
        listed = manifest["files"]
        if manifest["writer"] != _WRITER or not isinstance(listed, dict):
            raise ValueError
    except FileNotFoundError:
        return f"it holds no {MANIFEST}, so kernelindex report did not write it"
    except (OSError, ValueError, TypeError, KeyError):
        return f"its {MANIFEST} is not one kernelindex report wrote"
    for name, size in sorted(_files(folder).items()):
        if name != MANIFEST and listed.get(name) != size:
            what = "was changed since" if name in listed else "is not"
            return f"{name} {what} what kernelindex report wrote there"
    return None


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _into_place(work: str, target: str) -> None:
    """The finished folder at ``target``: swapped with the old one in one step where
    the system can (the old one then removed), else renamed in two."""
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
