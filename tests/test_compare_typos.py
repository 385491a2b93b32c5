"""Mistyped filter values are usage errors naming what is there (issue #28).

``--kernel gelgu`` used to say only "no run matches the filters"; ``--baseline
huggingfce`` exited 0 with every ratio n/a; ``--metric latency`` was refused although
the reports call the metric latency. Unit tests of :mod:`kernelindex_sdk.compare.filters`
and :mod:`kernelindex_sdk.base.metrics`, then the command in-process and as a real
process (on the shared Liger CSV when present).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import shared_data
from click.testing import CliRunner

from kernelindex_sdk.base import metrics
from kernelindex_sdk.cli.app import cli
from kernelindex_sdk.compare import filters, records, runs

EXAMPLES = Path(__file__).resolve().parent / "examples" / "compare"


def ex(name: str) -> str:
    return str(EXAMPLES / name)


def resolved(*names: str) -> tuple[list[runs.ResolvedRun], runs.Resolver]:
    loaded = records.load_records([ex(n) for n in names])
    return runs.resolve_runs(loaded.index)


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


# --------------------------------------------------------------------------- library


def test_closest_ignores_case_and_separators() -> None:
    assert filters.closest("gelgu", ["geglu", "swiglu", "rms_norm"]) == ("geglu",)
    assert filters.closest("RMS-NORM", ["geglu", "rms_norm"]) == ("rms_norm",)
    assert filters.closest("zzzz", ["geglu", "swiglu"]) == ()


def test_unmatched_finds_each_typo_and_only_typos() -> None:
    found, resolver = resolved("two-implementations", "not-comparable")
    names = resolver.gpu_names()
    assert filters.unmatched(found, kernels=["geglu", "swiglu"], gpus=["h100", "a100"]) == []
    assert filters.unmatched(found, baselines=["huggingface", "liger"], gpu_names=names) == []
    typos = filters.unmatched(
        found,
        kernels=["gelgu", "geglu"],
        gpus=["h10O"],
        baselines=["huggingfce"],
        gpu_names=names,
    )
    assert [(t.filter, t.value) for t in typos] == [
        ("kernel", "gelgu"),
        ("baseline", "huggingfce"),
        ("gpu", "h10O"),
    ]
    kernel, baseline, gpu = typos
    assert kernel.closest == ("geglu",) and "swiglu" in kernel.present
    assert baseline.closest == ("huggingface",)
    assert gpu.closest == ("H100",)
    assert str(kernel) == "--kernel 'gelgu' matches nothing in the input; did you mean 'geglu'?"


def test_an_unmatched_value_with_nothing_close_lists_what_is_present() -> None:
    found, _ = resolved("two-implementations", "not-comparable")
    (typo,) = filters.unmatched(found, kernels=["zzzz"])
    assert typo.closest == ()
    assert str(typo) == "--kernel 'zzzz' matches nothing in the input; present: geglu, swiglu"


def test_metric_words_have_one_definition() -> None:
    """Every alias names a metric the reports can name; the CLI takes exactly them."""
    import importlib

    from kernelindex_sdk.cli.compare_options import METRICS

    explain, grouping, report = (
        importlib.import_module(f"kernelindex_sdk.{name}")
        for name in ("compare.explain", "compare.grouping", "cli.report.comparison")
    )

    assert METRICS is metrics.METRIC_ALIASES
    assert set(metrics.METRIC_ALIASES.values()) == {metrics.LATENCY, metrics.PEAK_MEMORY}
    assert metrics.METRIC_ALIASES["latency"] == metrics.METRIC_ALIASES["speed"] == "latency"
    assert metrics.METRIC_ALIASES["memory"] == "peak_memory"
    assert "throughput" not in metrics.METRIC_ALIASES
    # The modules that name metrics import the one definition rather than spell it again.
    assert runs.LATENCY is metrics.LATENCY
    assert explain.METRIC_NAMES is metrics.METRIC_NAMES
    assert grouping.RATIO_NAMES is metrics.RATIO_NAMES
    assert report.RATIO_KINDS is metrics.RATIO_KINDS and report.BASE_UNITS is metrics.BASE_UNITS


# --------------------------------------------------------------------------- the command


@pytest.mark.parametrize(
    ("option", "value", "suggestion"),
    [
        ("--kernel", "gelgu", "'geglu'"),
        ("--gpu", "h10O", "'H100'"),
        ("--baseline", "huggingfce", "'huggingface'"),
    ],
)
def test_a_typo_is_a_usage_error_naming_the_closest(
    option: str, value: str, suggestion: str
) -> None:
    code, out, err = invoke("compare", ex("two-implementations"), option, value)
    assert code == 2 and out == ""
    assert err == (
        f"kernelindex compare: {option} {value!r} matches nothing in the input;"
        f" did you mean {suggestion}?\n"
    )


def test_every_typo_is_named_at_once() -> None:
    code, _, err = invoke(
        "compare", ex("two-implementations"), "--kernel", "gelgu", "--baseline", "hf"
    )
    assert code == 2
    assert len(err.splitlines()) == 2 and "--kernel 'gelgu'" in err and "--baseline 'hf'" in err


def test_values_that_exist_but_select_nothing_together_are_not_typos() -> None:
    code, out, err = invoke("compare", ex("not-comparable"), "--kernel", "swiglu", "--gpu", "h100")
    assert code == 1 and out == ""
    assert "no run matches the filters" in err


def test_metric_latency_is_speed() -> None:
    latency = invoke("compare", ex("memory"), ex("oom"), "--metric", "latency")
    speed = invoke("compare", ex("memory"), ex("oom"), "--metric", "speed")
    assert latency == speed and latency[0] == 0
    assert "latency" in latency[1] and "peak memory" not in latency[1]
    assert (
        invoke("compare", ex("memory"), "--metric", "peak_memory")[1]
        == (invoke("compare", ex("memory"), "--metric", "memory")[1])
    )
    assert invoke("compare", ex("memory"), "--metric", "throughput")[0] == 2


# The same typos in process are the quick cases; this one reads the whole shared CSV.
@pytest.mark.slow
def test_typos_in_a_real_process_on_the_liger_csv(tmp_path: Path) -> None:
    """The issue's own examples, on the imported Liger CSV, through the real entry point."""
    csv_path = shared_data.require("liger", "all_benchmark_data.csv")
    kernelindex = [sys.executable, "-m", "kernelindex_sdk.cli.main"]
    imported = [*kernelindex, "import", "liger", str(csv_path), "--out", str(tmp_path)]
    subprocess.run([*imported, "--layout", "jsonl"], check=True, capture_output=True)
    for option, value, suggestion in (
        ("--kernel", "gelgu", "did you mean 'geglu'"),
        ("--baseline", "huggingfce", "did you mean 'huggingface'"),
    ):
        proc = subprocess.run(
            [*kernelindex, "compare", str(tmp_path), option, value],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert proc.returncode == 2 and proc.stdout == ""
        assert suggestion in proc.stderr and "Traceback" not in proc.stderr
    proc = subprocess.run(
        [*kernelindex, "compare", str(tmp_path), "--kernel", "geglu", "--metric", "latency",
         "--gpu", "a100", "--pass", "forward"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("GeGLU MLP [geglu] · forward · latency · NVIDIA A100")
