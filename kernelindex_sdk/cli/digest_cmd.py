"""``kernelindex digest PATH...`` and ``kernelindex canonicalize FILE``."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from kernelindex_sdk.base.escaping import one_line


def run_digest(paths: tuple[str, ...], format_: str) -> int:
    """Print a line (or a JSON entry) per record, bundle members included.

    Records are read by the document pipeline, as ``validate`` reads them, but not
    validated: anything with ``apiVersion``, ``kind`` and ``spec`` has a digest.
    Problems go to stderr. Exit status: 2 when anything could not be read (or
    nothing was found), 1 when an item is not a record, else 0.
    """
    from kernelindex_sdk.reading.sources import STDIN, standard_input
    from kernelindex_sdk.validating.digesting import DigestSession
    from kernelindex_sdk.validating.pipeline import Pipeline

    rows: list[dict[str, Any]] = []
    pipeline = Pipeline(
        paths, checker=DigestSession(), stdin=standard_input() if STDIN in paths else None
    )
    for item in pipeline:
        if item.problems:
            sys.stdout.flush()
            for problem in item.problems:
                sys.stderr.write(f"{problem}\n")
        for ref in item.records:
            if format_ == "json":
                rows.append(
                    {
                        "digest": ref.digest,
                        "kind": ref.kind,
                        "name": ref.name,
                        "file": item.source,
                        "line": item.line,
                        "pointer": ref.pointer,
                    }
                )
            else:
                sys.stdout.write(one_line(f"{ref.digest}  {ref.kind}  {ref.name or '-'}") + "\n")
    if format_ == "json":
        json.dump(rows, sys.stdout, ensure_ascii=True, indent=2)
        sys.stdout.write("\n")
    if not pipeline.tally.files and not pipeline.tally.unreadable:
        sys.stderr.write("kernelindex digest: no .json, .jsonl or .ndjson files found\n")
    return pipeline.tally.exit_status()


@click.command("digest")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--format",
    "format_",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
)
def digest_command(paths: tuple[str, ...], format_: str) -> None:
    """Print `sha256:<hex>  <Kind>  <metadata.name>` for every record given.

    The digest is sha256 of the RFC 8785 form of {apiVersion, kind, spec}; metadata is
    left out. Every member of a bundle gets its own line. PATH is anything validate
    takes: files, directories, JSON Lines, or - (stdin).
    """
    sys.exit(run_digest(paths, format_))


def run_canonicalize(path: str) -> int:
    """Write the RFC 8785 bytes of the one document in ``path`` (``-``: stdin)."""
    from kernelindex_sdk.canonical import canonicalize
    from kernelindex_sdk.errors import IntakeError
    from kernelindex_sdk.reading.sources import iter_documents

    for document in iter_documents(path, jsonl=False):
        if isinstance(document, IntakeError):
            sys.stderr.write(f"{document.problem}\n")
            return 2
        sys.stdout.buffer.write(canonicalize(document.value))
    sys.stdout.buffer.flush()
    return 0


@click.command("canonicalize")
@click.argument("path")
def canonicalize_command(path: str) -> None:
    """Write the RFC 8785 (JCS) bytes of any JSON document to stdout, exactly.

    No trailing newline: the output is the byte string a digest is taken over.
    PATH is one regular file, or - (stdin).
    """
    sys.exit(run_canonicalize(path))
