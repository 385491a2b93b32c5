"""What a folder of records holds: counts by kind and status, and what the runs are of.

Before comparing, people ask what is there: which kernels, GPUs and implementations,
measured how and when, and with what quality findings. :func:`take_inventory` answers
from the same validated, digest-indexed load ``compare`` uses
(:func:`~kernelindex_sdk.compare.records.load_records`), so a record given twice is
counted once and an invalid one not at all.

Record counts are of the whole input; everything about runs is of the runs given
(after filters, if any). A run whose Workload, Implementation, Protocol or Environment
record was not given is counted under ``notGiven`` and left out of the lists that need
that record (its kernel, say), never guessed.

**Noise.** How many passed runs record a spread, of which kind, and how many record
none and why (collapsed quantiles — p20 = median = p80 —, one sample, a standard
deviation of 0, nothing): read by :func:`~kernelindex_sdk.compare.noise.noise_of`, the
one definition ``compare`` and ``compare --against`` judge by, so ``ls`` says before a
comparison which ratios will carry no noise.

**Time.** A run flagged ``observed_at_unknown`` carries the placeholder
``1970-01-01T00:00:00.000Z`` because its source recorded no time (docs/format.md): it is
counted as *undated*, never as a run from 1970, and does not stretch the range.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import Final

import attrs

from kernelindex_sdk.base.metrics import METRIC_NAMES
from kernelindex_sdk.base.recordformat import KIND_KEY
from kernelindex_sdk.compare.grouping import PASS_ORDER, natural_order
from kernelindex_sdk.compare.noise import KINDS as NOISE_KINDS
from kernelindex_sdk.compare.noise import noise_of
from kernelindex_sdk.compare.records import RecordIndex
from kernelindex_sdk.compare.runs import ResolvedRun

#: Run statuses in the order people read them (the schema's; any other after them).
STATUS_ORDER: Final = ("passed", "failed", "oom", "skipped")
#: Record kinds, runs first, then what runs reference.
KIND_ORDER: Final = (
    "BenchmarkRun",
    "Workload",
    "Implementation",
    "BenchmarkProtocol",
    "ExecutionEnvironment",
)


@attrs.frozen
class Inventory:
    """What the input holds. Every mapping is name → count, in display order."""

    #: Distinct records (by digest) per kind, over the whole input.
    kinds: Mapping[str, int]
    #: Runs given more than once (same digest), counted once above.
    duplicate_runs: int
    #: Runs described below (all, or those the filters selected).
    runs: int
    statuses: Mapping[str, int]
    #: By the metric's schema name (``latency``, ``peak_memory``; ``unknown``).
    metrics: Mapping[str, int]
    passes: Mapping[str, int]
    kernels: Mapping[str, int]
    gpus: Mapping[str, int]
    providers: Mapping[str, int]
    implementations: Mapping[str, int]
    protocols: Mapping[str, int]
    #: Earliest and latest ``observedAt`` of the dated runs, in UTC (None: none dated).
    first: datetime | None
    last: datetime | None
    #: Runs flagged ``observed_at_unknown``: no time recorded.
    undated: int
    quality_flags: Mapping[str, int]
    #: Passed runs per noise kind (``quantiles``, ``stddev``, ``samples``, ``none``).
    noise: Mapping[str, int]
    #: Passed runs without noise, per reason (``collapsed quantiles``, ``one sample``...).
    no_noise: Mapping[str, int]
    #: Kind → runs that reference a record of it that was not given.
    not_given: Mapping[str, int]

    @property
    def records(self) -> int:
        return sum(self.kinds.values())


def take_inventory(index: RecordIndex, runs: Iterable[ResolvedRun]) -> Inventory:
    """The inventory of ``index`` (records) and ``runs`` (resolved from it, maybe filtered)."""
    kinds: Counter[str] = Counter({"BenchmarkRun": len(index.runs)} if index.runs else {})
    kinds.update(str(record.get(KIND_KEY)) for record in index.records.values())
    counted = _RunCounts()
    for run in runs:
        counted.add(run, index)
    return counted.inventory(kinds, index.duplicate_runs)


@attrs.define
class _RunCounts:
    """What :func:`take_inventory` counts of the runs, run by run."""

    statuses: Counter[str] = attrs.Factory(Counter)
    metrics: Counter[str] = attrs.Factory(Counter)
    passes: Counter[str] = attrs.Factory(Counter)
    kernels: Counter[str] = attrs.Factory(Counter)
    gpus: Counter[str] = attrs.Factory(Counter)
    providers: Counter[str] = attrs.Factory(Counter)
    implementations: Counter[str] = attrs.Factory(Counter)
    protocols: Counter[str] = attrs.Factory(Counter)
    flags: Counter[str] = attrs.Factory(Counter)
    not_given: Counter[str] = attrs.Factory(Counter)
    noise: Counter[str] = attrs.Factory(Counter)
    no_noise: Counter[str] = attrs.Factory(Counter)
    first: datetime | None = None
    last: datetime | None = None
    undated: int = 0
    total: int = 0

    def add(self, run: ResolvedRun, index: RecordIndex) -> None:
        """Count one run; a record it references that was not given is counted as such."""
        self.total += 1
        self.statuses[run.status] += 1
        self.metrics[run.metric] += 1
        if run.workload is not None:
            self.passes[run.workload.pass_] += 1
            self.kernels[run.workload.kernel] += 1
        else:
            self.not_given["Workload"] += 1
        if run.implementation is not None:
            self.providers[run.implementation.provider] += 1
            self.implementations[run.implementation.label] += 1
        else:
            self.not_given["Implementation"] += 1
        if run.protocol_name is not None:
            self.protocols[run.protocol_name] += 1
        else:
            self.not_given["BenchmarkProtocol"] += 1
        if index.lookup(run.environment_digest, "ExecutionEnvironment") is None:
            self.not_given["ExecutionEnvironment"] += 1
        else:
            self.gpus[run.gpu] += 1
        if run.passed:
            found = noise_of(run)
            self.noise[found.kind] += 1
            if not found.known:
                self.no_noise[found.why or "no spread recorded"] += 1
        self.flags.update(run.flags)
        self._when(run)

    def _when(self, run: ResolvedRun) -> None:
        if not run.dated:
            self.undated += 1
            return
        when = run.observed_key.astimezone(timezone.utc)
        self.first = when if self.first is None or when < self.first else self.first
        self.last = when if self.last is None or when > self.last else self.last

    def inventory(self, kinds: Counter[str], duplicate_runs: int) -> Inventory:
        """The counts, each in its display order."""
        return Inventory(
            kinds=_ordered(kinds, KIND_ORDER),
            duplicate_runs=duplicate_runs,
            runs=self.total,
            statuses=_ordered(self.statuses, STATUS_ORDER),
            metrics=_ordered(self.metrics, tuple(METRIC_NAMES)),
            passes=_ordered(self.passes, tuple(PASS_ORDER)),
            kernels=_by_name(self.kernels),
            gpus=_by_name(self.gpus),
            providers=_by_name(self.providers),
            implementations=_by_name(self.implementations),
            protocols=_by_name(self.protocols),
            first=self.first,
            last=self.last,
            undated=self.undated,
            quality_flags=_by_name(self.flags),
            noise=_ordered(self.noise, NOISE_KINDS),
            no_noise=_by_name(self.no_noise),
            not_given=_ordered(self.not_given, KIND_ORDER),
        )


def _ordered(counts: Counter[str], order: tuple[str, ...]) -> dict[str, int]:
    """Known names in ``order``, then any others by name."""
    rank = {name: index for index, name in enumerate(order)}
    names = sorted(counts, key=lambda n: (rank.get(n, len(rank)), natural_order(n)))
    return {name: counts[name] for name in names}


def _by_name(counts: Counter[str]) -> dict[str, int]:
    return {name: counts[name] for name in sorted(counts, key=natural_order)}


def utc_text(when: datetime | None) -> str | None:
    """``2024-09-03T15:38:37Z``: a time of the range as machines and people read it."""
    if when is None:
        return None
    text = when.astimezone(timezone.utc).isoformat(timespec="seconds")
    return text.replace("+00:00", "Z")
