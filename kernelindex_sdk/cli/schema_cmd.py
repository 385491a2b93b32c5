"""``kernelindex schema list | show KIND [--version V] | export DIR``.

The exported files are the packaged ones, byte for byte, under
``DIR/<group>/<version>/``: relative ``$ref``s resolve by file location (for
check-jsonschema) and by ``$id`` (for ajv ``-r``), so other tools check exactly what
kernelindex checks.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from kernelindex_sdk.errors import UnknownKind
from kernelindex_sdk.fileio import atomic_write_bytes
from kernelindex_sdk.printable import one_line
from kernelindex_sdk.registry import default_registry


@click.group("schema")
def schema_group() -> None:
    """List, show or export the packaged JSON Schemas."""


@schema_group.command("list")
def schema_list() -> None:
    """One line per schema: apiVersion, kind, $id."""
    registry = default_registry()
    for entry in sorted(registry.entries, key=lambda e: (e.api_version, e.kind)):
        click.echo(f"{entry.api_version}  {entry.kind:<22}  {entry.id}")


@schema_group.command("show")
@click.argument("kind")
@click.option("--version", "version", default=None, help="apiVersion or its version part.")
def schema_show(kind: str, version: str | None) -> None:
    """Print the schema of KIND (e.g. BenchmarkRun, Bundle), newest version by default."""
    try:
        entry = default_registry().find(kind, version)
    except UnknownKind as error:
        click.echo(f"kernelindex schema show: {error}", err=True)
        sys.exit(2)
    sys.stdout.buffer.write(entry.path.read_bytes())


@schema_group.command("export")
@click.argument("directory", type=click.Path(file_okay=False))
def schema_export(directory: str) -> None:
    """Write every schema file under DIRECTORY/<group>/<version>/."""
    registry = default_registry()
    target = Path(directory)
    written = 0
    for entry in (*registry.entries, *registry.support):
        group, version = entry.api_version.split("/")
        out = target / group / version / entry.path.name
        try:
            atomic_write_bytes(out, entry.path.read_bytes())
        except OSError as error:
            message = f"kernelindex schema export: {out}: {error.strerror or error}"
            click.echo(one_line(message), err=True)
            sys.exit(2)
        written += 1
    click.echo(one_line(f"exported {written} schemas to {target}"), err=True)
