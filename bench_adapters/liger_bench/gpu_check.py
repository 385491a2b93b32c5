"""``scripts/gpu-check``: the four seed kernels at the seed shapes, beside their references.

Runs each seed's workload (GeGLU MLP backward at T=4096, Llama 4 RoPE backward at
T=16384, ReLU² backward at N=512, and last the chunked distillation cosine loss full at
BT=1024, whose first call compiles) with Liger and the reference Liger compares itself
with, writes one bundle per run, reads every file back through the SDK's strict intake
and validates it, and prints a table: kernel, pass, provider, status, median, p20–p80,
speed-up, first call.

Made to spend a short GPU window well, where it may be stopped at any moment:

* everything is checked before the GPU is used (CUDA, every module a provider needs);
* the device line goes out first, then one line per run as it ends, flushed; each
  run's bundle is written (atomically) as it ends, and ``table.txt`` beside the bundles
  is rewritten after every run — what was measured before a stop is all on disk;
* the kernel that compiles on its first call runs last, and that call's wall time
  (compiling included) is recorded apart from the timing (``first_call_ms``);
* at the end, ``seed-comparison.md`` puts the runs beside the published seeds by
  kernel, pass and shape (:mod:`~bench_adapters.liger_bench.seed_table`).

Exit status: 0 every run passed and every file is valid; 1 a run did not pass or a
file is invalid; 2 no CUDA device, a dependency missing, or a usage error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from bench_adapters.liger_bench.bench import (
    HEADER,
    BenchSettings,
    UsageParser,
    Written,
    cuda_tools,
    device_warnings,
    format_table,
    missing_dependencies,
    run_bench,
    summary_rows,
)
from bench_adapters.liger_bench.calls import CALL_STYLES, UPSTREAM
from bench_adapters.liger_bench.catalog import load_bench_catalog
from bench_adapters.liger_bench.plan import PlannedItem, seed_request
from bench_adapters.liger_bench.probes import DeviceInfo, NoDevice, TimerSettings
from bench_adapters.liger_bench.runner import Outcome, Tools
from bench_adapters.recording.bundles import InvalidBundle
from kernelindex_sdk.base.escaping import one_line
from kernelindex_sdk.base.fileio import atomic_write_bytes
from kernelindex_sdk.base.wording import counted

#: The columns of ``bench liger``'s table this one keeps (metric and workload go: one of
#: each per kernel here): kernel, pass, provider, status, median, p20–p80, speed-up,
#: first call.
TABLE_COLUMNS = (0, 1, 4, 5, 6, 7, 8, 9)
TABLE_HEADER = [HEADER[i] for i in TABLE_COLUMNS]
#: Files written beside the bundles (``validate`` reads only ``.json``/``.jsonl``).
TABLE_FILE = "table.txt"
COMPARISON_FILE = "seed-comparison.md"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = UsageParser(
        prog="gpu-check",
        description="Run the four seed kernels at the seed shapes beside their references "
        "on this machine's CUDA GPU; write, validate and tabulate the records.",
    )
    parser.add_argument(
        "--out",
        default="docs/examples/bench-liger",
        help="directory for the bundles (default: %(default)s)",
    )
    parser.add_argument(
        "--call-style",
        choices=CALL_STYLES,
        default=UPSTREAM,
        help="whose call is timed: Liger's own script's (default) or kernelindex's",
    )
    parser.add_argument(
        "--warmup-ms", type=float, default=None, help="do_bench warmup (default: the style's)"
    )
    parser.add_argument(
        "--rep-ms", type=float, default=None, help="do_bench rep (default: the style's)"
    )
    parser.add_argument(
        "--memory", action="store_true", help="also measure peak memory of each run"
    )
    parser.add_argument(
        "--seeds",
        default="examples/liger",
        help=(
            "the published seeds' runs (imported, or the seeds themselves) to tabulate "
            "the runs beside (default: %(default)s)"
        ),
    )
    return parser.parse_args(argv)


def bench_settings(args: argparse.Namespace) -> BenchSettings:
    """The sweep's settings from the options: the style's warm-up and rep unless given."""
    warmup = 25.0 if args.warmup_ms is None else args.warmup_ms
    rep = 100.0 if args.rep_ms is None else args.rep_ms
    return BenchSettings(
        timer=TimerSettings(warmup_ms=warmup, rep_ms=rep),
        call_style=args.call_style,
        fixed_timing=args.warmup_ms is not None or args.rep_ms is not None,
    )


def plan_seed_items(memory: bool) -> list[PlannedItem]:
    """The seeds' workloads, speed (and memory when asked), Liger and its reference."""
    import attrs

    items = seed_request(load_bench_catalog())
    if memory:
        items = [x for item in items for x in (item, attrs.evolve(item, metric="memory"))]
    return items


def device_line(info: DeviceInfo) -> str:
    """``NVIDIA H200 (sm_90, 150754820096 bytes); cuda 13.0, driver …``."""
    software = ", ".join(f"{k} {v}" for k, v in sorted(info.software.items()))
    return one_line(
        f"{info.name} ({info.architecture}, {info.memory_bytes or 0} bytes); {software}"
    )


class Reporter:
    """Says each run as it ends: a line on stdout (flushed) and the table file rewritten."""

    def __init__(self, out_dir: Path, total: int, stdout: TextIO) -> None:
        self.out_dir = out_dir
        self.total = total
        self.stdout = stdout
        self.written: list[Written] = []

    def table(self) -> str:
        rows = [[row[i] for i in TABLE_COLUMNS] for row in summary_rows(self.written)]
        return format_table(rows, TABLE_HEADER) + "\n"

    def __call__(self, entry: Written) -> None:
        self.written.append(entry)
        row = summary_rows(self.written)[-1]
        kernel, pass_, provider, status, median, spread, speedup, first = (
            row[i] for i in TABLE_COLUMNS
        )
        line = (
            f"[{len(self.written)}/{self.total}] {kernel} {pass_} {provider}: {status}"
            + (f", median {median} ({spread})" if median != "-" else "")
            + (f", {speedup}" if speedup != "-" else "")
            + (f", first call {first}" if first != "-" else "")
        )
        self.stdout.write(one_line(line) + "\n")
        self.stdout.flush()
        atomic_write_bytes(self.out_dir / TABLE_FILE, self.table().encode("utf-8"))


def check(
    argv: Sequence[str] | None = None,
    *,
    tools: Tools | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """The whole check; ``tools`` stands in for the CUDA tools in tests."""
    from bench_adapters.liger.writer import OutputError

    stdout, stderr = out or sys.stdout, err or sys.stderr

    def fail(message: str) -> int:
        stderr.write(f"gpu-check: {one_line(message)}\n")
        stderr.flush()
        return 2

    args = parse_args(argv)
    settings = bench_settings(args)
    if settings.timer.warmup_ms < 0 or settings.timer.rep_ms <= 0:
        return fail("--warmup-ms must be >= 0 and --rep-ms > 0")
    out_dir = Path(args.out)
    if out_dir.exists() and not out_dir.is_dir():
        return fail(f"--out {args.out}: exists and is not a directory")
    try:
        tools = tools or cuda_tools(settings)
    except NoDevice as error:
        return fail(str(error))
    catalog = load_bench_catalog()
    items = plan_seed_items(args.memory)
    missing = missing_dependencies(items, tools.backend)
    if missing is not None:
        return fail(missing)
    try:
        info = tools.device.describe()
    except NoDevice as error:
        return fail(str(error))
    stdout.write(device_line(info) + "\n")
    for warning in device_warnings(info):
        stderr.write(f"gpu-check: warning: {one_line(warning)}\n")
    stdout.flush()

    reporter = Reporter(out_dir, sum(len(item.providers) for item in items), stdout)
    refused: list[str] = []

    def refuse(outcome: Outcome, error: InvalidBundle) -> None:
        # Never written: one line per problem, as the read-back below reports a file's.
        label = f"{outcome.item.workload.label} {outcome.provider}"
        refused.append(label)
        for problem in error.problems:
            stderr.write(
                one_line(f"gpu-check: invalid record, not written: {label}: {problem.message}")
                + "\n"
            )
        stderr.flush()

    try:
        written = run_bench(
            items,
            catalog,
            out_dir,
            tools,
            settings,
            stream=stderr,
            on_written=reporter,
            info=info,
            on_refused=refuse,
        )
    except OutputError as error:
        return fail(str(error))
    except InvalidBundle as error:
        return fail(f"a record would not validate, so it was not written (a bug): {error}")
    except OSError as error:
        return fail(f"cannot write under {args.out}: {error}")

    invalid = _read_back(written, stderr)
    return _summary(written, refused, invalid, reporter, args.seeds, out_dir, stdout)


def _read_back(written: Sequence[Written], stderr: TextIO) -> set[str]:
    """The files written that do not validate, each problem reported on ``stderr``:
    read back exactly as ``kernelindex validate`` reads (strict intake, schemas, rules)."""
    from kernelindex_sdk.validating.pipeline import Pipeline

    invalid: set[str] = set()
    for checked in Pipeline([str(entry.path) for entry in written]) if written else ():
        for problem in checked.problems:
            invalid.add(checked.source)
            stderr.write(f"gpu-check: invalid record: {problem}\n")
    return invalid


def _summary(
    written: Sequence[Written],
    refused: list[str],
    invalid: set[str],
    reporter: Reporter,
    seeds: str,
    out_dir: Path,
    stdout: TextIO,
) -> int:
    """The table, the runs that did not pass, the comparison with the seeds and the
    closing count; the exit status: 1 when anything was refused, invalid or failed."""
    stdout.write("\n" + reporter.table() + "\n")
    for entry in written:
        if entry.outcome.status != "passed":
            stdout.write(
                one_line(
                    f"{entry.outcome.status}: {entry.outcome.item.workload.label} "
                    f"{entry.outcome.provider}: {entry.outcome.reason}"
                )
                + "\n"
            )
    stdout.write(comparison(seeds, out_dir) + "\n")
    not_passed = sum(1 for entry in written if entry.outcome.status != "passed")
    not_written = f", {len(refused)} not written (invalid)" if refused else ""
    stdout.write(
        one_line(
            f"{counted(len(written), 'run')} written under {out_dir}{not_written}, "
            f"{counted(len(written) - len(invalid), 'file')} valid;"
            f" {counted(not_passed, 'run')} did not pass"
        )
        + "\n"
    )
    stdout.flush()
    return 1 if invalid or refused or not_passed else 0


def comparison(seeds: str, out_dir: Path) -> str:
    """The runs beside the seeds (markdown), also written to ``seed-comparison.md``.

    Invalid records are left out; they were reported once already, as this run's files
    were read back (``scripts/seed-table`` reports them in full).
    """
    from bench_adapters.liger_bench.seed_table import collect, markdown

    if not Path(seeds).is_dir():
        return one_line(f"(no seed records at {seeds}: the comparison with the seeds is left out)")
    loaded = collect([seeds, str(out_dir)])
    table = markdown(loaded.rows)
    atomic_write_bytes(out_dir / COMPARISON_FILE, table.encode("utf-8"))
    left_out = loaded.invalid + loaded.unreadable
    note = f"\n({left_out} invalid or unreadable items left out)\n" if left_out else ""
    return (
        f"Beside the published seeds (by kernel, pass and shape; {COMPARISON_FILE}):\n\n"
        f"{table}{note}"
    )


def main() -> None:
    """Console entry: ``python -m bench_adapters.liger_bench.gpu_check``."""
    try:
        sys.exit(check())
    except KeyboardInterrupt:
        sys.stderr.write("gpu-check: interrupted\n")
        sys.exit(130)


if __name__ == "__main__":
    main()
