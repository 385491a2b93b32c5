"""``kernelindex ls``'s reporters: an :class:`~kernelindex_sdk.compare.inventory.Inventory`
as text or JSON.

Only formatting. Text is one section per question (records, runs by status and
metric, passes, kernels, GPUs, providers, implementations, protocols, time, quality
flags, the noise passed runs record), one name per line with its count aligned, every
name escaped to one line; JSON is one object with the same counts, for scripts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any, Final

from kernelindex_sdk.base.escaping import one_line
from kernelindex_sdk.base.metrics import METRIC_NAMES
from kernelindex_sdk.base.wording import counted
from kernelindex_sdk.cli.report.writing import write_aligned, write_json
from kernelindex_sdk.compare.inventory import Inventory, utc_text

#: Names a text section lists before it sums up the rest (``ls --all``: every one).
LISTED: Final = 20


def _section(
    out: IO[str], title: str, counts: Mapping[str, int], listed: int | None = None
) -> None:
    """``title (N)``, then a line per name with its count, the counts right-aligned;
    past ``listed`` names, one line for the rest (the most runs first kept)."""
    if not counts:
        return
    out.write(f"{title} ({len(counts)})\n")
    names = list(counts)
    if listed is not None and len(names) > listed:
        kept = set(sorted(names, key=lambda name: -counts[name])[:listed])
        rest = [name for name in names if name not in kept]
        names = [name for name in names if name in kept]
    else:
        rest = []
    rows = [(name, str(counts[name])) for name in names]
    if rest:
        runs = sum(counts[name] for name in rest)
        rows.append(
            (f"… {counted(len(rest), 'more', 'more')} (ls --all lists every one)", str(runs))
        )
    write_aligned(out, rows, (False, True), indent="  ")


class InventoryTextReporter:
    """Sections of ``name  count`` lines, for a terminal."""

    def __init__(self, out: IO[str], *, every: bool = False) -> None:
        self.out = out
        #: Names each section lists (``None``: all of them, ``ls --all``).
        self.listed = None if every else LISTED

    def write(self, inventory: Inventory) -> None:
        out = self.out
        duplicates = (
            f" ({inventory.duplicate_runs} duplicate runs counted once)"
            if inventory.duplicate_runs
            else ""
        )
        out.write(f"records {inventory.records}{duplicates}\n")
        for kind, count in inventory.kinds.items():
            out.write(f"  {one_line(kind):<20}  {count:>{len(str(inventory.records))}}\n")
        out.write(f"runs {inventory.runs}\n")
        for title, counts in (
            ("status", inventory.statuses),
            ("metrics", {METRIC_NAMES.get(m, m): n for m, n in inventory.metrics.items()}),
            ("passes", inventory.passes),
            ("kernels", inventory.kernels),
            ("GPUs", inventory.gpus),
            ("providers", inventory.providers),
            ("implementations", inventory.implementations),
            ("protocols", inventory.protocols),
        ):
            _section(out, title, counts, self.listed)
        out.write(f"observed {_range(inventory)}\n")
        _section(out, "quality flags", inventory.quality_flags)
        _section(out, "noise (passed runs)", inventory.noise)
        _section(out, "no noise (passed runs, why)", inventory.no_noise)
        _section(out, "records not given (runs referencing them)", inventory.not_given)


def _range(inventory: Inventory) -> str:
    undated = f"{inventory.undated} undated (observed_at_unknown)" if inventory.undated else ""
    if inventory.first is None or inventory.last is None:
        return undated or "no runs"
    span = f"{utc_text(inventory.first)} – {utc_text(inventory.last)}"
    return f"{span}; {undated}" if undated else span


def inventory_json(inventory: Inventory) -> dict[str, Any]:
    """The inventory for machines: every count, times in UTC."""
    return {
        "records": inventory.records,
        "kinds": dict(inventory.kinds),
        "duplicateRuns": inventory.duplicate_runs,
        "runs": inventory.runs,
        "status": dict(inventory.statuses),
        "metrics": dict(inventory.metrics),
        "passes": dict(inventory.passes),
        "kernels": dict(inventory.kernels),
        "gpus": dict(inventory.gpus),
        "providers": dict(inventory.providers),
        "implementations": dict(inventory.implementations),
        "protocols": dict(inventory.protocols),
        "observed": {
            "first": utc_text(inventory.first),
            "last": utc_text(inventory.last),
            "undated": inventory.undated,
        },
        "qualityFlags": dict(inventory.quality_flags),
        "noise": dict(inventory.noise),
        "noNoise": dict(inventory.no_noise),
        "notGiven": dict(inventory.not_given),
    }


class InventoryJsonReporter:
    """One JSON object (:func:`inventory_json`): every name, always."""

    def __init__(self, out: IO[str], *, every: bool = False) -> None:
        self.out = out

    def write(self, inventory: Inventory) -> None:
        write_json(self.out, inventory_json(inventory))


InventoryReporter = InventoryTextReporter | InventoryJsonReporter
