"""``kernelindex env``: print this machine's ExecutionEnvironment record.

Registered through the ``kernelindex.commands`` entry point. It only parses options,
calls the probe (:mod:`bench_adapters.recording.environment`) and prints the record;
the record is checked by ``validate``'s own checks before it is printed, so what it
prints is always a record ``kernelindex validate`` accepts.

Exit status: 0 printed (also with no GPU, no NVML, no torch: the record says so);
2 a usage error (an unknown ``--set`` key names the known ones; a ``--set`` that is
not UTF-8 is one line showing its bytes).
"""

from __future__ import annotations

import sys

import click

from kernelindex_sdk.base.checked_options import utf8_text
from kernelindex_sdk.base.escaping import one_line


@click.command("env", context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--set",
    "settings",
    multiple=True,
    metavar="KEY=VALUE",
    callback=utf8_text,
    help="Declare a field no probe can read (provenance caller), e.g. --set torch=2.5.1. "
    "KEY is a hardware field (memoryBytes, hostCpu, ...) or software component (torch, "
    "cuda, driver, ...); an unknown KEY lists them.",
)
@click.option(
    "--device",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="The GPU to describe, by index.",
)
def env_command(settings: tuple[str, ...], device: int) -> None:
    """Print this machine's ExecutionEnvironment record (GPU, driver, CUDA, torch, triton,
    Python, OS, CPU), each field with where it came from; unknown fields are said so."""
    from bench_adapters.common.provenance import DeclarationError
    from bench_adapters.recording.bundles import record_problems
    from bench_adapters.recording.environment import (
        environment_record,
        ignored_declarations,
        parse_settings,
        probe,
    )
    from kernelindex_sdk.base.prettyjson import pretty

    try:
        declared = parse_settings(settings)
    except DeclarationError as error:
        raise click.UsageError(one_line(str(error))) from None
    found = probe(device)
    for note in [*found.notes, *ignored_declarations(found, declared)]:
        click.echo(f"kernelindex env: warning: {one_line(note)}", err=True)
    record = environment_record(found, declared)
    problems = record_problems(record)
    if problems:
        first = problems[0]
        raise click.UsageError(
            one_line(f"the record would not validate: {first.pointer}: {first.message}")
        )
    sys.stdout.write(pretty(record) + "\n")
    sys.stdout.flush()
