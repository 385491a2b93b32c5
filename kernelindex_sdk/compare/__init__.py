"""Comparing runs: only across comparable ones, with speed-ups and plots.

The pipeline, each step its own module (the CLI ``kernelindex compare`` strings them
together; a notebook can too)::

    from kernelindex_sdk import compare

    loaded = compare.load(["imported/"])                  # validated, runs resolved
    chosen = compare.select(loaded.candidate.runs, kernels=["geglu"])  # filters
    result = compare.group_runs(chosen)                   # groups, newest, ratios
    REPORTERS["compare", "markdown"](sys.stdout).write(result)  # kernelindex_sdk.cli.report
    summaries = compare.summarize(result, [1.0, 1.5])     # per GPU, metric, implementation
    panels, _ = compare.panels(result)                    # sweeps found
    compare.plot.render(panels, "geglu.png")              # needs matplotlib
    speedups = compare.speedup_panels(result)             # per problem, sorted (a suite)
    compare.plot.render_speedups(speedups, "suite.png")

:func:`load` reads a set of runs, or with a reference set both (each walked once);
:func:`load_records` and :func:`resolve_runs` are its two steps for one set.

Before/after (``kernelindex compare --against``): :func:`before_after` pairs a
candidate set with a reference set and judges each pair from the noise each run
records (:mod:`~kernelindex_sdk.compare.noise`); :func:`gate` turns the verdicts into
an exit status.

The comparability rule is in :mod:`~kernelindex_sdk.compare.runs`; grouping, the
newest-run choice and ratios in :mod:`~kernelindex_sdk.compare.grouping`; summaries
(geometric-mean speed-up, ``fast_p``) in :mod:`~kernelindex_sdk.compare.summary`; the sweep
rule for plots in :mod:`~kernelindex_sdk.compare.sweeps`; the speed-up-per-problem view
of a suite in :mod:`~kernelindex_sdk.compare.speedups`. matplotlib is imported only
by :mod:`~kernelindex_sdk.compare.plot`, and only when it draws. The answers are data;
writing them as text, Markdown, JSON or CSV is the output formats' job
(:mod:`kernelindex_sdk.cli.report`), as each command writes them.
"""

from __future__ import annotations

from kernelindex_sdk.compare.beforeafter import BeforeAfter, Pair, before_after, gate
from kernelindex_sdk.compare.explain import Difference, Explanation, differences, explain
from kernelindex_sdk.compare.grouping import (
    REFERENCE_PROVIDERS,
    Comparison,
    Group,
    Row,
    group_runs,
    select,
)
from kernelindex_sdk.compare.inventory import Inventory, take_inventory
from kernelindex_sdk.compare.loading import Loaded, Side, load
from kernelindex_sdk.compare.noise import Noise, noise_of
from kernelindex_sdk.compare.records import LoadResult, RecordIndex, load_records
from kernelindex_sdk.compare.runs import (
    ComparabilityKey,
    ResolvedRun,
    hardware_identity,
    resolve_runs,
)
from kernelindex_sdk.compare.speedups import SpeedupPanel, speedup_panels
from kernelindex_sdk.compare.summary import Summary, summarize, summarize_pairs
from kernelindex_sdk.compare.sweeps import Panel, find_sweeps, panels

__all__ = [
    "REFERENCE_PROVIDERS",
    "BeforeAfter",
    "ComparabilityKey",
    "Comparison",
    "Difference",
    "Explanation",
    "Group",
    "Inventory",
    "LoadResult",
    "Loaded",
    "Noise",
    "Pair",
    "Panel",
    "RecordIndex",
    "ResolvedRun",
    "Row",
    "Side",
    "SpeedupPanel",
    "Summary",
    "before_after",
    "differences",
    "explain",
    "find_sweeps",
    "gate",
    "group_runs",
    "hardware_identity",
    "load",
    "load_records",
    "noise_of",
    "panels",
    "resolve_runs",
    "select",
    "speedup_panels",
    "summarize",
    "summarize_pairs",
    "take_inventory",
]
