"""``kernelindex bench liger``: run Liger-Kernel's kernels on CUDA and record the results.

Registered through the ``kernelindex.commands`` entry point as ``bench``. This module
imports no torch, triton or liger-kernel: ``kernelindex --help``, ``bench liger
--help`` and ``--dry-run`` work with the core install alone; the real tools are made
only when a sweep starts, and without CUDA (or without the ``liger`` extra) the
command says so and exits 2.

Exit status: 0 every run passed or was skipped; 1 some run failed (correctness check
or error) or ran out of memory — its record is written all the same; 2 usage error,
no CUDA device, or a dependency missing (a provider asked for, or the reference a
provider is checked against, cannot be imported: said before anything runs).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import attrs
import click

from kernelindex_sdk.base.checked_options import utf8_text
from kernelindex_sdk.base.escaping import one_line
from kernelindex_sdk.base.wording import counted

if TYPE_CHECKING:  # the runner imports the catalogs and the Liger importer: not for --help
    from bench_adapters.liger_bench.bench import BenchSettings, Written
    from bench_adapters.liger_bench.catalog import BenchCatalog
    from bench_adapters.liger_bench.plan import PlannedItem
    from bench_adapters.liger_bench.runner import Tools


@attrs.frozen
class BenchLigerOptions:
    """Everything ``bench liger`` was asked to do, as plain data."""

    kernels: tuple[str, ...]
    passes: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ("speed",)
    x_values: tuple[int, ...] = ()
    providers: tuple[str, ...] = ()
    overrides: tuple[str, ...] = ()
    out: str | None = None
    dry_run: bool = False
    #: do_bench's warm-up and rep; None: the call style's (Liger's script's, or 25/100).
    warmup_ms: float | None = None
    rep_ms: float | None = None
    memory_repetitions: int = 10
    seed: int = 0
    call_style: str = "upstream"
    gpu_only: bool = True


ToolsFactory = Callable[..., "Tools"]


def split_list(values: Sequence[str]) -> tuple[str, ...]:
    """``("liger,torch", "huggingface")`` -> ``("liger", "torch", "huggingface")``."""
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def parse_x(values: Sequence[str]) -> tuple[int, ...]:
    """``--x 1024,4096`` -> ``(1024, 4096)``; anything but positive integers is a usage error."""
    result = []
    for part in split_list(values):
        try:
            number = int(part)
        except ValueError:
            raise click.BadParameter(f"{part!r} is not an integer", param_hint="--x") from None
        if number < 1:
            raise click.BadParameter(f"{part!r} is not positive", param_hint="--x")
        result.append(number)
    return tuple(result)


def run_bench_liger(
    options: BenchLigerOptions,
    *,
    tools_factory: ToolsFactory | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Plan, then list (``--dry-run``) or run and write; return the exit status."""
    from bench_adapters.liger.writer import OutputError
    from bench_adapters.liger_bench.probes import NoDevice
    from bench_adapters.recording.bundles import InvalidBundle

    stdout = out or sys.stdout
    stderr = err or sys.stderr

    def fail(message: str) -> int:
        stderr.write(f"kernelindex bench liger: {message}\n")
        return 2

    planned = _planned(options, stderr)
    if isinstance(planned, str):
        return fail(planned)
    catalog, items = planned
    if options.dry_run:
        _print_plan(items, stdout)
        return 0
    if not options.out:
        return fail("--out DIR is required (or --dry-run to only list the plan)")
    out_dir = Path(options.out)
    if out_dir.exists() and not out_dir.is_dir():
        return fail(one_line(f"--out {options.out}: exists and is not a directory"))
    settings = _settings(options)
    if settings is None:
        return fail("--warmup-ms must be >= 0, --rep-ms > 0 and --memory-repetitions >= 1")
    from bench_adapters.liger_bench.bench import (
        cuda_tools,
        device_warnings,
        missing_dependencies,
        run_bench,
    )

    try:
        tools = (tools_factory or cuda_tools)(settings)
    except NoDevice as error:
        return fail(f"{one_line(str(error))} (--dry-run lists the plan without one)")
    missing = missing_dependencies(items, tools.backend)
    if missing is not None:
        return fail(one_line(f"{missing}; or leave a provider out with --provider"))
    try:
        info = tools.device.describe()
    except NoDevice as error:
        return fail(one_line(str(error)))
    for warning in device_warnings(info):
        stderr.write(f"kernelindex bench liger: warning: {one_line(warning)}\n")
    try:
        written = run_bench(items, catalog, out_dir, tools, settings, stream=stderr, info=info)
    except NoDevice as error:
        return fail(one_line(str(error)))
    except OutputError as error:
        return fail(one_line(str(error)))
    except InvalidBundle as error:
        return fail(
            one_line(f"a record would not validate, so it was not written (a bug): {error}")
        )
    except OSError as error:
        return fail(one_line(f"cannot write under {options.out}: {error}"))
    return _report_written(written, out_dir, stdout)


def _settings(options: BenchLigerOptions) -> BenchSettings | None:
    """How to measure, from the options (the call style's warm-up and rep unless
    given); None when a number is out of range."""
    from bench_adapters.liger_bench.bench import BenchSettings
    from bench_adapters.liger_bench.probes import TimerSettings

    warmup = 25.0 if options.warmup_ms is None else options.warmup_ms
    rep = 100.0 if options.rep_ms is None else options.rep_ms
    if warmup < 0 or rep <= 0 or options.memory_repetitions < 1:
        return None
    return BenchSettings(
        timer=TimerSettings(warmup_ms=warmup, rep_ms=rep),
        memory_repetitions=options.memory_repetitions,
        seed=options.seed,
        call_style=options.call_style,
        fixed_timing=options.warmup_ms is not None or options.rep_ms is not None,
        gpu_only=options.gpu_only,
    )


def _planned(
    options: BenchLigerOptions, stderr: TextIO
) -> tuple[BenchCatalog, list[PlannedItem]] | str:
    """The packaged catalog and the items the options ask for, each warning of the plan
    written once on ``stderr``; or the one line that says why there is no plan."""
    from bench_adapters.liger.catalog import CatalogError
    from bench_adapters.liger_bench.catalog import BenchCatalogError, load_bench_catalog
    from bench_adapters.liger_bench.plan import PlanError, Request, parse_overrides, plan

    warnings: list[str] = []
    try:
        catalog = load_bench_catalog()
        request = Request(
            kernels=options.kernels,
            passes=options.passes,
            metrics=options.metrics,
            x_values=options.x_values,
            providers=options.providers,
            overrides=parse_overrides(options.overrides),
        )
        items = plan(request, catalog, lambda key, message: warnings.append(message))
    except PlanError as error:
        return one_line(str(error))
    except (BenchCatalogError, CatalogError) as error:
        return one_line(f"the packaged catalog is broken (a bug): {error}")
    for message in dict.fromkeys(warnings):
        stderr.write(f"kernelindex bench liger: warning: {one_line(message)}\n")
    return catalog, items


def _report_written(written: Sequence[Written], out_dir: Path, stdout: TextIO) -> int:
    """The table of the runs written and their count by outcome; the exit status: 1
    when a run failed or ran out of memory."""
    from bench_adapters.liger_bench.bench import format_table, summary_rows

    stdout.write(format_table(summary_rows(written)) + "\n")
    counts: dict[str, int] = {}
    for entry in written:
        counts[entry.outcome.status] = counts.get(entry.outcome.status, 0) + 1
    tally = ", ".join(
        f"{counts[s]} {s}" for s in ("passed", "failed", "oom", "skipped") if s in counts
    )
    where = one_line(str(out_dir))
    stdout.write(f"{counted(len(written), 'run')} written under {where}: {tally or 'none'}\n")
    stdout.flush()
    return 1 if counts.get("failed") or counts.get("oom") else 0


def _print_plan(items: Sequence[object], stdout: TextIO) -> None:
    from bench_adapters.liger_bench.bench import format_table
    from bench_adapters.liger_bench.plan import PlannedItem

    rows = []
    runs = 0
    for item in items:
        assert isinstance(item, PlannedItem)
        workload = item.workload
        kernel = workload.kernel
        gated = [p for p in item.providers if kernel.gated(p)]
        rows.append(
            [
                kernel.name,
                workload.pass_,
                item.metric,
                f"{kernel.sweep.x_name}={workload.x_value}",
                workload.shape.slug,
                ",".join(item.providers),
                "/".join(kernel.references) if gated else "-",
            ]
        )
        runs += len(item.providers)
    header = ["kernel", "pass", "metric", "x", "workload", "providers", "checked against"]
    stdout.write(format_table(rows, header) + "\n")
    pairs = counted(len(items), "workload-metric pair")
    stdout.write(f"{counted(runs, 'run')} planned ({pairs}); nothing was run\n")


@click.group("bench", context_settings={"help_option_names": ["-h", "--help"]})
def bench_group() -> None:
    """Run kernels on this machine's GPU and record the results as kernelindex records."""


@bench_group.command("liger")
@click.option(
    "--kernel",
    "kernels",
    multiple=True,
    required=True,
    help="Kernel to run (repeatable or comma-separated): geglu, llama4_rope, "
    "distill_cosine_loss, relu_squared.",
)
@click.option(
    "--pass",
    "passes",
    multiple=True,
    help="forward, backward or full (repeatable or comma-separated). Default: all three.",
)
@click.option(
    "--metric",
    "metrics",
    multiple=True,
    help="speed (do_bench latency, default) or memory (peak bytes); repeatable.",
)
@click.option(
    "--x",
    "x_values",
    multiple=True,
    help="x values to sweep (comma-separated or repeatable). Default: Liger's own sweep.",
)
@click.option(
    "--provider",
    "providers",
    multiple=True,
    help="Providers in order, e.g. liger,torch. Default: liger and the reference Liger "
    "compares itself with.",
)
@click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="KEY=VALUE",
    callback=utf8_text,
    help="Override a key of Liger's config, for the kernels whose config has it (strict "
    "JSON value, or text), e.g. --set bsz=4.",
)
@click.option("--out", type=click.Path(file_okay=False), help="Directory to write records to.")
@click.option(
    "--dry-run", is_flag=True, help="List the planned workloads; run nothing (no GPU needed)."
)
@click.option(
    "--call-style",
    type=click.Choice(["upstream", "kernelindex"]),
    default="upstream",
    show_default=True,
    help="Whose call is timed: Liger's own benchmark script's (its call, the gradients it "
    "resets, its warmup and rep), or kernelindex's (torch.autograd.backward, every gradient "
    "reset, warmup 25 ms and rep 100 ms).",
)
@click.option(
    "--warmup-ms", type=float, default=None, help="do_bench warmup (default: the call style's)."
)
@click.option(
    "--rep-ms", type=float, default=None, help="do_bench rep (default: the call style's)."
)
@click.option(
    "--gpu-only/--no-gpu-only",
    default=True,
    show_default=True,
    help="Also time the GPU alone (a CUDA graph replay) beside each latency; a run whose "
    "median is over twice that is flagged host-bound.",
)
@click.option(
    "--memory-repetitions",
    type=int,
    default=10,
    show_default=True,
    help="Calls whose peak memory is read, for --metric memory.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of every input.")
def liger_command(
    kernels: tuple[str, ...],
    passes: tuple[str, ...],
    metrics: tuple[str, ...],
    x_values: tuple[str, ...],
    providers: tuple[str, ...],
    overrides: tuple[str, ...],
    out: str | None,
    dry_run: bool,
    call_style: str,
    warmup_ms: float | None,
    rep_ms: float | None,
    gpu_only: bool,
    memory_repetitions: int,
    seed: int,
) -> None:
    """Run Liger-Kernel kernels beside their references; write one bundle per run.

    Each run is first checked against the reference (outputs, and gradients for a
    timed backward); a mismatch is recorded as failed, never timed. Out of memory is
    recorded as oom and the sweep goes on. Exit status: 0 no run failed, 1 some run
    failed or ran out of memory, 2 usage error, no CUDA device or a missing dependency.
    """
    options = BenchLigerOptions(
        kernels=split_list(kernels),
        passes=split_list(passes),
        metrics=split_list(metrics) or ("speed",),
        x_values=parse_x(x_values),
        providers=split_list(providers),
        overrides=overrides,
        out=out,
        dry_run=dry_run,
        warmup_ms=warmup_ms,
        rep_ms=rep_ms,
        memory_repetitions=memory_repetitions,
        seed=seed,
        call_style=call_style,
        gpu_only=gpu_only,
    )
    sys.exit(run_bench_liger(options))
