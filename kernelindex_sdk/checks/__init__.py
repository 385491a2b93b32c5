"""Semantic checks: the rules a JSON Schema cannot express, one module per apiVersion.

A version module exports ``check_record(record, pointer, now) -> list[Problem]`` (run
only on schema-valid records, so it may trust their shape; ``now`` None means the
clock's time, read only by a rule that needs it) and ``REFERENCES``, the map
from bundle member to ``(kind, run spec field)``. It may export ``CHECKED_KINDS``, the
kinds ``check_record`` has rules for, and ``QUICK_RULES``: kind → ``passes(spec, now)
-> bool``, True only when ``check_record`` finds nothing in a record of that kind with
that spec (a validation session asks it of each record of a stream, and the full rules
only where it says False). :func:`for_version` finds the module
by name, so a new apiVersion brings its own module and the engine stays unchanged.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from datetime import datetime
from functools import cache, lru_cache
from types import ModuleType
from typing import Any

from kernelindex_sdk.errors import Problem

RecordCheck = Callable[[Mapping[str, Any], str, datetime | None], list[Problem]]


@lru_cache(maxsize=256)  # keyed by input text: bounded, so bogus versions cannot pile up
def for_version(api_version: str) -> ModuleType | None:
    """The checks module of ``group/version`` (``kernelindex.dev/v1alpha1`` → ``v1alpha1``)."""
    version = api_version.rsplit("/", 1)[-1]
    if not version.isidentifier():
        return None
    try:
        return importlib.import_module(f"{__name__}.{version}")
    except ModuleNotFoundError:
        return None


@cache
def newest() -> ModuleType:
    """The checks module of the newest apiVersion this SDK knows."""
    import pkgutil
    import re

    def key(name: str) -> tuple[int, int, int]:
        match = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", name)
        if match is None:
            return (-1, 0, 0)
        stage = {"alpha": 0, "beta": 1, None: 2}[match.group(2)]
        return (int(match.group(1)), stage, int(match.group(3) or 0))

    names = [info.name for info in pkgutil.iter_modules(__path__)]
    module = importlib.import_module(f"{__name__}.{max(names, key=key)}")
    return module


def bundle_members(api_version: object) -> tuple[str, ...]:
    """The members a bundle of ``api_version`` may hold, in the order they are checked
    and listed: ``run``, then every record its run references (``REFERENCES``). An
    unknown version (or a value that is no string at all: input is untrusted) gets the
    newest version's members, so a bundle is still taken apart (and its run reported
    as of an unknown version)."""
    return _bundle_members(api_version if isinstance(api_version, str) else None)


@lru_cache(maxsize=256)
def _bundle_members(api_version: str | None) -> tuple[str, ...]:
    module = for_version(api_version) if api_version is not None else None
    references: Mapping[str, Any] = getattr(module or newest(), "REFERENCES", {})
    return ("run", *references)
