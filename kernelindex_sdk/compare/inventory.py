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
    statuses: Counter[str] = Counter()
    metrics: Counter[str] = Counter()
    passes: Counter[str] = Counter()
    kernels: Counter[str] = Counter()
    gpus: Counter[str] = Counter()
    providers: Counter[str] = Counter()
    implementations: Counter[str] = Counter()
    protocols: Counter[str] = Counter()
    flags: Counter[str] = Counter()
    not_given: Counter[str] = Counter()
    noise: Counter[str] = Counter()
    no_noise: Counter[str] = Counter()
    first: datetime | None = None
    last: datetime | None = None
    undated = total = 0
    for run in runs:
        total += 1
        statuses[run.status] += 1
        metrics[run.metric] += 1
        if run.workload is not None:
            passes[run.workload.pass_] += 1
            kernels[run.workload.kernel] += 1
        else:
            not_given["Workload"] += 1
        if run.implementation is not None:
            providers[run.implementation.provider] += 1
            implementations[run.implementation.label] += 1
        else:
            not_given["Implementation"] += 1
        if run.protocol_name is not None:
            protocols[run.protocol_name] += 1
        else:
            not_given["BenchmarkProtocol"] += 1
        if index.lookup(run.environment_digest, "ExecutionEnvironment") is None:
            not_given["ExecutionEnvironment"] += 1
        else:
            gpus[run.gpu] += 1
        if run.passed:
            found = noise_of(run)
            noise[found.kind] += 1
            if not found.known:
                no_noise[found.why or "no spread recorded"] += 1
        flags.update(run.flags)
        if not run.dated:
            undated += 1
        else:
            when = run.observed_key.astimezone(timezone.utc)
            first = when if first is None or when < first else first
            last = when if last is None or when > last else last
    return Inventory(
        kinds=_ordered(kinds, KIND_ORDER),
        duplicate_runs=index.duplicate_runs,
        runs=total,
        statuses=_ordered(statuses, STATUS_ORDER),
        metrics=_ordered(metrics, tuple(METRIC_NAMES)),
        passes=_ordered(passes, tuple(PASS_ORDER)),
        kernels=_by_name(kernels),
        gpus=_by_name(gpus),
        providers=_by_name(providers),
        implementations=_by_name(implementations),
        protocols=_by_name(protocols),
        first=first,
        last=last,
        undated=undated,
        quality_flags=_by_name(flags),
        noise=_ordered(noise, NOISE_KINDS),
        no_noise=_by_name(no_noise),
        not_given=_ordered(not_given, KIND_ORDER),
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
