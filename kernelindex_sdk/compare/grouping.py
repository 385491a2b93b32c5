"""Groups of comparable runs, the newest run per implementation, and the ratios.

A :class:`Group` holds the runs of one :class:`~kernelindex_sdk.compare.runs.ComparabilityKey`;
its :class:`Row` s are implementations (one per ``implementationDigest``, so
``liger 0.2.1`` and ``liger 0.5.10`` are two rows). Runs that share a key *and* an
implementation are re-runs or re-imports of one measurement: the newest
(:attr:`~kernelindex_sdk.compare.runs.ResolvedRun.recency`: by ``observedAt``, a dated
run before any flagged ``observed_at_unknown``, ties by digest) is the row's value, the
older ones are counted (and listed on request).
Nothing here ever puts runs of different keys together.

Ratios are ``baseline value / row value`` of the primary statistic, so bigger is better
for both metrics: a *speed-up* for latency, a *memory saving* for peak memory (the
reports label them apart). The baseline is the row of the provider asked for, or else
the first provider of :data:`REFERENCE_PROVIDERS` present in the group; with no passed
baseline run, or statistics that differ, the ratio is n/a rather than a guess.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

import attrs

from kernelindex_sdk.base.metrics import RATIO_NAMES
from kernelindex_sdk.compare.runs import ComparabilityKey, ResolvedRun

#: Providers that are the reference a kernel is measured against, most preferred first.
#: Data, not logic: Liger benchmarks compare against Hugging Face Transformers modules or
#: plain PyTorch; Megatron's kernels against Megatron's own (unfused first).
REFERENCE_PROVIDERS: Final[tuple[str, ...]] = (
    "huggingface",
    "torch",
    "pytorch",
    "megatron",
    "megatron-unfused",
    "torch_compile",
    "eager",
    "reference",
)

#: Timed passes in the order people read them: forward, then backward, then both.
PASS_ORDER: Final = {"forward": 0, "backward": 1, "full": 2}


@attrs.frozen
class Row:
    """One implementation in a group: its runs, newest first, and their ratios."""

    implementation: str
    label: str
    provider: str | None
    runs: tuple[ResolvedRun, ...]
    #: ``baseline / run`` for each run (aligned with ``runs``); None where n/a.
    ratios: tuple[float | None, ...]
    is_baseline: bool = False

    @property
    def newest(self) -> ResolvedRun:
        return self.runs[0]

    @property
    def ratio(self) -> float | None:
        return self.ratios[0]

    @property
    def older(self) -> int:
        return len(self.runs) - 1


@attrs.frozen
class Group:
    """Every run of one comparability key, as rows of implementations."""

    key: ComparabilityKey
    rows: tuple[Row, ...]
    #: The provider the ratios are relative to, if the group has one.
    baseline: str | None
    #: Distinct environment digests behind the runs (same hardware; >1: software differs).
    environments: tuple[str, ...]

    @property
    def first(self) -> ResolvedRun:
        """A representative run: every run of a group shares workload, protocol, GPU."""
        return self.rows[0].newest

    @property
    def metric(self) -> str:
        return self.key.metric

    @property
    def ratio_name(self) -> str:
        return RATIO_NAMES.get(self.key.metric, "ratio")

    @property
    def runs(self) -> int:
        return sum(len(row.runs) for row in self.rows)

    @property
    def older(self) -> int:
        return sum(row.older for row in self.rows)


@attrs.frozen
class Comparison:
    """All groups of a selection, in display order."""

    groups: tuple[Group, ...]
    baseline: str | None

    @property
    def runs(self) -> int:
        return sum(group.runs for group in self.groups)

    @property
    def older(self) -> int:
        return sum(group.older for group in self.groups)


def group_runs(
    runs: Iterable[ResolvedRun],
    *,
    baseline: str | None = None,
    reference_providers: Sequence[str] = REFERENCE_PROVIDERS,
) -> Comparison:
    """Group runs by comparability key; pick newest runs, baselines and ratios."""
    # By the fields of the key (ResolvedRun.key), one ComparabilityKey made per group
    # rather than per run.
    by_place: dict[tuple[str, str, str, str], dict[str, list[ResolvedRun]]] = {}
    for run in runs:
        place = (run.workload_digest, run.protocol_digest, run.hardware, run.metric)
        implementations = by_place.get(place)
        if implementations is None:
            implementations = by_place[place] = {}
        implementations.setdefault(run.implementation_digest, []).append(run)
    groups = [
        _group(ComparabilityKey(*place), implementations, baseline, reference_providers)
        for place, implementations in by_place.items()
    ]
    groups.sort(key=_group_order)
    return Comparison(tuple(groups), baseline)


def _group(
    key: ComparabilityKey,
    implementations: dict[str, list[ResolvedRun]],
    baseline: str | None,
    reference_providers: Sequence[str],
) -> Group:
    newest_first = {
        digest: sorted(runs, key=_RECENCY, reverse=True) for digest, runs in implementations.items()
    }
    chosen = _baseline_provider(newest_first, baseline, reference_providers)
    base_run = _baseline_run(newest_first, chosen)
    rows = []
    for digest, runs in newest_first.items():
        first = runs[0]
        rows.append(
            Row(
                implementation=digest,
                label=first.implementation_label,
                provider=first.provider,
                runs=tuple(runs),
                ratios=tuple(ratio(base_run, run) for run in runs),
                is_baseline=any(run is base_run for run in runs),
            )
        )
    if base_run is None and chosen is not None:
        # No passed baseline run: still show which row is the baseline, without ratios.
        rows = [attrs.evolve(r, is_baseline=r.provider == chosen) for r in rows]
    rows.sort(key=lambda r: (not r.is_baseline, r.provider or "~", natural_order(r.label)))
    environments = tuple(sorted({r.environment_digest for rs in newest_first.values() for r in rs}))
    return Group(key, tuple(rows), chosen, environments)


#: A run's :attr:`~ResolvedRun.recency`, as a sort key (no Python frame per run).
_RECENCY: Final = operator.attrgetter("recency")


def _baseline_provider(
    implementations: dict[str, list[ResolvedRun]],
    asked: str | None,
    reference_providers: Sequence[str],
) -> str | None:
    providers = {runs[0].provider for runs in implementations.values()}
    if asked is not None:
        return asked if asked in providers else None
    return next((p for p in reference_providers if p in providers), None)


def _baseline_run(
    implementations: dict[str, list[ResolvedRun]], provider: str | None
) -> ResolvedRun | None:
    """The newest passed run among the baseline provider's rows (several versions: newest)."""
    if provider is None:
        return None
    candidates = [
        runs[0]
        for runs in implementations.values()
        if runs[0].provider == provider and runs[0].passed
    ]
    return max(candidates, key=lambda r: r.recency, default=None)


def ratio(baseline: ResolvedRun | None, run: ResolvedRun) -> float | None:
    """``baseline / run`` of one statistic, or None when that is not a fair number."""
    if baseline is None or not (baseline.passed and run.passed):
        return None
    if baseline.statistic != run.statistic or not run.value or baseline.value is None:
        return None
    return baseline.value / run.value


def natural_order(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that puts ``liger 0.10.0`` after ``liger 0.9.0``."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", text)
    )


def scalar_order(value: object) -> tuple[int, float, str]:
    """Numbers before strings, numbers by value: how parameter values sort."""
    if isinstance(value, bool):
        return (1, 0.0, str(value).lower())
    if isinstance(value, (int, float)):
        return (0, float(value), "")
    return (1, 0.0, str(value))


def parameter_order(run: ResolvedRun) -> tuple[object, ...]:
    """How a run's workload parameters sort: by name, each value by :func:`scalar_order`
    (tables, plots and before/after reports list shapes in this one order)."""
    workload = run.workload
    if workload is None:
        return ()
    return tuple((name, scalar_order(value)) for name, value in sorted(workload.parameters.items()))


def _group_order(group: Group) -> tuple[object, ...]:
    run = group.first
    params = parameter_order(run)
    return (
        run.kernel or "~",
        PASS_ORDER.get(run.pass_ or "", len(PASS_ORDER)),
        run.pass_ or "~",
        group.key.metric,
        run.gpu,
        run.protocol_name or "~",
        run.workload.dtype if run.workload else "~",
        params,
        group.key.workload,
        group.key.hardware,
    )


def select(
    runs: Iterable[ResolvedRun],
    *,
    kernels: Sequence[str] = (),
    passes: Sequence[str] = (),
    gpus: Sequence[str] = (),
    metrics: Sequence[str] = (),
    gpu_names: Mapping[str, Sequence[str]] | None = None,
) -> list[ResolvedRun]:
    """The runs that match every given filter (each filter: any of its values).

    ``gpus`` match case-insensitively as substrings of the GPU label, ignoring ``-``,
    ``_`` and spaces, so ``h100`` and ``H100 80GB HBM3`` both find ``NVIDIA H100 80GB
    HBM3``; ``gpu_names`` adds more names per hardware identity (environment name,
    title, architecture) to match against.
    """
    wanted_gpus = [squash(g) for g in gpus]
    out = []
    for run in runs:
        if kernels and run.kernel not in kernels:
            continue
        if passes and run.pass_ not in passes:
            continue
        if metrics and run.metric not in metrics:
            continue
        if wanted_gpus:
            names = [run.gpu, *(gpu_names or {}).get(run.hardware, ())]
            squashed = [squash(n) for n in names]
            if not any(w in n for w in wanted_gpus for n in squashed):
                continue
        out.append(run)
    return out


def squash(text: str) -> str:
    """A name as ``--gpu`` compares it: lower case, without spaces, ``-`` and ``_``."""
    return "".join(ch for ch in text.lower() if ch not in " -_")
