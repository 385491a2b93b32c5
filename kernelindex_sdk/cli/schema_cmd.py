"""``kernelindex schema list | show KIND [--version V] | export DIR``.

The exported files are the packaged ones, byte for byte, under
``DIR/<group>/<version>/`` (relative ``$ref``s resolve by file location and by ``$id``),
or with ``--bundled`` one self-contained file per kind; see
:mod:`kernelindex_sdk.schemafiles`.
"""

from __future__ import annotations

import sys

import click

from kernelindex_sdk.errors import UnknownKind
from kernelindex_sdk.printable import one_line
from kernelindex_sdk.registry import default_registry
from kernelindex_sdk.schemafiles import export_schemas, schema_bytes


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
@click.option(
    "--bundled",
    is_flag=True,
    help="Print one self-contained schema (every $ref inlined), usable by any validator.",
)
def schema_show(kind: str, version: str | None, bundled: bool) -> None:
    """Print the schema of KIND (e.g. BenchmarkRun, Bundle), newest version by default."""
    try:
        data = schema_bytes(kind, version, bundled=bundled)
    except UnknownKind as error:
        click.echo(one_line(f"kernelindex schema show: {error}"), err=True)
        sys.exit(2)
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


@schema_group.command("export")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option(
    "--bundled",
    is_flag=True,
    help="One self-contained file per kind (for plain jsonschema, check-jsonschema"
    " without --base-uri, editors) instead of the packaged files.",
)
def schema_export(directory: str, bundled: bool) -> None:
    """Write the schemas under DIRECTORY/<group>/<version>/.

    They check the shape of records; digests, semantic rules and references are
    checked only by `kernelindex validate` (see docs/cli.md).
    """
    if not directory:
        click.echo("kernelindex schema export: DIRECTORY must not be empty", err=True)
        sys.exit(2)
    try:
        written = export_schemas(directory, bundled=bundled)
    except OSError as error:
        where = error.filename or directory
        message = f"kernelindex schema export: {where}: {error.strerror or error}"
        click.echo(one_line(message), err=True)
        sys.exit(2)
    form = "bundled schemas" if bundled else "schemas"
    click.echo(one_line(f"exported {len(written)} {form} to {directory}"), err=True)
