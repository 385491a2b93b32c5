"""Turning PATH arguments into a stream of documents.

Files are read as one JSON document, or as JSON Lines when named ``*.jsonl`` /
``*.ndjson``; directories are walked recursively (sorted, hidden entries skipped) for
files with those suffixes; ``-`` is standard input. Unreadable paths come back as
:class:`~kernelindex_sdk.errors.IntakeError` items, never as exceptions, so one bad
file does not hide the rest.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from kernelindex_sdk.errors import IntakeError, UnreadableFile
from kernelindex_sdk.intake import Document, iter_documents

SUFFIXES = (".json", ".jsonl", ".ndjson")


def expand_paths(paths: Iterable[str]) -> Iterator[str]:
    """Every file a list of PATH arguments names, directories expanded recursively."""
    for path in paths:
        if path != "-" and os.path.isdir(path):
            yield from _walk(Path(path))
        else:
            yield path


def _walk(root: Path) -> Iterator[str]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if not name.startswith(".") and name.endswith(SUFFIXES):
                yield os.path.join(dirpath, name)


def read_documents(paths: Iterable[str]) -> Iterator[tuple[str, Document | IntakeError]]:
    """(file, document or error) for every document under the given paths, streamed."""
    for arg in paths:
        if arg == "-":
            yield from _documents(arg)
            continue
        try:
            mode: int | None = os.stat(arg).st_mode  # one stat: what isdir + exists ask
        except (OSError, ValueError):
            mode = None
        if mode is not None and stat.S_ISDIR(mode):
            # Found by the walk, so it existed a moment ago: if it vanished since,
            # reading it says so. (A stat per file is a few percent of reading it.)
            for path in _walk(Path(arg)):
                yield from _documents(path)
        elif mode is None:
            yield arg, UnreadableFile("no such file or directory", source=arg)
        else:
            yield from _documents(arg)


def _documents(path: str) -> Iterator[tuple[str, Document | IntakeError]]:
    try:
        for document in iter_documents(path):
            yield path, document
    except IntakeError as error:
        yield path, error
