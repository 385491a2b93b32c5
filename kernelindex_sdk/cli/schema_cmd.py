"""``kernelindex schema list | show KIND [--version V] | export DIR | diff OLD NEW``.

The exported files are the packaged ones, byte for byte, under
``DIR/<group>/<version>/`` (relative ``$ref``s resolve by file location and by ``$id``),
or with ``--bundled`` one self-contained file per kind; see
:mod:`kernelindex_sdk.schema.schemafiles`. ``diff`` is :func:`kernelindex_sdk.schemadiff.diff`
with a reporter from :data:`kernelindex_sdk.cli.report.REPORTERS`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

import click

from kernelindex_sdk.base.escaping import one_line
from kernelindex_sdk.base.fileio import ExistingFiles
from kernelindex_sdk.cli.report import REPORTERS, formats
from kernelindex_sdk.errors import Problem, SchemaDirectoryError, UnknownKind
from kernelindex_sdk.schema.registry import default_registry
from kernelindex_sdk.schema.schemafiles import export_schemas, schema_bytes
from kernelindex_sdk.schemadiff.rules import MODES, POLICIES

#: ``schema diff``'s formats (its reporters are imported only when it runs).
DIFF_FORMATS = formats("schema diff")


@click.group("schema")
def schema_group() -> None:
    """List, show, export or compare the packaged JSON Schemas."""


@schema_group.command("list")
def schema_list() -> None:
    """One line per schema: apiVersion, kind, $id, and whether its version is served
    or deprecated (with the version that replaces it)."""
    registry = default_registry()
    for entry in sorted(registry.entries, key=lambda e: (e.api_version, e.kind)):
        status = registry.status(entry.api_version).describe()
        click.echo(one_line(f"{entry.api_version}  {entry.kind:<22}  {entry.id}  {status}"))


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
@click.option("--force", is_flag=True, help="Replace earlier exported schemas there that differ.")
def schema_export(directory: str, bundled: bool, force: bool) -> None:
    """Write the schemas under DIRECTORY/<group>/<version>/.

    They check the shape of records; digests, semantic rules and references are
    checked only by `kernelindex validate` (see docs/cli.md). A file there with
    other content is replaced only with --force, and only when it is a schema of
    that kind (an earlier export's); otherwise each is named and nothing is written
    (exit 2). Never over the packaged schemas themselves (a checkout's schemas/).
    """
    if not directory:
        click.echo("kernelindex schema export: DIRECTORY must not be empty", err=True)
        sys.exit(2)
    from kernelindex_sdk.base.outputs import OutputOverInput
    from kernelindex_sdk.schema.schemafiles import ForeignFiles

    try:
        written = export_schemas(directory, bundled=bundled, force=force)
    except OutputOverInput as error:
        click.echo(one_line(f"kernelindex schema export: {error}"), err=True)
        sys.exit(2)
    except ForeignFiles as error:
        _refuse(
            error.paths,
            "exists and is no kernelindex schema of that kind: not replaced, even"
            " with --force (schema export did not write it)",
            "there were not written by schema export; nothing written (move them away first)",
        )
    except ExistingFiles as error:
        # As `import` and `export liger` say it: each file, then what was (not) done.
        _refuse(
            error.paths,
            "exists with other content: not replaced (use --force to replace it)",
            "of the same name hold other content; nothing written (use --force to replace them)",
        )
    except OSError as error:
        where = error.filename or directory
        message = f"kernelindex schema export: {where}: {error.strerror or error}"
        click.echo(one_line(message), err=True)
        sys.exit(2)
    form = "bundled schemas" if bundled else "schemas"
    click.echo(one_line(f"exported {len(written)} {form} to {directory}"), err=True)


@schema_group.command("diff")
@click.argument("old")
@click.argument("new")
@click.option(
    "--mode",
    type=click.Choice(MODES),
    required=True,
    help="backward: every record OLD accepts, NEW accepts (new readers read old records);"
    " forward: the reverse; full: both.",
)
@click.option(
    "--policy",
    type=click.Choice(POLICIES),
    default="strict",
    show_default=True,
    help="lenient: an optional property may be added to or removed from a closed object.",
)
@click.option(
    "--format",
    "format_",
    type=click.Choice(DIFF_FORMATS),
    default="text",
    show_default=True,
    help="text lines, one JSON object, GitHub Actions annotations, or JUnit XML.",
)
@click.option(
    "--format-assertion",
    is_flag=True,
    help="Read `format` as an assertion (a value of another format is refused, where"
    " python-jsonschema has a checker for it), as `kernelindex validate` does. Without it,"
    " `format` is the annotation every dialect makes it by default (Drafts 4-7 leave"
    " asserting it optional, 2019-09 and 2020-12 only with the format-assertion"
    " vocabulary, and python-jsonschema asserts it only when asked): adding, removing"
    " or changing one is no change. The report says which was assumed.",
)
def schema_diff(
    old: str, new: str, mode: str, policy: str, format_: str, format_assertion: bool
) -> None:
    """Say whether NEW breaks records OLD accepts (or the reverse), with a witness.

    OLD and NEW: a schema file, a folder of schema files (as `schema export` writes
    them), or an apiVersion of the installed registry. Every violation has a rule ID,
    the direction it breaks, pointers into OLD and NEW, and a record that the reference
    validator accepts under one and rejects under the other. Nothing is fetched: a $ref
    into a document not given is an external schema, the same URI on both sides
    assumed unchanged (listed: "assumed unchanged: URI"); a claim that needs its content
    is undecided. Exit status: 0 compatible, 1 a violation, 2 usage error, a file or
    folder that cannot be read, or a $ref to nothing in a document given, 3 cannot
    decide (a claim that needs a pattern Python cannot read, or a check that ran out
    of time or nested too deeply, is undecided; the rest is still judged). OLD and NEW
    that name no kind, or a folder's schema file that names none and that no kind
    reaches, are exit 2: nothing is passed unread.
    """
    from kernelindex_sdk.schemadiff import SchemaInputError, diff

    try:
        report = diff(old, new, mode=mode, policy=policy, format_assertion=format_assertion)
    except (SchemaInputError, SchemaDirectoryError) as error:
        click.echo(one_line(f"kernelindex schema diff: {error}"), err=True)
        sys.exit(2)
    except RecursionError:  # each step catches its own; this is the last word
        message = "kernelindex schema diff: a schema is nested too deeply to compare"
        click.echo(f"{message} (deeper than Python's recursion limit lets it go)", err=True)
        sys.exit(3)
    REPORTERS["schema diff", format_]().report(report)
    sys.exit(report.exit_status())


def _refuse(paths: Sequence[Path], each: str, summary: str) -> NoReturn:
    """``schema export`` writing nothing: one problem a file in the way (``each``), then
    the count and ``summary`` in one line; exit 2."""
    for path in paths:
        click.echo(str(Problem(each, code="exists", source=str(path))), err=True)
    message = f"kernelindex schema export: error: {len(paths)} file(s) {summary}"
    click.echo(one_line(message), err=True)
    sys.exit(2)
