"""What validated a record: one fingerprint of the installed checks.

``kernelindex store add`` checks every record before storing it and writes this
fingerprint beside that add (docs/store.md, "Trusting a store's checks"). A reader
that finds every add of a store made under the fingerprint it is running itself may
take the stored records as checked — they are immutable and passed checks at least
as strict as its own — instead of checking them all again; under any other
fingerprint it checks them as it checks files.

So the fingerprint must change whenever anything that decides validity could: it is
the SHA-256 of the SDK's version, the versions of the libraries that take part in
checking (jsonschema, jsonschema-rs, referencing, jiter, orjson, rfc8785, and the
format validators), every file of the installed schema tree, and every module of
the SDK itself. Deliberately coarse: any change to the code or the schemas, even one
that could not matter, makes a store's records be checked again, which costs time,
never correctness.
"""

from __future__ import annotations

import functools
import hashlib
from importlib import metadata
from pathlib import Path
from typing import Final

from kernelindex_sdk import __version__
from kernelindex_sdk.schema.registry import packaged_schema_root

__all__ = ["PREFIX", "checks_fingerprint"]

#: The fingerprint's text starts with this (its scheme, should another ever be needed).
PREFIX: Final = "checks-sha256:"
#: Distributions whose behaviour is part of checking a record.
_LIBRARIES: Final = (
    "jsonschema",
    "jsonschema-rs",
    "referencing",
    "jiter",
    "orjson",
    "rfc8785",
    "rfc3339-validator",
    "rfc3986-validator",
)


@functools.cache
def checks_fingerprint() -> str:
    """The fingerprint of the checks this process runs (module docstring); computed
    once per process (it reads the SDK's modules and schemas)."""
    hasher = hashlib.sha256()

    def feed(label: str, data: bytes) -> None:
        hasher.update(b"%d:%s\0%d\0" % (len(label), label.encode(), len(data)))
        hasher.update(data)

    feed("kernelindex-sdk", __version__.encode())
    for name in _LIBRARIES:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "-"
        feed(f"library/{name}", version.encode())
    for kind, root in (("schemas", packaged_schema_root()), ("sdk", Path(__file__).parent.parent)):
        for path in sorted(root.rglob("*")):
            if path.is_file() and (kind == "schemas" or path.suffix == ".py"):
                feed(f"{kind}/{path.relative_to(root).as_posix()}", path.read_bytes())
    return PREFIX + hasher.hexdigest()
