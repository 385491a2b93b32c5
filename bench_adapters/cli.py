"""``kernelindex import ...``: adapter commands, plugged into the SDK's command line.

The SDK's ``kernelindex`` finds :data:`import_group` through the ``kernelindex.commands``
entry point (``import = "bench_adapters.cli:import_group"``), so the SDK never imports
an adapter by name. Each importer's module is loaded only when its command runs.

Exit status: 0 every row imported; 1 some rows were bad (reported, skipped, the rest
written — or, with ``--strict``, nothing written); 2 unreadable input, unwritable
output, or a usage error. Warnings, bad rows and the summary go to stderr, one line
each; no traceback reaches the user for bad input.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

import click

EXIT_OK = 0
EXIT_ROWS_SKIPPED = 1
EXIT_UNREADABLE = 2


@click.group(name="import")
def import_group() -> None:
    """Import other tools' benchmark results as kernelindex records."""


@import_group.command("liger")
@click.argument("csv_paths", metavar="CSV...", nargs=-1, required=True)
@click.option(
    "--out",
    "out_dir",
    required=True,
    metavar="DIR",
    help="Directory to write into (created if missing).",
)
@click.option(
    "--layout",
    type=click.Choice(["bundles", "jsonl"]),
    default="bundles",
    show_default=True,
    help="bundles: one bundle file per run; jsonl: one stream DIR/liger.jsonl.",
)
@click.option("--strict", is_flag=True, help="Stop at the first bad row and write nothing.")
@click.option(
    "--quality-flags",
    is_flag=True,
    help="Also mark runs whose p20 = median = p80 with spec.qualityFlags "
    "[collapsed_quantiles]. Off by default: the published seeds carry no such flag.",
)
def liger_command(
    csv_paths: tuple[str, ...], out_dir: str, layout: str, strict: bool, quality_flags: bool
) -> None:
    """Import Liger-Kernel benchmark CSVs (all_benchmark_data*.csv).

    Every row becomes a BenchmarkRun plus the protocol, workload, environment and
    implementation it references; each distinct record is written once. Importing
    again into the same directory changes nothing.
    """
    sys.exit(
        run_liger_import(
            csv_paths, out_dir, layout=layout, strict=strict, quality_flags=quality_flags
        )
    )


def run_liger_import(
    csv_paths: tuple[str, ...] | list[str],
    out_dir: str,
    *,
    layout: str = "bundles",
    strict: bool = False,
    quality_flags: bool = False,
    err: TextIO | None = None,
) -> int:
    """The ``import liger`` command without click: returns the exit status."""
    from bench_adapters.liger import CatalogError, OutputError, import_csv
    from kernelindex_sdk.errors import IntakeError, Problem
    from kernelindex_sdk.printable import one_line

    stream = err if err is not None else sys.stderr
    prog = "kernelindex import liger"
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        stream.write(
            one_line(f"{prog}: error: --out {out_dir}: exists and is not a directory") + "\n"
        )
        return EXIT_UNREADABLE
    if layout not in ("bundles", "jsonl"):
        stream.write(f"{prog}: error: --layout {layout}: expected bundles or jsonl\n")
        return EXIT_UNREADABLE

    def on_warning(message: str) -> None:
        stream.write(one_line(f"warning: {message}") + "\n")

    def on_problem(problem: Problem) -> None:
        stream.write(f"{problem}\n")

    try:
        summary = import_csv(
            list(csv_paths),
            out,
            layout="jsonl" if layout == "jsonl" else "bundles",
            strict=strict,
            quality_flags=quality_flags,
            on_warning=on_warning,
            on_problem=on_problem,
            progress_stream=stream,
        )
    except IntakeError as error:
        stream.write(f"{error.problem}\n")
        return EXIT_UNREADABLE
    except OutputError as error:
        stream.write(one_line(f"{prog}: error: {error}") + "\n")
        return EXIT_UNREADABLE
    except CatalogError as error:
        stream.write(f"{prog}: internal error: {error}\n")
        return EXIT_UNREADABLE
    if summary.stopped:
        stream.write(f"{prog}: stopped at the first bad row (--strict): nothing written\n")
    for line in summary.lines():
        stream.write(f"{line}\n")
    return EXIT_OK if summary.clean else EXIT_ROWS_SKIPPED
