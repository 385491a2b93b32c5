"""``scripts/gpu-check``: the four seed kernels at the seed shapes, beside their references.

Runs each seed's workload (GeGLU MLP backward at T=4096, Llama 4 RoPE backward at
T=16384, the chunked distillation cosine loss full at BT=1024, ReLU² backward at
N=512) with Liger and the reference Liger compares itself with, writes one bundle
per run, reads every file back through the SDK's strict intake and validates it,
and prints a table: kernel, pass, provider, status, median, p20–p80, speed-up.

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
    BenchSettings,
    cuda_tools,
    format_table,
    run_bench,
    summary_rows,
)
from bench_adapters.liger_bench.catalog import load_bench_catalog
from bench_adapters.liger_bench.plan import PlannedItem, seed_request
from bench_adapters.liger_bench.probes import NoDevice, TimerSettings
from bench_adapters.liger_bench.runner import Tools

TABLE_COLUMNS = (0, 1, 4, 5, 6, 7, 8)  # kernel, pass, provider, status, median, p20–p80, speed-up
TABLE_HEADER = ["kernel", "pass", "provider", "status", "median", "p20–p80", "speed-up"]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="gpu-check",
        description="Run the four seed kernels at the seed shapes beside their references "
        "on this machine's CUDA GPU; write, validate and tabulate the records.",
    )
    parser.add_argument(
        "--out",
        default="docs/examples/bench-liger",
        help="directory for the bundles (default: %(default)s)",
    )
    parser.add_argument("--warmup-ms", type=float, default=25.0, help="do_bench warmup")
    parser.add_argument("--rep-ms", type=float, default=100.0, help="do_bench rep")
    parser.add_argument(
        "--memory", action="store_true", help="also measure peak memory of each run"
    )
    return parser.parse_args(argv)


def plan_seed_items(memory: bool) -> list[PlannedItem]:
    """The seeds' workloads, speed (and memory when asked), Liger and its reference."""
    import attrs

    items = seed_request(load_bench_catalog())
    if memory:
        items = [x for item in items for x in (item, attrs.evolve(item, metric="memory"))]
    return items


def check(
    argv: Sequence[str] | None = None,
    *,
    tools: Tools | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """The whole check; ``tools`` stands in for the CUDA tools in tests."""
    import kernelindex_sdk as ki

    stdout, stderr = out or sys.stdout, err or sys.stderr
    args = parse_args(argv)
    if args.warmup_ms < 0 or args.rep_ms <= 0:
        stderr.write("gpu-check: --warmup-ms must be >= 0 and --rep-ms > 0\n")
        return 2
    settings = BenchSettings(timer=TimerSettings(warmup_ms=args.warmup_ms, rep_ms=args.rep_ms))
    try:
        tools = tools or cuda_tools(settings)
    except NoDevice as error:
        stderr.write(f"gpu-check: {error}\n")
        return 2
    catalog = load_bench_catalog()
    out_dir = Path(args.out)
    items = plan_seed_items(args.memory)
    written = run_bench(items, catalog, out_dir, tools, settings, stream=stderr)

    invalid = 0
    for entry in written:
        try:
            document = ki.load_file(entry.path)
            problems = ki.validate(document, source=str(entry.path))
        except ki.IntakeError as error:
            problems = [error]  # type: ignore[list-item]
        for problem in problems:
            invalid += 1
            stderr.write(f"gpu-check: invalid record: {problem}\n")

    info = tools.device.describe()
    software = ", ".join(f"{k} {v}" for k, v in sorted(info.software.items()))
    stdout.write(
        f"{info.name} ({info.architecture}, {info.memory_bytes or 0} bytes); {software}\n\n"
    )
    rows = [[row[i] for i in TABLE_COLUMNS] for row in summary_rows(written)]
    stdout.write(format_table(rows, TABLE_HEADER) + "\n\n")
    for entry in written:
        if entry.outcome.status != "passed":
            stdout.write(
                f"{entry.outcome.status}: {entry.outcome.item.workload.label} "
                f"{entry.outcome.provider}: {entry.outcome.reason}\n"
            )
    not_passed = sum(1 for entry in written if entry.outcome.status != "passed")
    stdout.write(
        f"{len(written)} runs written under {out_dir}, {len(written) - invalid} files valid; "
        f"{not_passed} runs did not pass\n"
    )
    return 1 if invalid or not_passed else 0


def main() -> None:
    """Console entry: ``python -m bench_adapters.liger_bench.gpu_check``."""
    try:
        sys.exit(check())
    except KeyboardInterrupt:
        sys.stderr.write("gpu-check: interrupted\n")
        sys.exit(130)


if __name__ == "__main__":
    main()
