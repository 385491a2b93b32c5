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
from collections.abc import Callable, Iterable
from typing import Final

from kernelindex_sdk.base.ownedfolders import (
    into_place,
    new_work_folder,
    not_written_by,
    write_manifest,
)
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
    work = new_work_folder(target)
    try:
        sizes = _write_pages(site, work, on_file)
        write_manifest(work, MANIFEST, _WRITER)
        into_place(work, target)
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
    foreign = not_written_by(target, MANIFEST, _WRITER)
    if foreign is not None:
        raise SiteRefused(f"{out}: not replaced, even with --force: {foreign}; nothing written")
    return target
