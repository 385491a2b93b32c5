"""``kernelindex bench liger --set KEY=VALUE`` (issue #11): a key applies only to the kernels
whose Liger config has it, keeps the config's type, and a bad value is refused with one
line — through the SDK's strict intake, never ``json.loads``. No torch needed.
"""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples

from bench_adapters.bench_cli import BenchLigerOptions, run_bench_liger
from bench_adapters.liger_bench.catalog import load_bench_catalog
from bench_adapters.liger_bench.plan import PlanError, Request, parse_overrides, plan


def _slugs(kernels: tuple[str, ...], *sets: str) -> dict[str, set[str]]:
    items = plan(
        Request(kernels=kernels, passes=("forward",), overrides=parse_overrides(sets)),
        load_bench_catalog(),
    )
    found: dict[str, set[str]] = {}
    for item in items:
        found.setdefault(item.workload.kernel.name, set()).add(item.workload.shape.slug)
    return found


def test_a_key_applies_only_to_the_kernels_whose_config_has_it() -> None:
    plain = _slugs(("geglu", "relu_squared"))
    found = _slugs(("geglu", "relu_squared"), "bsz=2")
    assert found["relu_squared"] == plain["relu_squared"]  # ReLU² has no bsz: untouched
    assert all(slug.startswith("batch2-") for slug in found["geglu"])


def test_an_alias_never_takes_over_another_kernels_key() -> None:
    """``H`` is the distillation loss's hidden size; RoPE's stays its ``hidden_size``."""
    found = _slugs(("llama4_rope", "distill_cosine_loss"), "H=64")
    assert all("hidden8192-" in slug for slug in found["llama4_rope"])
    assert all(slug.startswith("hidden64-") for slug in found["distill_cosine_loss"])
    items = plan(
        Request(kernels=("llama4_rope",), x_values=(1024,), passes=("forward",)),
        load_bench_catalog(),
    )
    assert "hidden_size" not in items[0].workload.shape.settings


def test_text_values_and_json_values_of_the_right_type_are_taken() -> None:
    overrides = parse_overrides(
        ["hidden_act=gelu", "dtype=torch.float32", "bias=true", "weight_hard_loss=1", "M=64"]
    )
    assert overrides == {
        "hidden_act": "gelu",
        "dtype": "torch.float32",
        "bias": True,
        "weight_hard_loss": 1,
        "M": 64,
    }
    items = plan(
        Request(kernels=("geglu", "distill_cosine_loss", "relu_squared"), x_values=(8,),
                passes=("forward",), overrides=overrides),
        load_bench_catalog(),
    )  # fmt: skip
    shapes = {item.workload.kernel.name: item.workload.shape for item in items}
    assert shapes["geglu"].settings["hidden_act"] == "gelu"
    assert shapes["distill_cosine_loss"].settings["weight_hard_loss"] == 1
    assert shapes["distill_cosine_loss"].settings["bias"] is True
    assert shapes["relu_squared"].slug == "hidden8-rows64-fp32"
    assert {shape.dtype for shape in shapes.values()} == {"fp32"}


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ("bsz=NaN", "NaN is not valid JSON"),
        ("bsz=-Infinity", "-Infinity is not valid JSON"),
        ("bsz=1e400", "overflows an IEEE double"),
        ("bsz=9007199254740993", "outside ±(2**53 - 1)"),
        ("weight_hard_loss=1.00000000000000000001", "has no exact IEEE double"),
        ("bsz=" + "[" * 1000 + "]" * 1000, "nested deeper than 256 levels"),
        ("bsz=" + "[" * 100, "VALUE is not valid JSON"),
        ("bsz=1x", "VALUE is not valid JSON: trailing data"),
        ("bsz=[1]", "VALUE must be a number, string, boolean or null"),
        ("bsz", "expected KEY=VALUE"),
        ("=4", "expected KEY=VALUE"),
    ],
)
def test_bad_values_are_refused_with_one_line(item: str, message: str) -> None:
    with pytest.raises(PlanError) as caught:
        parse_overrides([item])
    text = str(caught.value)
    assert message in text
    assert text.startswith("--set ") and "\n" not in text and len(text) < 400


@pytest.mark.parametrize(
    ("kernels", "item", "message"),
    [
        (("geglu",), "bsz=2.5", "geglu's bsz is an integer (8 in Liger's config), not a number"),
        (("geglu",), "bsz=true", "is an integer (8 in Liger's config), not a boolean"),
        (("geglu",), "bsz=nan", "is an integer (8 in Liger's config), not text ('nan')"),
        (("distill_cosine_loss",), "bias=1", "bias is a boolean (False in Liger's config)"),
        (("geglu",), "hidden_act=5", "hidden_act is text"),
        (("geglu", "relu_squared"), "beta=0.3", "no kernel asked for has that key"),
        (("geglu",), "T=64", "that is the swept x of 'geglu'; use --x instead"),
    ],
)
def test_keys_and_types_are_checked_against_the_kernels_config(
    kernels: tuple[str, ...], item: str, message: str
) -> None:
    with pytest.raises(PlanError, match=message.replace("(", r"\(").replace(")", r"\)")):
        plan(Request(kernels=kernels, overrides=parse_overrides([item])), load_bench_catalog())


@pytest.mark.parametrize(
    "item", ["bsz=NaN", "bsz=" + "[" * 5000, "bsz=\x1b[2Jx", "bs\u202ez=1", "bsz=2.5"]
)
def test_the_cli_refuses_with_one_escaped_line_and_exit_2(item: str) -> None:
    err = io.StringIO()
    options = BenchLigerOptions(kernels=("geglu",), overrides=(item,), dry_run=True)
    assert run_bench_liger(options, out=io.StringIO(), err=err) == 2
    lines = err.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kernelindex bench liger: --set ")
    assert "\x1b" not in lines[0] and "\u202e" not in lines[0]
    assert "Traceback" not in err.getvalue()


@settings(max_examples=examples(200), deadline=None)
@given(st.text(max_size=40), st.sampled_from(["bsz", "dtype", "hidden_act", "beta"]))
def test_any_value_is_planned_or_refused_in_one_line(text: str, key: str) -> None:
    options = BenchLigerOptions(
        kernels=("geglu",), passes=("forward",), overrides=(f"{key}={text}",), dry_run=True
    )
    err = io.StringIO()
    status = run_bench_liger(options, out=io.StringIO(), err=err)
    lines = err.getvalue().splitlines()
    if status == 0:
        # Only warnings (an unknown dtype) may be said, each on one line.
        assert all(line.startswith("kernelindex bench liger: warning: ") for line in lines)
    else:
        assert status == 2
        assert len(lines) == 1 and lines[0].startswith("kernelindex bench liger: ")


def test_the_dry_run_shows_where_a_key_applied() -> None:
    out = io.StringIO()
    options = BenchLigerOptions(
        kernels=("geglu", "relu_squared"),
        overrides=("bsz=2",),
        passes=("forward",),
        x_values=(1024,),
        dry_run=True,
    )
    assert run_bench_liger(options, out=out, err=io.StringIO()) == 0
    text = out.getvalue()
    assert "batch2-hidden4096-intermediate11008-seq1024-bf16" in text
    assert "hidden1024-rows4096-bf16" in text  # ReLU² as Liger configures it
