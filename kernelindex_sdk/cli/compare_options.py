"""What ``compare`` and ``compare --against`` share: their options as plain data, their
formats, and how they load their inputs and speak on standard error.

Both commands' modules (:mod:`~kernelindex_sdk.cli.compare_cmd`, which parses, and
:mod:`~kernelindex_sdk.cli.beforeafter_cmd`, which it hands ``--against`` to) import
this one, and neither imports the other back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final, TextIO

import attrs

from kernelindex_sdk.base.metrics import METRIC_ALIASES
from kernelindex_sdk.cli.report import formats
from kernelindex_sdk.compare.beforeafter import PAIR_BY

if TYPE_CHECKING:
    from kernelindex_sdk.base.progress import Progress
    from kernelindex_sdk.compare.loading import Loaded

#: Metric names on the command line → as the records name them (one definition:
#: :mod:`kernelindex_sdk.base.metrics`).
METRICS: Final = METRIC_ALIASES
#: Plain ``compare``'s formats.
FORMATS: Final = formats("compare")
#: ``compare --against``'s formats: plain ``compare``'s and the CI formats.
GATE_FORMATS: Final = formats("compare --against")


@attrs.frozen
class CompareOptions:
    """Everything ``compare`` was asked to do, as plain data."""

    paths: tuple[str, ...]
    baseline: str | None = None
    kernels: tuple[str, ...] = ()
    passes: tuple[str, ...] = ()
    gpus: tuple[str, ...] = ()
    #: ``speed`` and/or ``memory``.
    metrics: tuple[str, ...] = ()
    #: ``KEY=VALUE`` conditions on the workload's parameters or dtype (``--where``).
    wheres: tuple[str, ...] = ()
    format: str = "text"
    show_all: bool = False
    #: One table per workload shape instead of one per sweep.
    by_shape: bool = False
    explain: bool = False
    plot: str | None = None
    #: Under each plot panel, the ratio over the baseline against x.
    plot_ratios: bool = False
    #: Draw the speed-up per problem, sorted, one panel per GPU, instead of sweeps.
    plot_speedups: bool = False
    #: Draw a progress bar: None = only when stderr is a terminal.
    progress: bool | None = None
    #: One summary per GPU, metric and implementation instead of the tables.
    summary: bool = False
    #: ``fast_p`` thresholds of the summary (empty: the default, 1).
    fast_p: tuple[float, ...] = ()
    # --- before/after (--against), run by kernelindex_sdk.cli.beforeafter_cmd.
    #: The reference paths; the candidate is ``paths``. Empty: plain compare.
    against: tuple[str, ...] = ()
    #: A change below this is ``same`` (``5%`` or ``0.05``).
    threshold: str = "5%"
    #: Verdicts that fail the gate (comma-separated values allowed).
    fail_on: tuple[str, ...] = ("slower",)
    #: ``lineage`` (provider, package, entry point, backend) or ``exact`` (digest).
    pair_by: str = PAIR_BY[0]
    # --- end before/after


def say_to(err: TextIO) -> Callable[[str], None]:
    """What the commands say: ``kernelindex compare: MESSAGE``, one line on ``err``."""
    from kernelindex_sdk.base.escaping import one_line

    def say(message: str) -> None:
        err.write(one_line(f"kernelindex compare: {message}") + "\n")

    return say


def load_inputs(options: CompareOptions, err: TextIO) -> Loaded:
    """The library's :func:`~kernelindex_sdk.compare.loading.load` of the paths (and
    the ``--against`` reference): each problem on ``err`` as ``validate`` words it, and
    a progress bar there (``--progress``; by default on a terminal only) of the bytes
    read, per side with ``--against``."""
    from kernelindex_sdk.base.progress import Progress
    from kernelindex_sdk.cli.report.validate import format_problem
    from kernelindex_sdk.compare.loading import load
    from kernelindex_sdk.errors import Problem

    def bar(side: str, total: int | None) -> Progress:
        label = f"compare: loading {side} bytes" if options.against else "compare: loading bytes"
        return Progress(total, label=label, stream=err, enabled=options.progress)

    def problem(found: Problem) -> None:
        err.write(format_problem(found) + "\n")

    return load(options.paths, options.against or None, on_problem=problem, progress=bar)
