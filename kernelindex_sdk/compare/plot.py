"""Drawing panels with matplotlib: what Liger's visualizer shows, from validated records.

matplotlib is an optional extra (the ``plot`` extra) and is imported only
when a plot is drawn; without it :func:`render` raises :class:`PlotUnavailable`,
whose message says how to install it. Figures are built with
:class:`matplotlib.figure.Figure` directly, never through ``pyplot``, so nothing
global (backend, open figures) changes in a host program.

Defaults meant to be readable without options:

* one panel per sweep (see :mod:`~kernelindex_sdk.compare.sweeps`), titled by the
  kernel's display name, pass and metric, with the GPU and fixed shape underneath,
  wrapped to the panel's width (never cut);
* y in one readable unit per panel (``latency (ms)``, ``peak memory (MiB)``); along a
  numeric sweep the median as a line with markers and the run's recorded spread
  (p20–p80, or mean ± σ) as a band; on a categorical axis (dtypes, problem names) each
  implementation's median as a point with that spread as whiskers, side by side —
  categories are never joined by a line;
* a run that records no noise (collapsed quantiles, one sample: ``†`` in the tables) as
  a hollow marker, said in the legend (``no noise recorded (†)``);
* each panel its own y scale: logarithmic when its values span more than
  :data:`LOG_SPAN` ×, else linear, so a panel of close values (1.05–1.12 ms) is read
  to its own ticks; a log₂ x axis, ticked at the sweep's own values, for power-of-two
  sweeps (:func:`powers_of_two`), a log₁₀ one for other numeric sweeps spanning more
  than :data:`LOG_SPAN` ×;
* a panel in which no run passed says so (``all runs skipped``) instead of an empty
  axis, its y axis named without a unit (there is no value to have one);
* with ``ratios``, a small panel under each with the ratio over the baseline;
* each implementation one colour in every panel, the baseline first in the legend;
* runs that did not pass as an ✕ on the x axis, labelled with their status.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from kernelindex_sdk.base.installing import extra_hint
from kernelindex_sdk.base.metrics import METRIC_NAMES, RATIO_NAMES
from kernelindex_sdk.compare.noise import noise_of
from kernelindex_sdk.compare.speedups import SpeedupPanel
from kernelindex_sdk.compare.sweeps import Panel, Series
from kernelindex_sdk.compare.units import pick_unit

#: File types ``--plot`` writes, by suffix.
FORMATS: Final = (".png", ".svg", ".pdf")
#: Ratio of largest to smallest value above which an axis goes logarithmic.
LOG_SPAN: Final = 20.0
#: Most panels one figure holds: beyond, a figure is unreadable and slow to draw.
MAX_PANELS: Final = 60
#: How to get matplotlib, in forms that work: the PyPI name alone (matplotlib), or the
#: project's extra from a checkout or the wheel that ``.ci/run`` builds.
INSTALL_HINT: Final = extra_hint("plot", "matplotlib")
#: The legend's entry for a hollow marker: a run that records no noise.
NO_NOISE: Final = "no noise recorded (†)"
#: Problems a speed-up panel names on its axis; beyond, only the extremes are named.
NAMED_PROBLEMS: Final = 40
#: Problems named at each end of a speed-up panel with more than NAMED_PROBLEMS.
NAMED_EXTREMES: Final = 5
#: Ticks of a speed-up axis spanning less than 4× (ratios and their inverses).
SPEEDUP_TICKS: Final = (0.25, 0.33, 0.5, 0.67, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0, 3.0, 4.0)
#: Characters per line of a panel's title and subtitle before they wrap.
TITLE_WIDTH: Final = 60
SUBTITLE_WIDTH: Final = 66


class PlotUnavailable(Exception):
    """matplotlib is not installed."""


class PlotError(Exception):
    """The plot cannot be drawn as asked (bad file type, too many panels)."""


def require_matplotlib() -> None:
    """Raise :class:`PlotUnavailable` (with the install command) if matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401
        from matplotlib.figure import Figure  # noqa: F401
    except ImportError as error:
        raise PlotUnavailable(
            f"plotting needs matplotlib, which is not installed ({error}); "
            f"install it with: {INSTALL_HINT}"
        ) from error


def check_path(path: str) -> None:
    """Refuse a file type matplotlib would guess at (e.g. ``plot.jpeg`` or no suffix)."""
    if Path(path).suffix.lower() not in FORMATS:
        raise PlotError(f"--plot {path}: the file must end in {', '.join(FORMATS)}")


def render(panels: Sequence[Panel], path: str, *, dpi: int = 100, ratios: bool = False) -> None:
    """Draw every panel into one figure and save it to ``path`` (type from the suffix).

    ``ratios``: under each panel, a smaller one with each implementation's ratio over
    the baseline against x (a 1.02× speed-up is invisible on a latency axis).
    """
    _check_figure(
        path,
        len(panels),
        empty="no selected run has its Workload record",
        narrow="--kernel, --pass, --gpu or --metric",
    )
    with _literal_text():
        _render(panels, path, dpi, ratios)


def _literal_text() -> Any:
    """Every text drawn inside shown as written: a record's name or title holding ``$``
    is never read as mathtext (a GPU named ``A$\\frac{1}{0}$`` would be typeset, or end
    the drawing with a parse error)."""
    import matplotlib

    return matplotlib.rc_context({"text.parse_math": False})


def _render(panels: Sequence[Panel], path: str, dpi: int, ratios: bool) -> None:
    figure(panels, ratios=ratios).savefig(path, dpi=dpi)


def figure(panels: Sequence[Panel], *, ratios: bool = False) -> Any:
    """The :class:`matplotlib.figure.Figure` :func:`render` saves (matplotlib needed)."""
    from matplotlib.figure import Figure

    columns = 1 if len(panels) == 1 else 2 if len(panels) <= 4 else 3
    rows = math.ceil(len(panels) / columns)
    titles = [_title(panel) for panel in panels]
    extra_lines = max(title.count("\n") for title in titles) - 1
    height = 4.2 + 0.15 * max(0, extra_lines) + (1.4 if ratios else 0.0)
    figure = Figure(figsize=(6.0 * columns, height * rows), layout="constrained")
    colours = _colours([s.label for p in panels for s in p.series])
    if ratios:
        grid = figure.subplots(
            2 * rows, columns, squeeze=False, gridspec_kw={"height_ratios": [3, 1] * rows}
        )
        main = [[grid[2 * r][c] for c in range(columns)] for r in range(rows)]
        under = [[grid[2 * r + 1][c] for c in range(columns)] for r in range(rows)]
    else:
        main = figure.subplots(rows, columns, squeeze=False).tolist()
        under = []
    for index, panel in enumerate(panels):
        ax = main[index // columns][index % columns]
        _draw(ax, panel, colours, titles[index], _log_y([panel]))
        if ratios:
            _draw_ratios(under[index // columns][index % columns], panel, colours)
    for index in range(len(panels), rows * columns):
        main[index // columns][index % columns].set_visible(False)
        if ratios:
            under[index // columns][index % columns].set_visible(False)
    return figure


def _check_figure(path: str, count: int, *, empty: str, narrow: str) -> None:
    """Before drawing: a path the figure can be saved to, matplotlib, and between one and
    :data:`MAX_PANELS` panels (``empty`` says why there are none, ``narrow`` which
    options cut the selection down)."""
    check_path(path)
    require_matplotlib()
    if not count:
        raise PlotError(f"nothing to plot: {empty}")
    if count > MAX_PANELS:
        raise PlotError(
            f"{count} panels is too many for one figure (at most {MAX_PANELS});"
            f" narrow the selection with {narrow}"
        )


def render_speedups(panels: Sequence[SpeedupPanel], path: str, *, dpi: int = 100) -> None:
    """Draw each implementation's speed-up per problem, sorted, one panel per GPU (and
    metric, and implementation): the view for a suite of many one-shape problems.

    Bars are ``baseline ÷ implementation`` on a log₂ axis (2× and 0.5× equally far
    from 1×), above 1× in green, below in red; a line at 1× and one at the geometric
    mean. Up to :data:`NAMED_PROBLEMS` problems are named on the x axis; beyond, the
    :data:`NAMED_EXTREMES` worst and best are listed in the panel's corners.
    """
    _check_figure(
        path,
        len(panels),
        empty="no problem has a ratio over a baseline",
        narrow="--gpu or --metric",
    )
    with _literal_text():
        _render_speedups(panels, path, dpi)


def _render_speedups(panels: Sequence[SpeedupPanel], path: str, dpi: int) -> None:
    from matplotlib.figure import Figure

    widest = max(len(panel.entries) for panel in panels)
    width = min(max(6.0, 0.06 * widest + 3.0), 24.0)
    named = widest <= NAMED_PROBLEMS
    height = 4.6 + (0.07 * max(len(e.name) for p in panels for e in p.entries) if named else 0)
    figure = Figure(figsize=(width, height * len(panels)), layout="constrained")
    for ax, panel in zip(figure.subplots(len(panels), 1, squeeze=False)[:, 0], panels, strict=True):
        _draw_speedups(ax, panel, named)
    figure.savefig(path, dpi=dpi)


def _draw_speedups(ax: Any, panel: SpeedupPanel, named: bool) -> None:
    from matplotlib.ticker import FuncFormatter, NullFormatter

    ratios = [entry.ratio for entry in panel.entries]
    positions = range(len(ratios))
    colours = ["tab:green" if r > 1 else "tab:red" if r < 1 else "0.5" for r in ratios]
    positive = [max(r, 1e-9) for r in ratios]
    # Bars grow from 1× (up: faster, down: slower), on a log₂ axis.
    ax.bar(positions, [r - 1.0 for r in positive], width=0.8, color=colours, bottom=1.0)
    ax.set_yscale("log", base=2)
    low, high = min(min(positive), 1.0), max(max(positive), 1.0)
    if high / low < 4:
        # Within 4×, powers of two leave one tick (1×): finer steps, still symmetric.
        from matplotlib.ticker import FixedLocator

        ticks = [t for t in SPEEDUP_TICKS if low / 1.05 <= t <= high * 1.05]
        ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}×"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.axhline(1.0, color="0.3", linewidth=0.9)
    summary = panel.summary
    if summary.geomean:
        ax.axhline(summary.geomean, color="tab:blue", linewidth=1.0, linestyle="--",
                   label=f"geometric mean {summary.geomean:.2f}×")  # fmt: skip
        ax.legend(fontsize=8, frameon=False, loc="upper center")
    ax.set_xlim(-0.6, len(ratios) - 0.4)
    if named:
        ax.set_xticks(list(positions), labels=[e.name for e in panel.entries], rotation=90,
                      fontsize=7)  # fmt: skip
    else:
        # Too many to name on the axis: the worst and best few, listed in the corners.
        ax.set_xticks([])
        count = min(NAMED_EXTREMES, len(ratios) // 2)
        worst = [f"{e.name} {e.ratio:.2f}×" for e in panel.entries[:count]]
        best = [f"{e.name} {e.ratio:.2f}×" for e in reversed(panel.entries[-count:])]
        for lines, x, align, va in ((worst, 0.01, "left", "top"), (best, 0.99, "right", "bottom")):
            ax.text(x, 0.98 if va == "top" else 0.02, "\n".join(lines), transform=ax.transAxes,
                    ha=align, va=va, fontsize=7, color="0.25")  # fmt: skip
    ax.set_xlabel(f"problems, sorted by {RATIO_NAMES.get(summary.metric, 'ratio')}")
    ax.set_ylabel(f"{RATIO_NAMES.get(summary.metric, 'ratio')} (×)")
    faster = summary.faster_share
    share = f" · faster on {faster:.0%}" if faster is not None else ""
    metric = METRIC_NAMES.get(summary.metric, summary.metric)
    ax.set_title(f"{panel.title} · {metric}\n{summary.gpu}{share}", fontsize=9, loc="left")
    ax.grid(True, axis="y", which="major", alpha=0.3)


def _title(panel: Panel) -> str:
    """The panel's title over its subtitle (GPU, fixed shape), each wrapped to the
    panel's width — never cut, however long the fixed settings are."""
    title = textwrap.fill(panel.title, TITLE_WIDTH)
    subtitle = textwrap.fill(panel.subtitle, SUBTITLE_WIDTH, break_long_words=True)
    return f"{title}\n{subtitle}"


def _log_y(panels: Sequence[Panel]) -> bool:
    """A logarithmic y scale: when any of ``panels`` (a figure draws each panel on its
    own) has values spanning more than :data:`LOG_SPAN`."""
    for panel in panels:
        values = [
            v
            for s in panel.series
            for p in s.points
            for v in (p.value, p.p20, p.p80)
            if v is not None and v > 0
        ]
        if values and max(values) / min(values) > LOG_SPAN:
            return True
    return False


def _colours(labels: Sequence[str]) -> dict[str, Any]:
    """One colour per implementation label, the same in every panel."""
    from matplotlib import colormaps

    palette = list(getattr(colormaps["tab10"], "colors", ())) or ["C0", "C1", "C2", "C3"]
    order = list(dict.fromkeys(labels))
    return {label: palette[i % len(palette)] for i, label in enumerate(order)}


def _draw(ax: Any, panel: Panel, colours: dict[str, Any], title: str, log_y: bool) -> None:
    values = [p.value for s in panel.series for p in s.points]
    unit = pick_unit(values, panel.metric)
    positions = {x: i for i, x in enumerate(panel.x_values)}

    def at(x: Any) -> Any:
        return positions[x] if panel.categorical else x

    quiet = False
    for rank, series in enumerate(panel.series):
        label = f"{series.label} (baseline)" if series.is_baseline else series.label
        drawn = _draw_points(ax, panel, series, rank, colours[series.label], label, unit, at)
        quiet = _mark_no_noise(ax, panel, series, rank, unit, at) or quiet
        if series.failures:
            _draw_failures(ax, series, colours[series.label], None if drawn else label, at)
    if quiet:  # the legend says what a hollow marker is (the tables' †)
        ax.scatter([], [], marker="o", facecolors="white", edgecolors="0.3", label=NO_NOISE)
    if not values:
        # Nothing passed: no y axis to read, say why instead of an empty −0.04…0.04 axis.
        ax.set_yticks([])
        ax.text(0.5, 0.5, no_values_note(panel), transform=ax.transAxes, ha="center",
                va="center", fontsize=9, color="0.35")  # fmt: skip

    if log_y and any(v > 0 for v in values):
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

        # Ticks at 1, 2, 5 × 10^k written as plain numbers (0.2, not 2×10⁻¹).
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
    _x_axis(ax, panel)
    metric = METRIC_NAMES.get(panel.metric, panel.metric)
    ax.set_ylabel(f"{metric} ({unit[0]})" if values else metric)
    ax.set_title(title, fontsize=9, loc="left")
    ax.grid(True, which="major", alpha=0.3)
    if panel.series:
        ax.legend(fontsize=7.5, frameon=False)


def _draw_points(
    ax: Any,
    panel: Panel,
    series: Series,
    rank: int,
    colour: Any,
    label: str,
    unit: tuple[str, float],
    at: Callable[[Any], Any],
) -> bool:
    """One implementation's medians with their p20–p80 spread: a line over a band
    against a numeric x, a column of points with error bars beside the others' against
    categories (which have no order to join). Whether there were any."""
    xs = _xs(panel, series, rank, at)
    ys = [p.value / unit[1] for p in series.points]
    spreads = [noise_of(p.run).interval(p.value) for p in series.points]
    low = [lo / unit[1] for lo, _ in spreads]
    high = [hi / unit[1] for _, hi in spreads]
    if xs and panel.categorical:
        spread = [[y - lo for y, lo in zip(ys, low, strict=True)],
                  [hi - y for y, hi in zip(ys, high, strict=True)]]  # fmt: skip
        ax.errorbar(xs, ys, yerr=spread, fmt="o", markersize=4, capsize=2, linewidth=1.0,
                    color=colour, label=label)  # fmt: skip
    elif xs:
        ax.plot(xs, ys, marker="o", markersize=3.5, linewidth=1.6, color=colour, label=label)
        ax.fill_between(xs, low, high, color=colour, alpha=0.2, linewidth=0)
    return bool(xs)


def _xs(panel: Panel, series: Series, rank: int, at: Callable[[Any], Any]) -> list[Any]:
    """Where a series' points sit. Categories (dtypes, problem names) have no order
    between them: each implementation is a column of points, side by side."""
    if not panel.categorical:
        return [at(p.x) for p in series.points]
    width = len(panel.series)
    shift = (rank - (width - 1) / 2) * min(0.6 / width, 0.2)
    return [at(p.x) + shift for p in series.points]


def _mark_no_noise(
    ax: Any,
    panel: Panel,
    series: Series,
    rank: int,
    unit: tuple[str, float],
    at: Callable[[Any], Any],
) -> bool:
    """Hollow markers over the points of runs that record no noise (the tables' ``†``:
    their ratios cannot be told from noise); whether there were any."""
    xs = _xs(panel, series, rank, at)
    quiet = [(x, p.value / unit[1]) for x, p in zip(xs, series.points, strict=True)
             if not noise_of(p.run).known]  # fmt: skip
    if quiet:
        ax.scatter([x for x, _ in quiet], [y for _, y in quiet], marker="o", s=22,
                   facecolors="white", edgecolors="0.3", linewidths=1.0, zorder=4)  # fmt: skip
    return bool(quiet)


def _draw_failures(
    ax: Any, series: Series, colour: Any, label: str | None, at: Callable[[Any], Any]
) -> None:
    """A cross at the foot of the panel, with its status, where a run did not pass
    (``label``: the legend's entry, for an implementation with no point drawn)."""
    from matplotlib import transforms

    foot = transforms.blended_transform_factory(ax.transData, ax.transAxes)
    ax.scatter(
        [at(f.x) for f in series.failures],
        [0.0] * len(series.failures),
        marker="x",
        color=colour,
        transform=foot,
        clip_on=False,
        zorder=3,
        label=label,
    )
    for failure in series.failures:
        ax.annotate(
            failure.status,
            (at(failure.x), 0.0),
            xycoords=foot,
            xytext=(0, 6),
            textcoords="offset points",
            ha="center",
            fontsize=7,
            color=colour,
        )


def _draw_ratios(ax: Any, panel: Panel, colours: dict[str, Any]) -> None:
    """Each implementation's ratio over the baseline against x, a line at 1×."""
    positions = {x: i for i, x in enumerate(panel.x_values)}
    drawn = False
    for series in panel.series:
        if series.is_baseline:
            continue
        points = [p for p in series.points if p.ratio is not None]
        if not points:
            continue
        xs = [positions[p.x] if panel.categorical else p.x for p in points]
        ax.plot(xs, [p.ratio for p in points], marker="o", markersize=3, linewidth=1.2,
                linestyle="none" if panel.categorical else "-",
                color=colours[series.label])  # fmt: skip
        drawn = True
    ax.axhline(1.0, color="0.5", linewidth=0.8, linestyle="--")
    _x_axis(ax, panel)
    ax.set_ylabel(RATIO_NAMES.get(panel.metric, "ratio") + " (×)", fontsize=8)
    ax.grid(True, which="major", alpha=0.3)
    if not drawn:
        ax.text(0.5, 0.5, "no baseline: ratio n/a", transform=ax.transAxes, ha="center",
                va="center", fontsize=8, color="0.4")  # fmt: skip


def _x_axis(ax: Any, panel: Panel) -> None:
    name = panel.x_name or "workload"
    if panel.categorical:
        ax.set_xticks(range(len(panel.x_values)))
        labels = [str(x) for x in panel.x_values]
        rotate = sum(len(t) for t in labels) > 60
        ax.set_xticklabels(labels, rotation=30 if rotate else 0, ha="right" if rotate else "center")
        ax.set_xlim(-0.5, len(panel.x_values) - 0.5)
        ax.set_xlabel(name)
        return
    numbers = [float(x) for x in panel.x_values if not isinstance(x, (str, bool))]
    ax.set_xlabel(name)
    if not numbers or min(numbers) <= 0:
        return
    if powers_of_two(numbers):
        ax.set_xscale("log", base=2)
    elif max(numbers) / min(numbers) > LOG_SPAN:
        ax.set_xscale("log", base=10)
    else:
        return
    from matplotlib.ticker import FixedLocator, NullLocator

    # The sweep's own values as ticks (1024 … 16384, not 10³ or 2¹⁰); every other one
    # beyond a dozen, so labels never overlap.
    shown = numbers if len(numbers) <= 12 else numbers[:: math.ceil(len(numbers) / 12)]
    labels = [f"{int(n)}" if n.is_integer() else f"{n:g}" for n in shown]
    rotate = sum(len(t) for t in labels) > 40
    ax.xaxis.set_major_locator(FixedLocator(shown))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticks(shown, labels=labels, fontsize=8, rotation=30 if rotate else 0)


def powers_of_two(numbers: Sequence[float]) -> bool:
    """A doubling sweep (64, 128 … or 1024 … 16384): three or more powers of two
    spanning at least 4×, drawn on a log₂ axis so each step is the same width."""
    distinct = sorted(set(numbers))
    if len(distinct) < 3 or distinct[-1] / distinct[0] < 4:
        return False
    return all(n.is_integer() and n >= 1 and int(n) & (int(n) - 1) == 0 for n in distinct)


def no_values_note(panel: Panel) -> str:
    """What a panel without one passed run says: ``all runs skipped`` (or each status)."""
    statuses: dict[str, int] = {}
    for series in panel.series:
        for failure in series.failures:
            statuses[failure.status] = statuses.get(failure.status, 0) + 1
    if len(statuses) == 1:
        return f"all runs {next(iter(statuses))}"
    listed = ", ".join(f"{status} ×{n}" for status, n in sorted(statuses.items()))
    return f"no run passed ({listed})" if listed else "no run passed"
