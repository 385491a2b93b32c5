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


# ---------------------------------------------------------------- --where KEY=VALUE

#: The workload field ``--where`` takes besides the parameters.
DTYPE: Final = "dtype"


@attrs.frozen
class Where:
    """One ``--where KEY=VALUE``: a workload parameter (or ``dtype``) and its value."""

    key: str
    value: str

    def __str__(self) -> str:
        return f"{self.key}={self.value}"


def parse_where(texts: Iterable[str]) -> tuple[Where, ...]:
    """Each ``KEY=VALUE`` as a :class:`Where`; a ``ValueError`` with the one line to say
    for the first that is not one (no ``=``, or an empty key)."""
    found = []
    for text in texts:
        key, equals, value = text.partition("=")
        if not equals or not key.strip():
            raise ValueError(
                f"--where {text!r} is not KEY=VALUE"
                " (a workload parameter or dtype, e.g. hidden=4096)"
            )
        found.append(Where(key.strip(), value.strip()))
    return tuple(found)


def where_values(run: ResolvedRun) -> dict[str, str]:
    """What ``--where`` can match of a run: its workload's parameters and dtype, as text
    (``true``, ``4096``); empty for a run whose Workload record was not given."""
    from kernelindex_sdk.compare.runs import show_value

    workload = run.workload
    if workload is None:
        return {}
    values = {name: show_value(value) for name, value in workload.parameters.items()}
    values[DTYPE] = workload.dtype
    return values


def where_matches(values: Mapping[str, str], wheres: Sequence[Where]) -> bool:
    """Whether ``values`` (:func:`where_values`) meet every key's condition: for each key
    given, any of its values (``--where dtype=bf16 --where dtype=fp16``: either)."""
    by_key: dict[str, list[str]] = {}
    for where in wheres:
        by_key.setdefault(where.key, []).append(where.value)
    for key, wanted in by_key.items():
        have = values.get(key)
        if have is None or not any(_same(have, value) for value in wanted):
            return False
    return True


def select_where(runs: Iterable[ResolvedRun], wheres: Sequence[Where]) -> list[ResolvedRun]:
    """The runs every ``--where`` condition matches (all of them without any)."""
    if not wheres:
        return list(runs)
    return [run for run in runs if where_matches(where_values(run), wheres)]


def unmatched_where(present: Iterable[Mapping[str, str]], wheres: Sequence[Where]) -> list[str]:
    """Why a ``--where`` names nothing in ``present`` (each run's :func:`where_values`),
    one line each: a key no workload has (with the keys closest to it), or a value no
    workload has for that key (with the values it has: numbers are not "close" as
    words are)."""
    values: dict[str, set[str]] = {}
    for found in present:
        for key, value in found.items():
            values.setdefault(key, set()).add(value)
    lines = []
    for where in wheres:
        if where.key not in values:
            keys = sorted(values)
            hint = suggest.did_you_mean(suggest.closest(where.key, keys))
            listed = hint or (f"; present: {', '.join(keys[:LISTED])}" if keys else "")
            lines.append(f"--where {str(where)!r}: no parameter {where.key!r} in the input{listed}")
        elif not any(_same(have, where.value) for have in values[where.key]):
            choices = [f"{where.key}={v}" for v in sorted(values[where.key], key=_number_first)]
            lines.append(str(_unmatched("where", str(where), [], choices)))
    return lines


def _same(have: str, wanted: str) -> bool:
    """Equal as text, or as numbers (``4096`` and ``4096.0``), or as booleans in any case."""
    if have == wanted or have.lower() == wanted.lower() in ("true", "false"):
        return True
    try:
        return float(have) == float(wanted)
    except ValueError:
        return False


def _number_first(value: str) -> tuple[int, float, str]:
    try:
        return (0, float(value), value)
    except ValueError:
        return (1, 0.0, value)
