"""Why two runs are not comparable: which of workload, protocol, hardware, metric differs.

Digests say *that* two records differ; a person needs to see *how*. Where both
records were given, the difference is shown field by field (``kernel geglu vs swiglu;
seq 1024 vs 2048``); where one was not, by digest. :func:`explain` says it for every
group a selection fell into, each against the first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

import attrs

from kernelindex_sdk.base.metrics import METRIC_NAMES
from kernelindex_sdk.base.recordformat import (
    DTYPE_KEY,
    HARDWARE_KEY,
    HARNESS_KEY,
    KERNEL_KEY,
    NAME_KEY,
    PARAMETERS_KEY,
    PASS_KEY,
    PROVIDER_KEY,
    SPEC_KEY,
)
from kernelindex_sdk.compare.grouping import Comparison, Group
from kernelindex_sdk.compare.runs import ResolvedRun, short_digest, show_value

#: How many field differences to spell out per part before "and N more".
MAX_DETAILS: Final = 4

#: Looks up a referenced record by digest and kind (None when not given).
Lookup = Callable[[str, str], "Mapping[str, Any] | None"]


@attrs.frozen
class Difference:
    """One part of the comparability key that differs, and how."""

    part: str
    detail: str

    def __str__(self) -> str:
        return f"{self.part} differs ({self.detail})"

    def as_json(self) -> dict[str, str]:
        return {"part": self.part, "detail": self.detail}


def differences(a: ResolvedRun, b: ResolvedRun, lookup: Lookup) -> list[Difference]:
    """Every part of the comparability key in which ``a`` and ``b`` differ ([] if none)."""
    found: list[Difference] = []
    if a.workload_digest != b.workload_digest:
        detail = _spec_detail(
            lookup(a.workload_digest, "Workload"),
            lookup(b.workload_digest, "Workload"),
            a.workload_digest,
            b.workload_digest,
            strip=(f"{PARAMETERS_KEY}.",),
        )
        found.append(Difference("workload", detail))
    if a.protocol_digest != b.protocol_digest:
        pa = lookup(a.protocol_digest, "BenchmarkProtocol")
        pb = lookup(b.protocol_digest, "BenchmarkProtocol")
        detail = _spec_detail(pa, pb, a.protocol_digest, b.protocol_digest)
        if a.protocol_name and b.protocol_name and a.protocol_name != b.protocol_name:
            detail = f"{a.protocol_name} vs {b.protocol_name}: {detail}"
        found.append(Difference("protocol", detail))
    if a.hardware != b.hardware:
        if a.gpu != b.gpu:
            detail = f"{a.gpu} vs {b.gpu}"
        else:
            ea = lookup(a.environment_digest, "ExecutionEnvironment")
            eb = lookup(b.environment_digest, "ExecutionEnvironment")
            detail = _spec_detail(
                {SPEC_KEY: ea[SPEC_KEY][HARDWARE_KEY]} if ea else None,
                {SPEC_KEY: eb[SPEC_KEY][HARDWARE_KEY]} if eb else None,
                a.environment_digest,
                b.environment_digest,
            )
        found.append(Difference("environment hardware", detail))
    if a.metric != b.metric:
        found.append(
            Difference(
                "metric",
                f"{METRIC_NAMES.get(a.metric, a.metric)} vs {METRIC_NAMES.get(b.metric, b.metric)}",
            )
        )
    return found


@attrs.frozen
class Explanation:
    """The groups a selection fell into, each compared with the first."""

    groups: tuple[Group, ...]
    #: differences[i]: how group i differs from group 0 ([] for group 0).
    differences: tuple[tuple[Difference, ...], ...]

    @property
    def comparable(self) -> bool:
        return len(self.groups) <= 1


def explain(comparison: Comparison, lookup: Lookup) -> Explanation:
    """How each group of a selection differs from the first one."""
    groups = comparison.groups
    if not groups:
        return Explanation((), ())
    first = groups[0].first
    diffs = tuple(tuple(differences(first, g.first, lookup)) for g in groups)
    return Explanation(groups, diffs)


def _spec_detail(
    a: Mapping[str, Any] | None,
    b: Mapping[str, Any] | None,
    digest_a: str,
    digest_b: str,
    strip: tuple[str, ...] = (),
) -> str:
    if a is None or b is None:
        return f"{short_digest(digest_a)} vs {short_digest(digest_b)}"
    left, right = dict(_leaves(a[SPEC_KEY])), dict(_leaves(b[SPEC_KEY]))
    changes = []
    for path in sorted(set(left) | set(right), key=_path_order):
        va, vb = left.get(path, _ABSENT), right.get(path, _ABSENT)
        if not _same(va, vb):
            name = path
            for prefix in strip:
                name = name.removeprefix(prefix)
            changes.append(f"{name} {_text(va)} vs {_text(vb)}")
    if not changes:  # equal specs cannot have different digests; say what we know
        return f"{short_digest(digest_a)} vs {short_digest(digest_b)}"
    if len(changes) > MAX_DETAILS:
        more = len(changes) - MAX_DETAILS
        changes = [*changes[:MAX_DETAILS], f"and {more} more"]
    return "; ".join(changes)


class _Absent:
    def __repr__(self) -> str:
        return "—"


_ABSENT: Final = _Absent()

#: Fields shown first: what a person recognises a record by.
_FIRST: Final = (KERNEL_KEY, PASS_KEY, DTYPE_KEY, PROVIDER_KEY, f"{HARNESS_KEY}.{NAME_KEY}")


def _path_order(path: str) -> tuple[int, str]:
    return (_FIRST.index(path) if path in _FIRST else len(_FIRST), path)


def _leaves(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, Mapping) and value:
        for key, sub in value.items():
            yield from _leaves(sub, f"{prefix}{key}.")
    else:
        yield prefix.rstrip("."), value


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON: ``1 == 1.0`` (JCS writes both as 1) but ``true != 1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return bool(a == b)


def _text(value: Any) -> str:
    if value is _ABSENT:
        return "—"
    return show_value(value)
