"""kernelindex SDK: schemas, models, digests and validation for GPU-kernel benchmark records.

``import kernelindex_sdk as ki`` gives the whole library surface::

    doc = ki.load_file("run.json")          # strict JSON intake
    problems = ki.validate(doc)             # [] when valid, else located Problems
    ki.digest(doc["run"])                   # "sha256:..." of {apiVersion, kind, spec}
    ki.canonicalize(doc)                    # RFC 8785 bytes
    run = ki.structure(doc["run"], ki.models.BenchmarkRun)

Names are imported on first use, so a command that needs only the intake layer does
not pay for jsonschema or cattrs at start-up.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # strict JSON intake
    "loads": "kernelindex_sdk.intake",
    "load_file": "kernelindex_sdk.intake",
    "iter_documents": "kernelindex_sdk.intake",
    "iter_jsonl": "kernelindex_sdk.intake",
    "Document": "kernelindex_sdk.intake",
    # canonical form and digests
    "canonicalize": "kernelindex_sdk.canonical",
    "digest": "kernelindex_sdk.canonical",
    # schemas
    "SchemaRegistry": "kernelindex_sdk.registry",
    "default_registry": "kernelindex_sdk.registry",
    # models
    "structure": "kernelindex_sdk.models",
    "unstructure": "kernelindex_sdk.models",
    "ModelError": "kernelindex_sdk.models",
    # validation
    "validate": "kernelindex_sdk.validation",
    "ValidationSession": "kernelindex_sdk.validation",
    "Item": "kernelindex_sdk.validation",
    "ValidationEngine": "kernelindex_sdk.engine",
    "JsonschemaEngine": "kernelindex_sdk.engine",
    # errors
    "Problem": "kernelindex_sdk.errors",
    "KernelIndexError": "kernelindex_sdk.errors",
    "IntakeError": "kernelindex_sdk.errors",
    "UnknownKind": "kernelindex_sdk.errors",
    # files
    "atomic_write_bytes": "kernelindex_sdk.fileio",
}

__all__ = [*sorted(_EXPORTS), "models"]

if TYPE_CHECKING:
    from kernelindex_sdk import models
    from kernelindex_sdk.canonical import canonicalize, digest
    from kernelindex_sdk.engine import JsonschemaEngine, ValidationEngine
    from kernelindex_sdk.errors import IntakeError, KernelIndexError, Problem, UnknownKind
    from kernelindex_sdk.fileio import atomic_write_bytes
    from kernelindex_sdk.intake import Document, iter_documents, iter_jsonl, load_file, loads
    from kernelindex_sdk.models import ModelError, structure, unstructure
    from kernelindex_sdk.registry import SchemaRegistry, default_registry
    from kernelindex_sdk.validation import Item, ValidationSession, validate


def __getattr__(name: str) -> Any:
    if name == "models":
        return importlib.import_module("kernelindex_sdk.models")
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kernelindex_sdk' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
