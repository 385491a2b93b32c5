"""Liger's published seeds beside runs of ``bench liger``: one table by kernel, pass and shape.

``kernelindex compare`` groups runs by workload *digest*, and that is the right rule
for runs that may be compared. It cannot put the seeds beside this adapter's runs: the
seeds' ``workloadDigest`` points to Workload records that were never published, so a
workload built here (the importer's, from the same CSV row) has another digest, and
``compare`` would print the seeds and an H200 run in tables of their own. The seeds'
protocols differ too (Liger's harness, its ``do_bench`` settings unrecorded).

So this table is not a comparison in ``compare``'s sense; it is what a reader wants
beside the seeds: for each **kernel, pass, shape and metric**, each GPU and harness on a
row, with Liger's median, the reference's median and the speed-up of that row's own
harness. The key is read off what every Liger run carries, imported or measured:
``sourceNative.benchmark`` (``kernel/pass``) and ``sourceNative.externalId``
(``benchmark/provider/gpu-slug/workload-slug/timestamp``), the workload slug being
the shape parameters and dtype (settings such as ``hidden_act`` are not in it, and the
seeds do not publish theirs). A run given with its Workload and Implementation records
takes kernel, pass and provider from them.

Within a row, each provider shows its newest run (by ``observedAt``); the reference is
the first of :data:`kernelindex_sdk.compare.REFERENCE_PROVIDERS` present. Records are
loaded and validated as ``compare`` loads them: invalid ones are reported and left out.

Run it as ``scripts/seed-table examples/liger docs/examples/bench-liger`` (``--format
markdown`` for the docs); ``scripts/gpu-check`` writes it beside its records.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TextIO

import attrs

from bench_adapters.liger_bench.bench import UsageParser, format_table
from kernelindex_sdk.base import recordformat
from kernelindex_sdk.base.escaping import markdown_cell
from kernelindex_sdk.base.metrics import METRIC_NAMES, PEAK_MEMORY
from kernelindex_sdk.base.recordformat import METADATA_KEY, SPEC_KEY
from kernelindex_sdk.base.wording import counted
from kernelindex_sdk.compare import REFERENCE_PROVIDERS, ResolvedRun, load_records, resolve_runs
from kernelindex_sdk.errors import Problem

#: Harness names for the table, by ``sourceNative.source``.
HARNESSES = {
    "liger-kernel-bench": "Liger CSV",
    "kernelindex-bench-liger": "kernelindex bench liger",
}
#: Passes in reading order.
PASS_ORDER = {"forward": 0, "backward": 1, "full": 2}
#: The Liger provider the table's first columns are about.
LIGER = "liger"
HEADER = [
    "kernel",
    "pass",
    "shape",
    "metric",
    "GPU",
    "harness",
    "Liger",
    "liger median",
    "reference",
    "reference median",
    "speed-up",
]


@attrs.frozen
class Identity:
    """What a Liger run computed and who computed it, read off the run itself."""

    kernel: str
    pass_: str
    shape: str
    provider: str
    harness: str


@attrs.frozen
class Row:
    """One kernel, pass, shape and metric on one GPU under one harness."""

    kernel: str
    pass_: str
    shape: str
    metric: str
    gpu: str
    harness: str
    liger: ResolvedRun | None
    liger_version: str | None
    reference: ResolvedRun | None
    reference_provider: str | None

    @property
    def speedup(self) -> float | None:
        """Reference median over Liger's, both passed; None otherwise."""
        liger, reference = self.liger, self.reference
        if liger is None or reference is None or not (liger.passed and reference.passed):
            return None
        if liger.statistic != reference.statistic or not liger.value:
            return None
        assert reference.value is not None
        return reference.value / liger.value


def identify(record: Mapping[str, Any], run: ResolvedRun) -> Identity | None:
    """Kernel, pass, shape, provider and harness of a run; None if it is not a Liger run.

    The shape comes from ``sourceNative.externalId``, which the importer and this
    adapter both build as ``<kernel>/<pass>[/<metric>]/<provider>/<gpu>/<shape>/<time>``;
    the rest from the Workload and Implementation when given, else from the same id.
    """
    native = record.get(SPEC_KEY, {}).get(recordformat.SOURCE_NATIVE_KEY, {})
    benchmark, external = (
        native.get(recordformat.BENCHMARK_KEY),
        native.get(recordformat.EXTERNAL_ID_KEY),
    )
    if not isinstance(benchmark, str) or not isinstance(external, str):
        return None
    if not external.startswith(benchmark + "/"):
        return None
    rest = external[len(benchmark) + 1 :].split("/")
    named = benchmark.split("/")
    if len(rest) != 4 or len(named) < 2 or not all(rest[:3]) or not all(named[:2]):
        return None
    provider, _gpu, shape, _time = rest
    kernel, pass_ = named[0], named[1]
    if run.workload is not None:
        kernel, pass_ = run.workload.kernel, run.workload.pass_
    if run.implementation is not None:
        provider = run.implementation.provider
    source = str(native.get(recordformat.SOURCE_KEY, ""))
    harness = HARNESSES.get(source, source) + _call_style(run)
    return Identity(kernel, pass_, shape, provider, harness)


def _call_style(run: ResolvedRun) -> str:
    """`` · upstream call`` or `` · kernelindex call`` for a ``bench liger`` run whose
    protocol is given (its name says whose call it timed), so the two are never one row."""
    name = run.protocol_name or ""
    if not name.startswith(_OUR_PROTOCOLS):
        return ""
    return (
        " · upstream call"
        if name.startswith(_OUR_PROTOCOLS + "upstream-")
        else " · kernelindex call"
    )


#: The start of every protocol name of ``bench liger``.
_OUR_PROTOCOLS = "kernelindex-bench-liger-"


def liger_version(record: Mapping[str, Any], run: ResolvedRun) -> str | None:
    """The Liger release: the implementation's package version, else the run's label."""
    if run.implementation is not None and run.implementation.version:
        return run.implementation.version
    label = record.get(METADATA_KEY, {}).get(recordformat.LABELS_KEY, {}).get("liger_version")
    return label if isinstance(label, str) else None


@attrs.frozen
class Loaded:
    """The rows found, and what was left out."""

    rows: list[Row]
    #: Valid runs that carry no Liger benchmark id (not placed in any row).
    unplaced: int
    invalid: int
    unreadable: int


def collect(paths: Iterable[str], on_problem: Any = None) -> Loaded:
    """Load, validate and arrange every Liger run under ``paths`` (records, bundles, dirs)."""
    loaded = load_records(list(paths), on_problem=on_problem)
    runs, _ = resolve_runs(loaded.index)
    groups: dict[tuple[str, str, str, str, str, str], dict[str, list[ResolvedRun]]] = {}
    versions: dict[str, str | None] = {}
    unplaced = 0
    for run in runs:
        record = loaded.index.run_record(run.digest)
        assert record is not None  # loaded without facts: every run is its record
        who = identify(record, run)
        if who is None:
            unplaced += 1
            continue
        key = (who.kernel, who.pass_, who.shape, run.metric, run.gpu, who.harness)
        groups.setdefault(key, {}).setdefault(who.provider, []).append(run)
        versions[run.digest] = liger_version(record, run)
    rows = []
    for key, providers in groups.items():
        liger = _newest(providers.get(LIGER, []))
        reference_provider = next((p for p in REFERENCE_PROVIDERS if p in providers), None)
        reference = _newest(providers[reference_provider]) if reference_provider else None
        if liger is None and reference is None:
            continue
        rows.append(
            Row(
                *key,
                liger=liger,
                liger_version=versions.get(liger.digest) if liger else None,
                reference=reference,
                reference_provider=reference_provider,
            )
        )
    rows.sort(key=_order)
    return Loaded(rows, unplaced, loaded.invalid, loaded.unreadable)


def _newest(runs: Sequence[ResolvedRun]) -> ResolvedRun | None:
    return max(runs, key=lambda run: (run.observed_key, run.digest), default=None)


def _order(row: Row) -> tuple[Any, ...]:
    seeds_first = row.harness != HARNESSES["liger-kernel-bench"]
    return (
        row.kernel,
        PASS_ORDER.get(row.pass_, len(PASS_ORDER)),
        row.pass_,
        row.shape,
        row.metric,
        seeds_first,
        row.gpu,
    )


def show(run: ResolvedRun | None) -> str:
    """A run's median for people (``70.514 ms``, ``512 MiB``), or its status."""
    if run is None:
        return "–"
    if not run.passed or run.value is None:
        return run.status
    if run.metric == PEAK_MEMORY:
        return f"{run.value / 2**20:.5g} MiB"
    return f"{run.value / 1e6:.5g} ms"


def cells(row: Row) -> list[str]:
    """The row's cells, in :data:`HEADER` order."""
    speedup = row.speedup
    return [
        row.kernel,
        row.pass_,
        row.shape,
        METRIC_NAMES.get(row.metric, row.metric),
        row.gpu,
        row.harness,
        row.liger_version or "–",
        show(row.liger),
        row.reference_provider or "–",
        show(row.reference),
        f"{speedup:.2f}×" if speedup is not None else "–",
    ]


def markdown(rows: Sequence[Row]) -> str:
    """A GitHub table; every cell shown as it is
    (:func:`~kernelindex_sdk.base.escaping.markdown_cell`)."""
    lines = [
        "| " + " | ".join(markdown_cell(cell) for cell in HEADER) + " |",
        "|" + "|".join(" --- " for _ in HEADER) + "|",
    ]
    for row in rows:
        escaped = [markdown_cell(cell) for cell in cells(row)]
        lines.append("| " + " | ".join(escaped) + " |")
    return "\n".join(lines) + "\n"


def text(rows: Sequence[Row]) -> str:
    """Plain left-aligned columns."""
    return format_table([cells(row) for row in rows], HEADER) + "\n"


FORMATS = {"markdown": markdown, "text": text}


def main(
    argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """``scripts/seed-table PATH...``: exit 0 done, 1 invalid records left out, 2 unreadable."""
    stdout, stderr = out or sys.stdout, err or sys.stderr
    parser = UsageParser(
        prog="seed-table",
        description="Liger runs by kernel, pass and shape: each GPU and harness on a row, "
        "with Liger's median, the reference's and the speed-up.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="records, bundles, folders")
    parser.add_argument("--format", choices=sorted(FORMATS), default="text")
    args = parser.parse_args(argv)

    def report(problem: Problem) -> None:
        stderr.write(f"{problem}\n")

    loaded = collect(args.paths, on_problem=report)
    stdout.write(FORMATS[args.format](loaded.rows))
    if loaded.unplaced:
        stderr.write(
            f"seed-table: {counted(loaded.unplaced, 'run')} with no Liger benchmark id left out\n"
        )
    stdout.flush()
    if loaded.unreadable:
        return 2
    return 1 if loaded.invalid else 0


if __name__ == "__main__":
    sys.exit(main())
