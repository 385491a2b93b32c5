"""The catalog and the generic derivations: GPUs, kernels, parameters, providers, dtypes.

Known names map through data; unknown ones still import, by a generic derivation,
with one warning that names each — never a crash, never a made-up architecture.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from bench_adapters.liger import convert, load_catalog
from bench_adapters.liger.hardware import resolve_gpu
from bench_adapters.liger.mapper import Warnings
from bench_adapters.liger.workload import describe_workload
from kernelindex_sdk.validating.validation import validate

EXAMPLES = Path(__file__).resolve().parent / "examples" / "liger"
SCHEMAS = Path(__file__).resolve().parents[1] / "schemas" / "kernelindex.dev" / "v1alpha1"


def hardware_of(name: str) -> dict[str, Any]:
    return resolve_gpu(name, load_catalog()).spec


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("NVIDIA A100-SXM4-80GB", ("nvidia", "NVIDIA A100", "SXM4-80GB", "sm_80")),
        ("NVIDIA A100-PCIE-40GB", ("nvidia", "NVIDIA A100", "PCIE-40GB", "sm_80")),
        ("NVIDIA A100 80GB PCIe", ("nvidia", "NVIDIA A100", "80GB PCIe", "sm_80")),
        ("NVIDIA A10G", ("nvidia", "NVIDIA A10G", None, "sm_86")),
        ("NVIDIA A10", ("nvidia", "NVIDIA A10", None, "sm_86")),
        ("NVIDIA RTX A6000", ("nvidia", "NVIDIA RTX A6000", None, "sm_86")),
        ("NVIDIA GeForce RTX 3090", ("nvidia", "NVIDIA GeForce RTX 3090", None, "sm_86")),
        ("NVIDIA L40S", ("nvidia", "NVIDIA L40S", None, "sm_89")),
        ("NVIDIA L40", ("nvidia", "NVIDIA L40", None, "sm_89")),
        ("NVIDIA L4", ("nvidia", "NVIDIA L4", None, "sm_89")),
        (
            "NVIDIA RTX 6000 Ada Generation",
            ("nvidia", "NVIDIA RTX 6000 Ada Generation", None, "sm_89"),
        ),
        ("NVIDIA GeForce RTX 4090", ("nvidia", "NVIDIA GeForce RTX 4090", None, "sm_89")),
        ("NVIDIA H100 80GB HBM3", ("nvidia", "NVIDIA H100", "80GB HBM3", "sm_90")),
        ("NVIDIA H100 PCIe", ("nvidia", "NVIDIA H100", "PCIe", "sm_90")),
        ("NVIDIA H100 NVL", ("nvidia", "NVIDIA H100", "NVL", "sm_90")),
        ("NVIDIA H200", ("nvidia", "NVIDIA H200", None, "sm_90")),
        ("NVIDIA H20", ("nvidia", "NVIDIA H20", None, "sm_90")),
        ("NVIDIA GH200 480GB", ("nvidia", "NVIDIA GH200", "480GB", "sm_90")),
        ("NVIDIA B200", ("nvidia", "NVIDIA B200", None, "sm_100")),
        ("NVIDIA B300 SXM6 PC", ("nvidia", "NVIDIA B300", "SXM6 PC", "sm_103")),
        (
            "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
            ("nvidia", "NVIDIA RTX PRO 6000 Blackwell", "Workstation Edition", "sm_120"),
        ),
        ("NVIDIA GeForce RTX 5090", ("nvidia", "NVIDIA GeForce RTX 5090", None, "sm_120")),
        ("Tesla V100-SXM2-16GB", ("nvidia", "NVIDIA V100", "SXM2-16GB", "sm_70")),
        ("Tesla T4", ("nvidia", "NVIDIA T4", None, "sm_75")),
        ("AMD Instinct MI300X", ("amd", "AMD Instinct MI300X", None, "gfx942")),
        ("AMD Instinct MI300X VF", ("amd", "AMD Instinct MI300X", "VF", "gfx942")),
        ("AMD Instinct MI325X", ("amd", "AMD Instinct MI325X", None, "gfx942")),
        ("AMD Instinct MI250X/MI250", ("amd", "AMD Instinct MI250X/MI250", None, "gfx90a")),
        ("AMD Instinct MI250X", ("amd", "AMD Instinct MI250X", None, "gfx90a")),
        ("AMD Instinct MI210", ("amd", "AMD Instinct MI210", None, "gfx90a")),
        ("AMD Instinct MI355X", ("amd", "AMD Instinct MI355X", None, "gfx950")),
        (
            "Intel(R) Data Center GPU Max 1550",
            ("intel", "Intel Data Center GPU Max 1550", None, None),
        ),
    ],
)
def test_gpu_names(name: str, expected: tuple[str, str, str | None, str | None]) -> None:
    vendor, product, form_factor, architecture = expected
    hardware = hardware_of(name)
    assert hardware.get("vendor") == vendor
    assert hardware.get("product") == product
    assert hardware.get("formFactor") == form_factor
    assert hardware.get("architecture") == architecture


@pytest.mark.parametrize(
    ("name", "vendor"),
    [
        ("NVIDIA Z9000 PCIe", "nvidia"),
        ("Acme TensorCard X1", "unknown"),
        ("AMD Radeon Graphics", "amd"),
        ("GeForce GTX 9999", "nvidia"),
        ("", "unknown"),
    ],
)
def test_unknown_gpu_has_no_guessed_architecture(name: str, vendor: str) -> None:
    resolved = resolve_gpu(name, load_catalog())
    assert not resolved.known
    assert resolved.spec == {"vendor": vendor, "product": name}


def test_catalog_architectures_are_toolchain_names() -> None:
    pattern = re.compile(r"^(sm_[0-9]{2,3}[a-z]?|gfx[0-9a-f]{3,4})$")
    for _model, product in load_catalog().models:
        if product.architecture is not None:
            assert pattern.fullmatch(product.architecture), product


def test_catalog_covers_recent_generations() -> None:
    """NVIDIA data-centre and workstation parts of the last four generations; AMD MI200/MI300."""
    data = json.loads((EXAMPLES.parents[2] / "bench_adapters/common/data/gpus.json").read_text())
    covered = {(p["generation"], p["segment"]) for p in data["products"]}
    for generation in ("Ampere", "Ada Lovelace", "Hopper", "Blackwell"):
        if generation != "Hopper":
            assert (generation, "workstation") in covered, generation
        assert (generation, "data-centre") in covered, generation
    architectures = {p["architecture"] for p in data["products"] if p["vendor"] == "amd"}
    assert {"gfx90a", "gfx942"} <= architectures


def test_seed_gpu_titles_and_names() -> None:
    conversion = convert([EXAMPLES / "amd.csv"])
    environments = {
        r["metadata"]["name"]: r
        for r in conversion.records.values()
        if r["kind"] == "ExecutionEnvironment"
    }
    assert set(environments) == {
        "liger-bench-amd-instinct-mi300x",
        "liger-bench-amd-instinct-mi250x-mi250",
        "liger-bench-amd-instinct-mi250x",
        "liger-bench-amd-instinct-mi325x",
    }
    mi300x = environments["liger-bench-amd-instinct-mi300x"]
    assert mi300x["metadata"]["title"] == "Liger benchmark host · Instinct MI300X"
    assert mi300x["spec"] == {
        "hardware": {"vendor": "amd", "product": "AMD Instinct MI300X", "architecture": "gfx942"},
        "software": {},
    }
    assert conversion.summary.warnings == []
    for record in conversion.records.values():
        assert validate(record) == []


# --- unknown things: import, generically, with one warning each ----------------------


def test_unknowns_import_with_one_warning_each() -> None:
    conversion = convert([EXAMPLES / "unknown.csv"])
    summary = conversion.summary
    assert summary.problems == [] and summary.runs == 5
    warnings = summary.warnings
    assert len(warnings) == len(set(warnings))
    expected = [
        "unknown kernel 'warp_shuffle_norm'",
        "unknown GPU 'Acme TensorCard X1'",
        "unknown GPU 'NVIDIA Z9000 PCIe'",
        "unknown parameter 'Q'",
        "unknown parameter 'zeta_dim'",
        "unknown parameter 'flavour'",
        "unknown provider 'acme_fast'",
        "unknown provider 'liger_quantum'",
        "unknown dtype 'torch.float4_e2m1'",
        "kernel 'warp_shuffle_norm': no dtype",
    ]
    for fragment in expected:
        assert sum(fragment in w for w in warnings) == 1, fragment
    assert len(warnings) == len(expected)
    for record in [*conversion.records.values(), *(m.run for m in conversion.runs)]:
        assert validate(record) == [], record["metadata"]["name"]


def test_unknown_records_are_generic() -> None:
    conversion = convert([EXAMPLES / "unknown.csv"])
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for record in conversion.records.values():
        by_kind.setdefault(record["kind"], []).append(record)
    hardware = sorted(
        (r["spec"]["hardware"] for r in by_kind["ExecutionEnvironment"]),
        key=lambda h: h["product"],
    )
    assert hardware == [
        {"vendor": "unknown", "product": "Acme TensorCard X1"},
        {"vendor": "nvidia", "product": "NVIDIA Z9000 PCIe"},
    ]
    workloads = {json.dumps(r["spec"], sort_keys=True) for r in by_kind["Workload"]}
    assert (
        json.dumps(
            {
                "kernel": "warp_shuffle_norm",
                "pass": "forward",
                "parameters": {"hidden": 1024, "q": 16, "zeta_dim": 64},
                "dtype": "float4_e2m1",
                "settings": {"flavour": "spicy"},
            },
            sort_keys=True,
        )
        in workloads
    )
    implementations = {r["spec"]["provider"]: r["spec"] for r in by_kind["Implementation"]}
    assert implementations["acme_fast"] == {"provider": "acme_fast"}
    assert implementations["liger_quantum"]["package"] == {
        "name": "liger-kernel",
        "version": "0.9.0",
    }
    titles = {m.run["metadata"]["title"] for m in conversion.runs}
    assert "warp_shuffle_norm · acme_fast · forward" in titles


def test_warnings_name_things_once_across_many_rows() -> None:
    seen: list[str] = []
    convert([EXAMPLES / "unknown.csv", EXAMPLES / "unknown.csv"], on_warning=seen.append)
    assert len(seen) == len(set(seen)) == 10


# --- parameters, dtypes, string x values ---------------------------------------------


def describe(kernel: str, x_name: str, x: Any, config: dict[str, Any]) -> Any:
    warnings = Warnings()
    shape = describe_workload(kernel, x_name, x, config, load_catalog(), warnings)
    return shape, warnings.messages


@pytest.mark.parametrize(
    ("kernel", "x_name", "x", "config", "slug"),
    [
        (
            "geglu",
            "T",
            4096,
            {"bsz": 8, "hidden_size": 4096, "intermediate_size": 11008, "dtype": "torch.bfloat16"},
            "batch8-hidden4096-intermediate11008-seq4096-bf16",
        ),
        (
            "llama4_rope",
            "T",
            16384,
            {"dtype": "torch.bfloat16", "hidden_size": 8192, "num_q_heads": 32, "num_kv_heads": 8},
            "hidden8192-kv_heads8-q_heads32-seq16384-bf16",
        ),
        (
            "distill_cosine_loss",
            "BT",
            1024,
            {"H": 4096, "V": 128256, "mode": "forward", "dtype": "torch.bfloat16"},
            "hidden4096-tokens1024-vocab128256-bf16",
        ),
        (
            "relu_squared",
            "N",
            512,
            {"M": 4096, "dtype": "torch.bfloat16"},
            "hidden512-rows4096-bf16",
        ),
        ("cross_entropy", "V", 4096, {"B": 8, "T": 2048}, "batch8-seq2048-vocab4096-fp32"),
        (
            "group_norm",
            "C",
            32,
            {"H": 512, "M": 128, "channels_per_group": 4, "dtype": "torch.float32"},
            "batch128-channels32-channels_per_group4-hidden512-fp32",
        ),
        (
            "fused_moe",
            "E",
            64,
            {"E": None, "H": 2048, "K": 8, "T": 8192, "dtype": "torch.bfloat16"},
            "experts64-hidden2048-tokens8192-top_k8-bf16",
        ),
        (
            "embedding",
            "V",
            1024,
            {"B": 8, "D": 4096, "T": 2048, "dtype": "torch.float32"},
            "batch8-embedding_dim4096-seq2048-vocab1024-fp32",
        ),
        (
            "megatron_swiglu",
            "ffn_local",
            1024,
            {"B": 4, "S": 2048},
            "batch4-intermediate1024-seq2048-bf16",
        ),
    ],
)
def test_parameter_normalization(
    kernel: str, x_name: str, x: Any, config: dict[str, Any], slug: str
) -> None:
    shape, warnings = describe(kernel, x_name, x, config)
    assert shape.slug == slug
    assert warnings == []


def test_string_x_values() -> None:
    conversion = convert([EXAMPLES / "model_config.csv"])
    assert conversion.summary.problems == [] and conversion.summary.warnings == []
    workloads = [r for r in conversion.records.values() if r["kind"] == "Workload"]
    parameters = sorted(w["spec"]["parameters"]["model"] for w in workloads)
    assert parameters == ["llama_2_7b", "llama_3_8b", "qwen2.5_7b"]
    ids = sorted(m.run["spec"]["sourceNative"]["externalId"] for m in conversion.runs)
    assert ids[0] == (
        "cross_entropy/forward/liger_triton/nvidia-b200/batch1-model=llama_2_7b-seq2048-fp32/"
        "2026-07-05-21-00-19"
    )
    for mapped in conversion.runs:
        assert validate(mapped.run) == []
        name = mapped.run["metadata"]["name"]
        assert re.fullmatch(r"[a-z0-9][a-z0-9._-]*", name) and len(name) <= 100


def test_x_collision_keeps_the_config_value_as_a_setting() -> None:
    shape, warnings = describe(
        "qwen2vl_mrope", "T", 1024, {"bsz": 1, "seq_len": 8192, "dtype": "torch.bfloat16"}
    )
    assert shape.parameters == {"batch": 1, "seq": 1024}
    assert shape.settings == {"seq_len": 8192}
    assert warnings == []


def test_settings_are_not_in_the_slug() -> None:
    shape, _ = describe(
        "distill_jsd_loss",
        "BT",
        1024,
        {"H": 4096, "V": 128256, "bias": False, "ignore_index": -100, "weight_hard_loss": 0.5},
    )
    assert shape.settings == {"bias": False, "ignore_index": -100, "weight_hard_loss": 0.5}
    assert "bias" not in shape.slug and "ignore" not in shape.slug


def test_dtype_defaults_and_spellings() -> None:
    assert describe("kl_div", "V", 4096, {"B": 8, "T": 2048})[0].dtype == "fp32"
    assert describe("geglu", "T", 1, {"dtype": "torch.float16"})[0].dtype == "fp16"
    shape, warnings = describe("geglu", "T", 1, {})
    assert shape.dtype == "unspecified"
    assert warnings == [
        "kernel 'geglu': no dtype in the config and no default in the catalog: "
        "workload dtype 'unspecified'"
    ]


def test_order_of_config_keys_does_not_matter() -> None:
    a, _ = describe("rope", "T", 1024, {"hidden_size": 8192, "num_q_heads": 32, "B": 1})
    b, _ = describe("rope", "T", 1024, {"B": 1, "num_q_heads": 32, "hidden_size": 8192})
    assert a == b


def test_catalog_loads_and_lists_every_kernel_of_the_real_csv() -> None:
    catalog = load_catalog()
    assert catalog.kernels["geglu"].title == "GeGLU MLP"
    for kernel in ("llama4_rope", "distill_cosine_loss", "relu_squared", "fused_moe"):
        assert kernel in catalog.kernels
    for provider in ("liger", "huggingface", "torch", "torch_compile", "megatron-fused"):
        assert provider in catalog.providers
    assert catalog.metrics["memory"].units["MB"] == 2**20
