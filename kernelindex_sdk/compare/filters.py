"""Filter values that match nothing in the input, and the values closest to them.

Filtered as it is, ``--kernel gelgu`` would select no run and say only "no run
matches the filters", and ``--baseline huggingfce`` would give every ratio ``n/a`` and
exit 0. A value that names nothing present in the input is almost always a typo, so
it is found *before* filtering and reported with the values that are there, closest
first (the same ``difflib`` closeness click uses for mistyped options and commands).

Each value is checked on its own against every loaded run: a value that exists but
selects nothing *together with the other filters* is not a typo (``--kernel geglu
--gpu a100`` where geglu ran only on an H100), and stays "no run matches the filters".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final

import attrs

from kernelindex_sdk.base import suggest
from kernelindex_sdk.compare.grouping import select, squash
from kernelindex_sdk.compare.runs import ResolvedRun

#: Present values listed when none is close (how close one must be to be offered, and
#: how many are, is one rule for every suggestion: :mod:`kernelindex_sdk.base.suggest`).
LISTED: Final = 8


@attrs.frozen
class Unmatched:
    """One filter value that names nothing in the input."""

    #: The filter: ``kernel``, ``gpu`` or ``baseline`` (the CLI's option names).
    filter: str
    value: str
    #: Present values closest to ``value``, closest first (may be empty).
    closest: tuple[str, ...]
    #: Every value present for this filter, sorted.
    present: tuple[str, ...]

    def __str__(self) -> str:
        """``--kernel 'gelgu' matches nothing in the input; did you mean 'geglu'?``"""
        head = f"--{self.filter} {self.value!r} matches nothing in the input"
        if self.closest:
            return head + suggest.did_you_mean(self.closest)
        if not self.present:
            return f"{head} (no {self.filter} values present)"
        shown = ", ".join(self.present[:LISTED])
        more = len(self.present) - LISTED
        return f"{head}; present: {shown}" + (f" and {more} more" if more > 0 else "")


def unmatched(
    runs: Sequence[ResolvedRun],
    *,
    kernels: Iterable[str] = (),
    gpus: Iterable[str] = (),
    baselines: Iterable[str] = (),
    gpu_names: Mapping[str, Sequence[str]] | None = None,
) -> list[Unmatched]:
    """Every given value that matches no run of ``runs``, with the closest present ones.

    Kernels and baseline providers match exactly (as :func:`~.grouping.select` and the
    baseline choice do); GPUs as ``select`` matches them (a squashed substring of any
    of the GPU's names). Suggestions ignore case; for GPUs, single words of the names
    (``H100``, ``sm_90``) are offered too, since that is what people type.
    """
    found: list[Unmatched] = []
    present_kernels = sorted({run.kernel for run in runs if run.kernel is not None})
    for kernel in kernels:
        if kernel not in present_kernels:
            found.append(_unmatched("kernel", kernel, present_kernels, present_kernels))
    providers = sorted({run.provider for run in runs if run.provider is not None})
    for provider in baselines:
        if provider not in providers:
            found.append(_unmatched("baseline", provider, providers, providers))
    gpus = list(gpus)
    if gpus:
        names = sorted(
            {run.gpu for run in runs} | {n for ns in (gpu_names or {}).values() for n in ns}
        )
        words = sorted({w for name in names for w in name.split()} | set(names))
        labels = sorted({run.gpu for run in runs})
        for gpu in gpus:
            if not select(runs, gpus=[gpu], gpu_names=gpu_names):
                found.append(_unmatched("gpu", gpu, words, labels))
    return found


def _unmatched(
    name: str, value: str, candidates: Sequence[str], present: Sequence[str]
) -> Unmatched:
    return Unmatched(name, value, closest(value, candidates), tuple(present))


def closest(value: str, candidates: Iterable[str]) -> tuple[str, ...]:
    """The candidates closest to ``value``, ignoring case, ``-``, ``_`` and spaces."""
    return suggest.closest(value, candidates, squash)
