"""Drawing panels with matplotlib: what Liger's visualizer shows, from validated records.

matplotlib is an optional extra (``kernelindex-sdk[plot]``) and is imported only
when a plot is drawn; without it :func:`render` raises :class:`PlotUnavailable`,
whose message says how to install it. Figures are built with
:class:`matplotlib.figure.Figure` directly, never through ``pyplot``, so nothing
global (backend, open figures) changes in a host program.

Defaults meant to be readable without options:

* one panel per sweep (see :mod:`~kernelindex_sdk.compare.sweeps`), titled by the
  kernel's display name, pass and metric, with the GPU and fixed shape underneath;
* y in one readable unit per panel (``latency (ms)``, ``peak memory (MiB)``), the
  median as a line with markers and the p20–p80 spread as a band;
* a log y axis when the values span more than :data:`LOG_SPAN` ×, a log₂ x axis for
  power-of-two sweeps spanning more than :data:`LOG_SPAN` ×;
* each implementation one colour in every panel, the baseline first in the legend;
* runs that did not pass as an ✕ on the x axis, labelled with their status.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from kernelindex_sdk.compare.explain import METRIC_NAMES
from kernelindex_sdk.compare.sweeps import Panel
from kernelindex_sdk.compare.units import pick_unit

#: File types ``--plot`` writes, by suffix.
FORMATS: Final = (".png", ".svg", ".pdf")
#: Ratio of largest to smallest value above which an axis goes logarithmic.
LOG_SPAN: Final = 20.0
#: Most panels one figure holds: beyond, a figure is unreadable and slow to draw.
MAX_PANELS: Final = 60
INSTALL_HINT: Final = "pip install 'kernelindex-sdk[plot]'"


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


def render(panels: Sequence[Panel], path: str, *, dpi: int = 100) -> None:
    """Draw every panel into one figure and save it to ``path`` (type from the suffix)."""
    check_path(path)
    require_matplotlib()
    if not panels:
        raise PlotError("nothing to plot: no selected run has its Workload record")
    if len(panels) > MAX_PANELS:
        raise PlotError(
            f"{len(panels)} panels is too many for one figure (at most {MAX_PANELS});"
            " narrow the selection with --kernel, --pass, --gpu or --metric"
        )
    from matplotlib.figure import Figure

    columns = 1 if len(panels) == 1 else 2 if len(panels) <= 4 else 3
    rows = math.ceil(len(panels) / columns)
    figure = Figure(figsize=(6.0 * columns, 4.2 * rows), layout="constrained")
    colours = _colours([s.label for p in panels for s in p.series])
    axes = figure.subplots(rows, columns, squeeze=False)
    for index, panel in enumerate(panels):
        _draw(axes[index // columns][index % columns], panel, colours)
    for index in range(len(panels), rows * columns):
        axes[index // columns][index % columns].set_visible(False)
    figure.savefig(path, dpi=dpi)


def _colours(labels: Sequence[str]) -> dict[str, Any]:
    """One colour per implementation label, the same in every panel."""
    from matplotlib import colormaps

    palette = list(getattr(colormaps["tab10"], "colors", ())) or ["C0", "C1", "C2", "C3"]
    order = list(dict.fromkeys(labels))
    return {label: palette[i % len(palette)] for i, label in enumerate(order)}


def _draw(ax: Any, panel: Panel, colours: dict[str, Any]) -> None:
    from matplotlib import transforms

    values = [p.value for s in panel.series for p in s.points]
    bands = [v for s in panel.series for p in s.points for v in (p.p20, p.p80) if v]
    unit = pick_unit(values, panel.metric)
    positions = {x: i for i, x in enumerate(panel.x_values)}

    def at(x: Any) -> Any:
        return positions[x] if panel.categorical else x

    for series in panel.series:
        colour = colours[series.label]
        label = f"{series.label} (baseline)" if series.is_baseline else series.label
        xs = [at(p.x) for p in series.points]
        ys = [p.value / unit[1] for p in series.points]
        if xs:
            ax.plot(xs, ys, marker="o", markersize=3.5, linewidth=1.6, color=colour, label=label)
            low = [(p.p20 if p.p20 is not None else p.value) / unit[1] for p in series.points]
            high = [(p.p80 if p.p80 is not None else p.value) / unit[1] for p in series.points]
            ax.fill_between(xs, low, high, color=colour, alpha=0.2, linewidth=0)
        if series.failures:
            ax.scatter(
                [at(f.x) for f in series.failures],
                [0.0] * len(series.failures),
                marker="x",
                color=colour,
                transform=transforms.blended_transform_factory(ax.transData, ax.transAxes),
                clip_on=False,
                zorder=3,
                label=None if xs else label,
            )
            for failure in series.failures:
                ax.annotate(
                    failure.status,
                    (at(failure.x), 0.0),
                    xycoords=transforms.blended_transform_factory(ax.transData, ax.transAxes),
                    xytext=(0, 6),
                    textcoords="offset points",
                    ha="center",
                    fontsize=7,
                    color=colour,
                )

    positive = [v for v in values + bands if v > 0]
    if positive and max(positive) / min(positive) > LOG_SPAN:
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

        # Ticks at 1, 2, 5 × 10^k written as plain numbers (0.2, not 2×10⁻¹).
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
    _x_axis(ax, panel)
    metric = METRIC_NAMES.get(panel.metric, panel.metric)
    ax.set_ylabel(f"{metric} ({unit[0]})")
    # Title on top, the GPU and the fixed shape in small grey type under it.
    ax.set_title(_fit(panel.title, 64) + "\n", fontsize=10, loc="left")
    ax.text(
        0.0, 1.0, _fit(panel.subtitle, 110), transform=ax.transAxes, fontsize=7.5,
        color="0.35", va="bottom", ha="left",
    )  # fmt: skip
    ax.grid(True, which="major", alpha=0.3)
    if panel.series:
        ax.legend(fontsize=7.5, frameon=False)


def _fit(text: str, width: int) -> str:
    """Cut a title that would run into the next panel."""
    return text if len(text) <= width else text[: width - 1] + "…"


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
    if not numbers or min(numbers) <= 0 or max(numbers) / min(numbers) <= LOG_SPAN:
        return
    powers_of_two = all(n.is_integer() and int(n) & (int(n) - 1) == 0 for n in numbers)
    ax.set_xscale("log", base=2 if powers_of_two else 10)
    if len(numbers) <= 12:
        from matplotlib.ticker import FixedLocator, NullLocator

        labels = [f"{int(n)}" if n.is_integer() else f"{n:g}" for n in numbers]
        rotate = sum(len(t) for t in labels) > 40
        ax.xaxis.set_major_locator(FixedLocator(numbers))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xticks(numbers, labels=labels, fontsize=8, rotation=30 if rotate else 0)
