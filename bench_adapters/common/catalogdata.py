"""Loading an importer's mapping data: JSON files shipped in its package, shape-checked.

Every importer keeps what it needs to *know* — GPU names, providers, summary tags,
file-name rules — as JSON data beside its code, so that supporting a new GPU, tag or
backend is a data change reviewed as data. These helpers read such a file and check
each value's shape as it is taken, so a broken file fails loudly at load time (a bug
in the package, :class:`CatalogError`) rather than producing odd records later.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

DATA_DIR = "data"


class CatalogError(Exception):
    """A catalog data file is missing or malformed (a bug in the package, not the input)."""


def load_data(package: str, name: str) -> dict[str, Any]:
    """``<package>/data/<name>`` as a JSON object."""
    try:
        text = resources.files(package).joinpath(DATA_DIR).joinpath(name).read_text("utf-8")
        value = json.loads(text)
    except (OSError, ValueError) as error:
        raise CatalogError(f"catalog file {DATA_DIR}/{name}: {error}") from error
    if not isinstance(value, dict):
        raise CatalogError(f"catalog file {DATA_DIR}/{name}: not a JSON object")
    return value


def expect_str(value: Any, where: str) -> str:
    """A non-empty string, or CatalogError naming ``where``."""
    if not isinstance(value, str) or not value:
        raise CatalogError(f"catalog {where}: expected a non-empty string, got {value!r}")
    return value


def optional_str(value: Any, where: str) -> str | None:
    """None, or a non-empty string."""
    return None if value is None else expect_str(value, where)


def expect_object(value: Any, where: str) -> dict[str, Any]:
    """A JSON object."""
    if not isinstance(value, dict):
        raise CatalogError(f"catalog {where}: expected an object")
    return value


def str_map(value: Any, where: str) -> dict[str, str]:
    """An object of non-empty strings."""
    return {
        expect_str(k, where): expect_str(v, f"{where}/{k}")
        for k, v in expect_object(value, where).items()
    }


def str_list(value: Any, where: str) -> tuple[str, ...]:
    """An array of non-empty strings."""
    if not isinstance(value, list):
        raise CatalogError(f"catalog {where}: expected an array")
    return tuple(expect_str(item, where) for item in value)
