"""The whole ``bench liger`` job: plan, check the device, run, write records, summarize.

Used by the CLI (:mod:`bench_adapters.bench_cli`) and by ``scripts/gpu-check``. The
machine-facing tools come from a factory, so tests pass stand-ins and the real ones
(:func:`cuda_tools`) import torch and triton only when a real sweep starts.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

import attrs

from bench_adapters.liger_bench.assemble import Assembler
from bench_adapters.liger_bench.calls import UPSTREAM
from bench_adapters.liger_bench.catalog import BenchCatalog
from bench_adapters.liger_bench.plan import PlannedItem
from bench_adapters.liger_bench.probes import (
    CudaDevice,
    DeviceInfo,
    DoBenchTimer,
    TimerSettings,
    TorchMemoryProbe,
)
from bench_adapters.liger_bench.runner import Backend, Outcome, Runner, Tools
from bench_adapters.recording.bundles import InvalidBundle
from bench_adapters.recording.bundles import write_bundle as recorded_bundle
from bench_adapters.recording.hostbound import GPU_ONLY_PREFIX, HOST_BOUND, graph_settings
from bench_adapters.recording.measure import FIRST_CALL
from bench_adapters.recording.observe import NvmlMonitor
from bench_adapters.recording.recorder import harness_version
from bench_adapters.recording.timing import injected
from kernelindex_sdk.base.escaping import one_line
from kernelindex_sdk.base.progress import Progress


@attrs.frozen
class BenchSettings:
    """How to measure: do_bench's settings, memory repetitions, the input seed, whose
    call is timed (:mod:`~bench_adapters.liger_bench.calls`), and whether the timer's
    warm-up and rep were asked for (then the call style does not replace them)."""

    timer: TimerSettings = attrs.field(factory=TimerSettings)
    memory_repetitions: int = 10
    seed: int = 0
    call_style: str = UPSTREAM
    fixed_timing: bool = False
    #: Measure the GPU's time alone beside each latency (a CUDA graph replay).
    gpu_only: bool = True


@attrs.frozen
class Written:
    """An outcome, the bundle it became, and the file it was written to."""

    outcome: Outcome
    bundle: dict[str, Any]
    path: Path


def cuda_tools(settings: BenchSettings) -> Tools:
    """The real tools: the current CUDA device, do_bench (and do_bench_cudagraph for the
    GPU-only figure), torch's peak-memory counters, and NVML watching the timed calls."""
    from bench_adapters.liger_bench.torch_backend import TorchBackend

    device = CudaDevice()
    device.require()
    return Tools(
        device=device,
        backend=TorchBackend("cuda"),
        timer=DoBenchTimer(settings.timer),
        memory=TorchMemoryProbe(settings.memory_repetitions),
        seed=settings.seed,
        call_style=settings.call_style,
        fixed_timing=settings.fixed_timing,
        gpu_timer=DoBenchTimer(graph_settings()) if settings.gpu_only else None,
        monitor=NvmlMonitor(device.index),
    )


#: What to install for each module a provider may need, in the one-line error.
INSTALL_HINTS = {
    "liger_kernel": "pip install liger-kernel triton torch",
    "triton": "pip install liger-kernel triton torch",
    "torch": "pip install liger-kernel triton torch",
    "transformers": "pip install transformers",
}


def missing_dependencies(items: Sequence[PlannedItem], backend: Backend) -> str | None:
    """Why the plan cannot run as asked here, in one line; None when it can.

    Checked before anything runs, so a missing Liger or transformers costs no GPU time
    and no half-written output: every provider planned must be importable, and every
    provider that is checked against a reference must have one importable. The
    runner's ``skipped`` status stays for what only fails at run time.
    """
    why: dict[str, list[str]] = {}
    for item in items:
        kernel = item.workload.kernel
        for provider in item.providers:
            reason = backend.missing(kernel, provider)
            if reason is not None:
                _note(why, reason, f"{provider} ({kernel.name})")
            elif kernel.gated(provider) and all(
                backend.missing(kernel, ref) is not None for ref in kernel.references
            ):
                refs = "; ".join(
                    f"{ref}: {backend.missing(kernel, ref)}" for ref in kernel.references
                )
                _note(why, f"no reference to check against ({refs})", f"{provider} ({kernel.name})")
    if not why:
        return None
    parts = [f"{reason}, needed by {', '.join(users)}" for reason, users in why.items()]
    hints = [hint for module, hint in INSTALL_HINTS.items() if any(f"'{module}'" in r for r in why)]
    hint = "; ".join(dict.fromkeys(hints)) or "install what is named"
    return f"missing dependencies: {'; '.join(parts)} ({hint})"


def _note(table: dict[str, list[str]], reason: str, user: str) -> None:
    users = table.setdefault(reason, [])
    if user not in users:
        users.append(user)


def device_warnings(info: DeviceInfo) -> list[str]:
    """What the environment record will lack, said before a sweep writes it."""
    warnings = list(info.notes)
    if "driver" not in info.software and not warnings:
        warnings.append(
            "the NVIDIA driver version could not be read; "
            "the environment record is written without it"
        )
    return warnings


def write_bundle(out: Path, bundle: dict[str, Any]) -> Path:
    """Write one bundle as the recorder does; return its path.

    ``OUT/<run name>-<16 hex digits of the run digest>.json`` (the importers' bundles
    layout), checked as ``validate --strict-refs`` checks it first, written
    atomically: a sweep that dies leaves every finished run's file whole. One write
    path with ``kernelindex``'s recorder and pytest fixture
    (:func:`bench_adapters.recording.bundles.write_bundle`).
    """
    return recorded_bundle(out, bundle)


def run_bench(
    items: Sequence[PlannedItem],
    catalog: BenchCatalog,
    out: Path,
    tools: Tools,
    settings: BenchSettings,
    *,
    stream: TextIO | None = None,
    on_written: Callable[[Written], None] = lambda written: None,
    info: DeviceInfo | None = None,
    on_refused: Callable[[Outcome, InvalidBundle], None] | None = None,
) -> list[Written]:
    """Run every item, writing each run's bundle as soon as it ends (a crash loses none).

    ``info`` is the device as already described (describing reads the driver version,
    which may cost ``nvidia-smi``'s timeout: do it once). A bundle that would not
    validate is never written: with ``on_refused`` it is reported there and the sweep
    goes on (a short GPU window keeps the rest), else :class:`InvalidBundle` ends it.
    """
    if info is None:
        info = tools.device.describe()
    # The protocol states what measured, as record()'s does: the timer's own settings and
    # the memory probe's repetitions (``settings`` is what cuda_tools builds them from).
    settings_used = tools.timer.settings
    if not isinstance(settings_used, TimerSettings):
        raise ValueError("bench liger times with do_bench: its timer needs TimerSettings")
    assembler = Assembler(
        catalog.liger,
        info,
        settings_used,
        tools.memory.repetitions,
        harness_version(),
        injected(tools.timer),
    )
    total = sum(len(item.providers) for item in items)
    written: list[Written] = []
    with Progress(total=total, label="bench liger", stream=stream) as bar:

        def record(outcome: Outcome) -> None:
            bundle = assembler.bundle(outcome)
            try:
                path = write_bundle(out, bundle)
            except InvalidBundle as error:
                if on_refused is None:
                    raise
                on_refused(outcome, error)
                bar.advance()
                return
            entry = Written(outcome, bundle, path)
            written.append(entry)
            on_written(entry)
            if outcome.status != "passed":
                bar.note(f"{outcome.status}: {_label(outcome)}: {outcome.reason}")
            bar.advance()

        Runner(tools).run(items, on_outcome=record)
    return written


def _label(outcome: Outcome) -> str:
    item = outcome.item
    return f"{item.workload.label} {item.metric} {outcome.provider}"


def format_value(outcome: Outcome, index: int) -> str:
    """A run's value for people: ms for speed, MiB for memory."""
    if outcome.values is None:
        return "-"
    value = outcome.values[index]
    if outcome.item.metric == "speed":
        return f"{value / 1e6:.4f} ms"
    return f"{value / 2**20:.1f} MiB"


def format_median(outcome: Outcome) -> str:
    """The median for people, and ``host-bound (GPU x ms)`` when the run was flagged so:
    its figure is mostly the host's time, and the GPU's own is what travels."""
    text = format_value(outcome, 1)
    if HOST_BOUND in outcome.flags:
        gpu = outcome.native.get(f"{GPU_ONLY_PREFIX}50")
        text += " host-bound" + (f" (GPU {gpu:.4f} ms)" if gpu is not None else "")
    return text


def format_first_call(outcome: Outcome) -> str:
    """The correctness-check call's wall time (compiling included), or ``-``."""
    ms = outcome.native.get(FIRST_CALL)
    if ms is None:
        return "-"
    return f"{ms / 1000:.1f} s" if ms >= 1000 else f"{ms:.0f} ms"


def summary_rows(written: Sequence[Written]) -> list[list[str]]:
    """Table rows: kernel, pass, metric, workload, provider, status, median, p20–p80,
    speed-up, first call.

    The speed-up of a provider is the reference's median over its own, for the same
    workload and metric (the reference being the first of the kernel's references
    that passed); a reference's own row shows 1.00x. For peak memory the same ratio
    says how many times less memory the provider needed.
    """
    medians: dict[tuple[str, str, str], int] = {}
    for entry in written:
        o = entry.outcome
        if o.status == "passed" and o.values is not None:
            medians[(o.item.workload.label, o.item.metric, o.provider)] = o.values[1]
    rows = []
    for entry in written:
        o = entry.outcome
        workload = o.item.workload
        kernel = workload.kernel
        speedup = "-"
        if o.values is not None:
            for reference in kernel.references:
                base = medians.get((workload.label, o.item.metric, reference))
                if base is not None and o.values[1] > 0:
                    speedup = f"{base / o.values[1]:.2f}x"
                    if o.item.metric == "memory":
                        speedup += " (memory)"
                    break
        spread = f"{format_value(o, 0)} – {format_value(o, 2)}" if o.values is not None else "-"
        rows.append(
            [
                kernel.name,
                workload.pass_,
                o.item.metric,
                workload.shape.slug,
                o.provider,
                o.status,
                format_median(o),
                spread,
                speedup,
                format_first_call(o),
            ]
        )
    return rows


HEADER = [
    "kernel",
    "pass",
    "metric",
    "workload",
    "provider",
    "status",
    "median",
    "p20–p80",
    "speed-up",
    "first call",
]


class UsageParser(argparse.ArgumentParser):
    """argparse for the scripts, with a usage error as one line (``prog: what``) and exit 2.

    argparse's own error prints the whole usage first; the house rule is one line.
    """

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: {one_line(message)} (--help for usage)\n")
        raise SystemExit(2)


def format_table(rows: Sequence[Sequence[str]], header: Sequence[str] = HEADER) -> str:
    """Plain-text columns, left-aligned; every cell one printable line."""
    table = [list(header), *[[one_line(cell) for cell in row] for row in rows]]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in table
    ]
    return "\n".join(lines)
