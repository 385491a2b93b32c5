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
    # strict JSON intake, and where documents come from
    "loads": "kernelindex_sdk.intake",
    "Document": "kernelindex_sdk.intake",
    "load_file": "kernelindex_sdk.sources",
    "iter_documents": "kernelindex_sdk.sources",
    "iter_jsonl": "kernelindex_sdk.sources",
    # canonical form and digests
    "canonicalize": "kernelindex_sdk.canonical",
    "digest": "kernelindex_sdk.canonical",
    # schemas
    "SchemaRegistry": "kernelindex_sdk.registry",
    "default_registry": "kernelindex_sdk.registry",
    "bundled_schema": "kernelindex_sdk.bundled",
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
    # the document pipeline
    "Pipeline": "kernelindex_sdk.pipeline",
    "Tally": "kernelindex_sdk.pipeline",
    "WorkerFailed": "kernelindex_sdk.parallel",
    # errors
    "Problem": "kernelindex_sdk.errors",
    "KernelIndexError": "kernelindex_sdk.errors",
    "IntakeError": "kernelindex_sdk.errors",
    "UnreadableFile": "kernelindex_sdk.errors",
    "UnreadableDirectory": "kernelindex_sdk.errors",
    "SymlinkLoop": "kernelindex_sdk.errors",
    "NotARegularFile": "kernelindex_sdk.errors",
    "DocumentTooLarge": "kernelindex_sdk.errors",
    "EmptyDocument": "kernelindex_sdk.errors",
    "MalformedJSON": "kernelindex_sdk.errors",
    "InvalidEncoding": "kernelindex_sdk.errors",
    "ByteOrderMark": "kernelindex_sdk.errors",
    "DuplicateKey": "kernelindex_sdk.errors",
    "NonFiniteNumber": "kernelindex_sdk.errors",
    "NumberOutOfRange": "kernelindex_sdk.errors",
    "NestingTooDeep": "kernelindex_sdk.errors",
    "UnknownKind": "kernelindex_sdk.errors",
    "SchemaDirectoryError": "kernelindex_sdk.errors",
    # files and terminals
    "atomic_write_bytes": "kernelindex_sdk.fileio",
    "atomic_write_many": "kernelindex_sdk.fileio",
    "Progress": "kernelindex_sdk.progress",
}

__all__ = [  # noqa: RUF022 - grouped as above
    "models",
    "loads", "load_file", "iter_documents", "iter_jsonl", "Document",
    "canonicalize", "digest",
    "SchemaRegistry", "default_registry", "bundled_schema",
    "structure", "unstructure", "ModelError",
    "validate", "ValidationSession", "Item", "ValidationEngine", "JsonschemaEngine",
    "Pipeline", "Tally", "WorkerFailed",
    "Problem", "KernelIndexError", "IntakeError", "UnreadableFile", "UnreadableDirectory",
    "SymlinkLoop", "NotARegularFile", "DocumentTooLarge", "EmptyDocument",
    "MalformedJSON", "InvalidEncoding", "ByteOrderMark", "DuplicateKey", "NonFiniteNumber",
    "NumberOutOfRange", "NestingTooDeep", "UnknownKind", "SchemaDirectoryError",
    "atomic_write_bytes", "atomic_write_many", "Progress",
]  # fmt: skip

if TYPE_CHECKING:
    from kernelindex_sdk import models
    from kernelindex_sdk.bundled import bundled_schema
    from kernelindex_sdk.canonical import canonicalize, digest
    from kernelindex_sdk.engine import JsonschemaEngine, ValidationEngine
    from kernelindex_sdk.errors import (
        ByteOrderMark,
        DocumentTooLarge,
        DuplicateKey,
        EmptyDocument,
        IntakeError,
        InvalidEncoding,
        KernelIndexError,
        MalformedJSON,
        NestingTooDeep,
        NonFiniteNumber,
        NotARegularFile,
        NumberOutOfRange,
        Problem,
        SchemaDirectoryError,
        SymlinkLoop,
        UnknownKind,
        UnreadableDirectory,
        UnreadableFile,
    )
    from kernelindex_sdk.fileio import atomic_write_bytes, atomic_write_many
    from kernelindex_sdk.intake import Document, loads
    from kernelindex_sdk.models import ModelError, structure, unstructure
    from kernelindex_sdk.parallel import WorkerFailed
    from kernelindex_sdk.pipeline import Pipeline, Tally
    from kernelindex_sdk.progress import Progress
    from kernelindex_sdk.registry import SchemaRegistry, default_registry
    from kernelindex_sdk.sources import iter_documents, iter_jsonl, load_file
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
