"""Plots a kernel author would not redraw by hand (issue #32): log₂ axes for doubling
sweeps, a word for panels where nothing passed, points (never lines) across categories,
problems never joined into a sweep, and the speed-up view for a suite of problems.

Assertions are on the plot's structure — axis scales, tick labels, artist types — not
on pixels. Real data (Liger's CSV, nvbench's sample, KernelBench's timings) comes from
``shared/`` and skips cleanly without it; small fixtures cover the same rules everywhere.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest
from click.testing import CliRunner

from kernelindex_sdk.cli.app import cli
from kernelindex_sdk.compare import find_sweeps, group_runs, load_records, panels, resolve_runs
from kernelindex_sdk.compare.speedups import no_sweeps, speedup_panels
from kernelindex_sdk.compare.sweeps import Failure, Panel, Point, Series
from tests.shared_data import require

pytest.importorskip("matplotlib")

from matplotlib.collections import PolyCollection
from matplotlib.container import BarContainer, ErrorbarContainer
from matplotlib.figure import Figure

from kernelindex_sdk.compare.plot import (
    _draw,
    _draw_speedups,
    _log_y,
    _title,
    powers_of_two,
    render_speedups,
)

EXAMPLES = Path(__file__).resolve().parent / "examples" / "compare"


def comparison_of(*paths: Path, kernels: tuple[str, ...] = ()) -> Any:
    from kernelindex_sdk.compare import select

    loaded = load_records([str(p) for p in paths])
    runs, _ = resolve_runs(loaded.index)
    return group_runs(select(runs, kernels=kernels) if kernels else runs)


def drawn(panel: Panel) -> Any:
    """The panel drawn on a fresh axis, as ``render`` draws it."""
    ax = Figure().add_subplot()
    labels = {s.label: f"C{i}" for i, s in enumerate(panel.series)}
    _draw(ax, panel, labels, _title(panel), _log_y([panel]))
    return ax


def joined_lines(ax: Any) -> list[Any]:
    """Lines that join two or more points (what a category axis must never have)."""
    return [
        line
        for line in ax.get_lines()
        if len(line.get_xdata()) > 1 and line.get_linestyle() not in ("None", "none", "")
    ]


def imported(tmp_path: Path, source: str, data: Path) -> Path:
    out = tmp_path / source
    result = CliRunner().invoke(cli, ["import", source, str(data), "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    return out


def sweep_panel() -> Panel:
    found, _ = panels(comparison_of(EXAMPLES / "sweep"))
    return found[0]


# --------------------------------------------------------------------------- log₂ sweeps


def test_power_of_two_rule() -> None:
    assert powers_of_two([1024.0, 2048.0, 4096.0, 8192.0, 16384.0])  # span 16×: still log₂
    assert powers_of_two([64.0, 256.0, 1024.0])
    assert not powers_of_two([1024.0, 2048.0])  # two points: no sweep to space out
    assert not powers_of_two([1000.0, 2000.0, 4000.0])
    assert not powers_of_two([256.0, 512.0, 768.0])


def test_doubling_sweep_gets_a_log2_axis_ticked_at_its_values() -> None:
    panel = sweep_panel()
    run = panel.series[0].points[0].run
    xs = (1024, 2048, 4096, 8192, 16384)  # Llama-4 RoPE's seq: 16×, under the 20× span rule
    points = tuple(Point(x, 1e5 + 10.0 * x, None, None, run) for x in xs)
    rope = attrs.evolve(
        panel, x_name="seq", x_values=xs, series=(Series("sha256:x", "hf", True, points, ()),)
    )
    ax = drawn(rope)
    assert ax.get_xscale() == "log"
    assert ax.xaxis.get_transform().base == 2
    assert [t.get_text() for t in ax.get_xticklabels()] == [str(x) for x in xs]


def test_liger_llama4_rope_is_drawn_on_log2_axes(tmp_path: Path) -> None:
    records = imported(tmp_path, "liger", require("liger", "all_benchmark_data.csv"))
    found, _ = panels(comparison_of(records, kernels=("llama4_rope",)))
    seq = [p for p in found if p.x_name == "seq"]
    assert seq
    for panel in seq:
        ax = drawn(panel)
        assert ax.get_xscale() == "log" and ax.xaxis.get_transform().base == 2
        ticks = [t.get_text() for t in ax.get_xticklabels()]
        assert ticks == ["1024", "2048", "4096", "8192", "16384"]


# --------------------------------------------------------------------------- nothing passed


def test_panel_whose_runs_were_all_skipped_says_so() -> None:
    panel = sweep_panel()
    run = panel.series[0].points[0].run
    failures = tuple(Failure(x, "skipped", "no GPU", run) for x in panel.x_values)
    skipped = attrs.evolve(panel, series=(Series("sha256:x", "hf", True, (), failures),))
    ax = drawn(skipped)
    assert "all runs skipped" in [t.get_text() for t in ax.texts]
    assert list(ax.get_yticks()) == []  # no −0.04…0.04 axis
    mixed = attrs.evolve(
        skipped,
        series=(
            Series(
                "sha256:x", "hf", True, (), (*failures[:1], attrs.evolve(failures[1], status="oom"))
            ),
        ),
    )
    assert "no run passed (oom ×1, skipped ×1)" in [t.get_text() for t in drawn(mixed).texts]


# --------------------------------------------------------------------------- categories


def test_nvbench_categories_are_points_never_lines(tmp_path: Path) -> None:
    records = imported(tmp_path, "nvbench", require("nvbench", "test_ref.json"))
    found, _ = panels(comparison_of(records))
    categorical = [p for p in found if p.categorical and any(s.points for s in p.series)]
    assert any(p.x_name == "in" for p in categorical)  # T = F32, F64, I16 …
    for panel in categorical:
        ax = drawn(panel)
        assert joined_lines(ax) == [], panel.title
        assert any(isinstance(c, ErrorbarContainer) for c in ax.containers)
        assert not any(isinstance(c, PolyCollection) for c in ax.collections)  # no band
    numeric = [p for p in found if not p.categorical and len(p.x_values) > 2]
    assert numeric and all(joined_lines(drawn(p)) for p in numeric)  # real sweeps: lines
    skipped = [p for p in found if not any(s.points for s in p.series)]
    assert skipped and all("all runs skipped" in [t.get_text() for t in drawn(p).texts]
                           for p in skipped)  # fmt: skip


def test_problem_numbers_are_never_a_sweep() -> None:
    points = [{"level": 2, "problem": 33, "dtype": "x"}, {"level": 2, "problem": 39, "dtype": "x"}]
    sweeps, leftover = find_sweeps(points)
    assert sweeps == [] and leftover == [0, 1]
    # A real size along with them still sweeps.
    shapes = [{"problem": 1, "n": 64}, {"problem": 1, "n": 128}]
    assert [s.name for s in find_sweeps(shapes)[0]] == ["n"]


def test_kernelbench_problems_sharing_a_stem_are_two_categories(tmp_path: Path) -> None:
    records = imported(tmp_path, "kernelbench", require("kernelbench", "H100_Modal"))
    found, _ = panels(comparison_of(records, kernels=("gemm_scale_batchnorm",)))
    assert len(found) == 1
    [panel] = found
    assert panel.categorical and panel.x_name is None
    assert [str(x) for x in panel.x_values] == ["problem=33", "problem=39"]
    assert joined_lines(drawn(panel)) == []


# --------------------------------------------------------------------------- speed-ups


def test_speedup_panels_sort_problems_and_reuse_the_summary() -> None:
    comparison = comparison_of(EXAMPLES / "sweep")
    [panel] = [p for p in speedup_panels(comparison) if p.summary.metric == "latency"]
    ratios = [e.ratio for e in panel.entries]
    assert ratios == sorted(ratios) and len(ratios) == panel.summary.workloads
    ax = Figure().add_subplot()
    _draw_speedups(ax, panel, named=True)
    [bars] = [c for c in ax.containers if isinstance(c, BarContainer)]
    assert len(bars) == len(ratios)
    assert ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_xticklabels()] == [e.name for e in panel.entries]
    assert "speed-up" in ax.get_ylabel()
    # A narrow range (here under 4×) still gets ticks to read it by, not just 1×.
    low, high = min(min(ratios), 1.0), max(max(ratios), 1.0)
    assert high / low < 4
    ticks = [t for t in ax.get_yticks() if low / 1.05 <= t <= high * 1.05]
    assert 1.0 in ticks and len(ticks) >= 3


def test_kernelbench_set_is_drawn_as_speedups_per_gpu(tmp_path: Path) -> None:
    records = imported(tmp_path, "kernelbench", require("kernelbench", "H100_Modal"))
    comparison = comparison_of(records)
    found, _ = panels(comparison)
    assert len(found) > 60 and no_sweeps(found)
    [panel] = speedup_panels(comparison)  # one GPU, one implementation over torch
    assert len(panel.entries) == panel.summary.workloads > 200
    names = [e.name for e in panel.entries]
    assert len(set(names)) == len(names)  # problems sharing a stem stay apart
    ax = Figure().add_subplot()
    _draw_speedups(ax, panel, named=False)
    assert list(ax.get_xticks()) == []
    corner = [t.get_text() for t in ax.texts]
    assert panel.entries[0].name in corner[0] and panel.entries[-1].name in corner[1]

    target = tmp_path / "kb.png"
    result = CliRunner().invoke(cli, ["compare", str(records), "--plot", str(target)])
    assert result.exit_code == 0, result.stderr
    assert "drawing the speed-up per problem instead (--plot-speedups)" in result.stderr
    assert f"wrote {target} (1 panel)" in result.stderr


def test_plot_speedups_option(tmp_path: Path) -> None:
    target = tmp_path / "s.svg"
    args = ["compare", str(EXAMPLES / "sweep"), "--plot", str(target), "--plot-speedups"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.stderr
    assert "speed-up" in target.read_text(encoding="utf-8")
    lonely = CliRunner().invoke(cli, ["compare", str(EXAMPLES / "sweep"), "--plot-speedups"])
    assert lonely.exit_code == 2 and "--plot-speedups needs --plot FILE" in lonely.stderr
    both = CliRunner().invoke(cli, [*args, "--plot-ratios"])
    assert both.exit_code == 2 and "give one" in both.stderr
    with pytest.raises(Exception, match="nothing to plot"):
        render_speedups([], str(tmp_path / "x.png"))
