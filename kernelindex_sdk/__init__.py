"""kernelindex SDK: schemas, models, digests and validation for GPU-kernel benchmark records.

``import kernelindex_sdk as ki`` gives the life cycle of a record — read, build, link,
validate, digest, write — on plain JSON values and model instances alike::

    doc = ki.load_file("run.json")          # strict JSON intake
    problems = ki.validate(doc)             # [] when valid, else located Problems
    ki.digest(doc["run"])                   # "sha256:..." of {apiVersion, kind, spec}
    run = ki.structure(doc["run"], ki.models.BenchmarkRun)
    run = ki.link(run, protocol=..., environment=...)   # reference digests filled in
    text = ki.dumps(run, indent=2)

Everything else lives in submodules: :mod:`~kernelindex_sdk.validating.pipeline`
(validating paths as the CLI does), :mod:`~kernelindex_sdk.reading.sources` (reading files,
directories, JSON Lines), :mod:`~kernelindex_sdk.validating.validation` (sessions),
:mod:`~kernelindex_sdk.schema.bundled`, :mod:`~kernelindex_sdk.schema.schemafiles`,
:mod:`~kernelindex_sdk.models.strategies` (hypothesis), :mod:`~kernelindex_sdk.schemadiff`
(what a schema change breaks, with witnesses).

The top level holds what a user of the library needs: the record functions, the
models, the schema registry, :class:`Problem`, and the errors those functions raise on
purpose, which are the ones a caller catches — the base :class:`KernelIndexError`;
:class:`IntakeError`, the one class of every reason text is not strict JSON or a path
cannot be read (``load_file``, ``loads``); :class:`NotJSON` and :class:`NotARecord`
(``dumps``, ``digest``, ``link``); :class:`ModelError` (``structure``); and the
registry's :class:`UnknownKind`, :class:`SchemaDirectoryError` and
:class:`UnresolvableReference`. The subclasses of ``IntakeError`` (``MalformedJSON``,
``DuplicateKey``, ``UnreadableFile``, ...) say which reason; a caller that tells them
apart imports them from :mod:`kernelindex_sdk.errors`.

Names are imported on first use, so a command that needs only the intake layer does
not pay for jsonschema or cattrs at start-up. :data:`_EXPORTS` is the one list of the
top-level names; ``__all__`` is made from it, and a test checks the typing imports
below against it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from kernelindex_sdk.base.lightimport import names_on_first_use, standard_modules

# dataclasses and uuid (which orjson imports) and pathlib, loaded first here, come
# without inspect, platform and urllib.parse, a large share of start-up: see lightimport.
standard_modules()

__version__ = "0.1.0"

#: Top-level name → the module that defines it. ``models`` is the models package.
_EXPORTS: dict[str, str] = {
    # reading
    "loads": "kernelindex_sdk.reading.intake",
    "load_file": "kernelindex_sdk.reading.sources",
    # the record life cycle
    "validate": "kernelindex_sdk.validating.facade",
    "digest": "kernelindex_sdk.validating.facade",
    "canonicalize": "kernelindex_sdk.validating.facade",
    "dumps": "kernelindex_sdk.validating.facade",
    "link": "kernelindex_sdk.validating.facade",
    "timestamp": "kernelindex_sdk.validating.facade",
    "nanoseconds": "kernelindex_sdk.validating.facade",
    # models
    "structure": "kernelindex_sdk.models",
    "unstructure": "kernelindex_sdk.models",
    # schemas
    "SchemaRegistry": "kernelindex_sdk.schema.registry",
    "default_registry": "kernelindex_sdk.schema.registry",
    # problems and errors
    "Problem": "kernelindex_sdk.errors",
    "KernelIndexError": "kernelindex_sdk.errors",
    "ModelError": "kernelindex_sdk.models",
    "NotARecord": "kernelindex_sdk.errors",
    "NotJSON": "kernelindex_sdk.errors",
    "UnknownKind": "kernelindex_sdk.errors",
    "SchemaDirectoryError": "kernelindex_sdk.errors",
    "UnresolvableReference": "kernelindex_sdk.errors",
    "IntakeError": "kernelindex_sdk.errors",
}

__all__ = ["models", *_EXPORTS]  # built from the one list above

if TYPE_CHECKING:
    from kernelindex_sdk import models
    from kernelindex_sdk.errors import (
        IntakeError,
        KernelIndexError,
        NotARecord,
        NotJSON,
        Problem,
        SchemaDirectoryError,
        UnknownKind,
        UnresolvableReference,
    )
    from kernelindex_sdk.models import ModelError, structure, unstructure
    from kernelindex_sdk.reading.intake import loads
    from kernelindex_sdk.reading.sources import load_file
    from kernelindex_sdk.schema.registry import SchemaRegistry, default_registry
    from kernelindex_sdk.validating.facade import (
        canonicalize,
        digest,
        dumps,
        link,
        nanoseconds,
        timestamp,
        validate,
    )


_on_first_use = names_on_first_use(__name__, _EXPORTS, globals())


def __getattr__(name: str) -> Any:
    if name == "models":  # the models package itself
        return importlib.import_module("kernelindex_sdk.models")
    return _on_first_use(name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
