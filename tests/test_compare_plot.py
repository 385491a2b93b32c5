"""``compare --plot``: drawn with matplotlib when installed, a clear message when not.

Tests that draw skip cleanly without matplotlib (the ``plot`` extra); the
"not installed" path is tested everywhere by hiding matplotlib from the import system.
"""

from __future__ import annotations

import builtins
import io
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kernelindex_sdk.cli.app import cli
from kernelindex_sdk.cli.compare_cmd import run_compare
from kernelindex_sdk.cli.compare_options import CompareOptions
from kernelindex_sdk.compare import group_runs, load_records, panels, resolve_runs
from kernelindex_sdk.compare.plot import (
    INSTALL_HINT,
    MAX_PANELS,
    PlotError,
    PlotUnavailable,
    render,
    require_matplotlib,
)

EXAMPLES = Path(__file__).resolve().parent / "examples" / "compare"
PNG = b"\x89PNG\r\n\x1a\n"


def sweep_panels() -> list[Any]:
    loaded = load_records([str(EXAMPLES / "sweep")])
    runs, _ = resolve_runs(loaded.index)
    found, _ = panels(group_runs(runs))
    return found


@pytest.fixture
def no_matplotlib(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``import matplotlib`` fail as it does where the extra is not installed."""
    real_import = builtins.__import__

    def fake_import(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    for module in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setattr(builtins, "__import__", fake_import)


# --------------------------------------------------------------------------- without matplotlib


def test_require_matplotlib_names_the_extra(no_matplotlib: None) -> None:
    with pytest.raises(PlotUnavailable) as caught:
        require_matplotlib()
    assert INSTALL_HINT in str(caught.value)
    assert "pip install matplotlib" in str(caught.value)


def test_plot_option_without_matplotlib_says_how_to_install(
    no_matplotlib: None, tmp_path: Path
) -> None:
    out, err = io.StringIO(), io.StringIO()
    target = tmp_path / "plot.png"
    code = run_compare(
        CompareOptions((str(EXAMPLES / "sweep"),), plot=str(target)), out=out, err=err
    )
    assert code == 2
    assert "pip install matplotlib" in err.getvalue()
    assert "Traceback" not in err.getvalue()
    assert out.getvalue() == "" and not target.exists()


def test_compare_without_plot_never_imports_matplotlib(no_matplotlib: None) -> None:
    out = io.StringIO()
    assert run_compare(CompareOptions((str(EXAMPLES / "sweep"),)), out=out, err=io.StringIO()) == 0
    assert "matplotlib" not in sys.modules


def test_bad_plot_suffix_is_a_usage_error(tmp_path: Path) -> None:
    err = io.StringIO()
    options = CompareOptions((str(EXAMPLES / "sweep"),), plot=str(tmp_path / "plot.jpeg"))
    assert run_compare(options, out=io.StringIO(), err=err) == 2
    assert "must end in .png, .svg, .pdf" in err.getvalue()


# --------------------------------------------------------------------------- drawing


def test_render_png_and_svg(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    found = sweep_panels()
    render(found, str(tmp_path / "sweep.png"))
    assert (tmp_path / "sweep.png").read_bytes().startswith(PNG)
    render(found, str(tmp_path / "sweep.svg"))
    svg = (tmp_path / "sweep.svg").read_text(encoding="utf-8")
    assert "<svg" in svg
    # Titles, axis labels (with units), legend and the oom marker are all drawn as text.
    for text in ("GeGLU MLP", "latency (µs)", "huggingface (baseline)", "liger 0.5.0", "oom"):
        assert text in svg or text.replace(" ", "&#160;") in svg, text


def test_render_refuses_nothing_and_too_much(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    with pytest.raises(PlotError, match="nothing to plot"):
        render([], str(tmp_path / "x.png"))
    found = sweep_panels()
    with pytest.raises(PlotError, match="too many"):
        render(found * (MAX_PANELS // 2 + 1), str(tmp_path / "x.png"))


def test_plot_via_cli(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    target = tmp_path / "out.png"
    result = CliRunner().invoke(
        cli, ["compare", str(EXAMPLES / "sweep"), "--plot", str(target)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.stderr
    assert target.read_bytes().startswith(PNG)
    assert f"wrote {target} (2 panels)" in result.stderr
    assert "4 groups, 8 runs" in result.stdout  # the table is printed too


def test_axes_units_and_log_scales() -> None:
    pytest.importorskip("matplotlib")
    import attrs
    from matplotlib.figure import Figure

    from kernelindex_sdk.compare.plot import _draw, _log_y, _title
    from kernelindex_sdk.compare.sweeps import Point, Series

    [seq, _] = sweep_panels()
    ax = Figure().add_subplot()
    _draw(ax, seq, {"huggingface": "C0", "liger 0.5.0": "C1"}, _title(seq), _log_y([seq]))
    # seq doubles (1024, 2048, 4096): a log₂ axis at those values, however small the span.
    assert ax.get_yscale() == "linear" and ax.get_xscale() == "log"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1024", "2048", "4096"]
    assert ax.get_ylabel() == "latency (µs)" and ax.get_xlabel() == "seq"

    # Spanning decades on both axes (x powers of two), in bytes: log scales, memory units.
    run = seq.series[0].points[0].run
    points = tuple(Point(x, 1e6 * x, None, None, run) for x in (1024, 4096, 65536))
    wide = attrs.evolve(
        seq,
        metric="peak_memory",
        x_values=(1024, 4096, 65536),
        series=(Series("sha256:x", "huggingface", True, points, ()),),
    )
    ax = Figure().add_subplot()
    assert _log_y([wide]) and _log_y([seq, wide])  # one rule for a whole figure
    _draw(ax, wide, {"huggingface": "C0"}, _title(wide), _log_y([wide]))
    assert ax.get_yscale() == "log" and ax.get_xscale() == "log"
    assert ax.get_ylabel() == "peak memory (GiB)"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1024", "4096", "65536"]


def test_long_subtitles_wrap_and_are_never_cut() -> None:
    import attrs

    from kernelindex_sdk.compare.plot import SUBTITLE_WIDTH, _title

    [seq, _] = sweep_panels()
    fixed = tuple((f"settings.option_{i}", "a-long-setting-value") for i in range(8))
    long = attrs.evolve(seq, fixed=fixed)
    title = _title(long)
    lines = title.splitlines()
    assert len(lines) > 3 and all(len(line) <= SUBTITLE_WIDTH for line in lines)
    assert "…" not in title
    assert " ".join(lines).replace(" ", "") == (long.title + long.subtitle).replace(" ", "")


@pytest.mark.slow  # seconds of drawing or writing; .ci/run runs slow tests
def test_ratio_panels_are_drawn_under_each_panel(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from kernelindex_sdk.compare.plot import render

    path = tmp_path / "ratios.png"
    render(sweep_panels(), str(path), ratios=True)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    plain = tmp_path / "plain.png"
    render(sweep_panels(), str(plain))
    assert path.stat().st_size != plain.stat().st_size
