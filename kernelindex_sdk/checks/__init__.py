"""Semantic checks: the rules a JSON Schema cannot express, one module per apiVersion.

A version module exports ``check_record(record, pointer, now) -> list[Problem]`` (run
only on schema-valid records, so it may trust their shape) and ``REFERENCES``, the map
from bundle member to ``(kind, run spec field)``. :func:`for_version` finds the module
by name, so a new apiVersion brings its own module and the engine stays unchanged.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from datetime import datetime
from functools import cache
from types import ModuleType
from typing import Any

from kernelindex_sdk.errors import Problem

RecordCheck = Callable[[Mapping[str, Any], str, datetime], list[Problem]]


@cache
def for_version(api_version: str) -> ModuleType | None:
    """The checks module of ``group/version`` (``kernelindex.dev/v1alpha1`` → ``v1alpha1``)."""
    version = api_version.rsplit("/", 1)[-1]
    if not version.isidentifier():
        return None
    try:
        return importlib.import_module(f"{__name__}.{version}")
    except ModuleNotFoundError:
        return None
