"""Naming rules every importer shares: slugs, record names, GPU slugs.

The seeds fix these rules (see FORMAT-NOTES): a GPU slug is the lower-cased name with
runs of other characters as ``-``; a record name is lower-cased with ``/`` and ``_``
as ``-`` and cut plainly at 100 characters (seed 001's name ends in ``-``). They are
kept in one place because every source's text is slugged for ids, names and file
names, and records of different sources about the same GPU must agree.
"""

from __future__ import annotations

import re

#: Record names are cut plainly at this length (seed 001 shows the cut is not tidied).
NAME_LIMIT = 100

_NOT_ALNUM = re.compile(r"[^a-z0-9]+")
_NOT_NAME = re.compile(r"[^a-z0-9._-]")
_NOT_SLUG = re.compile(r"[^a-z0-9._-]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def gpu_slug(gpu_name: str) -> str:
    """``NVIDIA H100 80GB HBM3`` -> ``nvidia-h100-80gb-hbm3``."""
    return _NOT_ALNUM.sub("-", gpu_name.lower()).strip("-") or "unknown-gpu"


def slug(text: str) -> str:
    """A schema slug (``^[a-z0-9][a-z0-9._-]*$``) for a kernel, provider or parameter name.

    Lower-cased; runs of other characters become ``_`` (the separator Liger's own
    names use); a leading ``.``, ``_`` or ``-`` is dropped.
    """
    value = _NOT_SLUG.sub("_", text.strip().lower()).lstrip("._-")
    return value[:128] or "unnamed"


def snake_slug(text: str) -> str:
    """A slug that keeps CamelCase word breaks: ``NumBlocks`` -> ``num_blocks``.

    For sources whose names are C++ or Python identifiers (nvbench axes), so that
    ``BlockSize`` does not become the unreadable ``blocksize``.
    """
    value = slug(_CAMEL.sub("_", text.strip())).rstrip("._-")
    return value or slug(text)


def value_slug(text: str) -> str:
    """A string parameter value as it appears in a workload slug (``llama_3_8b``)."""
    return _NOT_SLUG.sub("-", text.strip().lower()).strip("-") or "empty"


def record_name(text: str) -> str:
    """A metadata.name: lower-cased, ``/`` and ``_`` as ``-``, cut at 100 characters.

    Characters the name pattern does not allow become ``-`` as well, so any input
    still yields a valid name.
    """
    value = text.lower().replace("/", "-").replace("_", "-")
    value = _NOT_NAME.sub("-", value)
    if not value or not value[0].isalnum() or not value[0].isascii():
        value = "x" + value
    return value[:NAME_LIMIT]
