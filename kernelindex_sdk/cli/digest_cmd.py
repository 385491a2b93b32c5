"""``kernelindex digest FILE...`` and ``kernelindex canonicalize FILE``."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from kernelindex_sdk.canonical import canonicalize
from kernelindex_sdk.cli.inputs import read_documents
from kernelindex_sdk.errors import IntakeError


def run_digest(paths: tuple[str, ...], format_: str) -> int:
    """Print a line (or a JSON entry) per record, bundle members included."""
    from kernelindex_sdk.cli.reporters import format_problem
    from kernelindex_sdk.errors import Problem
    from kernelindex_sdk.validation import records_of, safe_digest, split_document

    status = 0
    rows: list[dict[str, Any]] = []
    for _path, document in read_documents(paths):
        if isinstance(document, IntakeError):
            sys.stderr.write(format_problem(document.problem) + "\n")
            status = 2
            continue
        for item_at, item in split_document(document.value):
            records = list(records_of(item, item_at))
            if not records:
                records = [(item_at, item)]
            for at, record in records:
                value = safe_digest(record) if isinstance(record, dict) else None
                if value is None:
                    problem = Problem(
                        "not a record: needs apiVersion, kind and spec to have a digest",
                        pointer=at,
                        source=document.source,
                        line=document.line,
                    )
                    sys.stderr.write(format_problem(problem) + "\n")
                    status = max(status, 1)
                    continue
                metadata = record.get("metadata")
                name = metadata.get("name") if isinstance(metadata, dict) else None
                row = {
                    "digest": value,
                    "kind": record.get("kind"),
                    "name": name,
                    "file": document.source,
                    "line": document.line,
                    "pointer": at,
                }
                if format_ == "json":
                    rows.append(row)
                else:
                    sys.stdout.write(f"{value}  {row['kind']}  {name or '-'}\n")
    if format_ == "json":
        json.dump(rows, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    return status


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
    left out. Every member of a bundle gets its own line.
    """
    sys.exit(run_digest(paths, format_))


@click.command("canonicalize")
@click.argument("path")
def canonicalize_command(path: str) -> None:
    """Write the RFC 8785 (JCS) bytes of any JSON document to stdout, exactly.

    No trailing newline: the output is the byte string a digest is taken over.
    """
    from kernelindex_sdk.cli.reporters import format_problem
    from kernelindex_sdk.intake import iter_documents

    try:
        documents = list(iter_documents(path, jsonl=False))
    except IntakeError as error:
        documents = [error]
    for document in documents:
        if isinstance(document, IntakeError):
            sys.stderr.write(format_problem(document.problem) + "\n")
            sys.exit(2)
        sys.stdout.buffer.write(canonicalize(document.value))
    sys.stdout.buffer.flush()
