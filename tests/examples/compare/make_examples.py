"""Writes the small hand-made record sets that ``tests/test_compare*.py`` use.

Run it from the repository root after changing a record here:

    .venv/bin/python tests/examples/compare/make_examples.py

Every digest is computed with :func:`kernelindex_sdk.canonical.digest`, never typed
in; ``tests/test_compare_examples.py`` regenerates the sets in memory and fails if
the stored files differ, so the files and this script cannot drift apart.

The sets (each its own directory):

* ``two-implementations/`` — bundles: huggingface and liger on one geglu workload on
  an H100, in two environments that differ only in software (same hardware: one
  group, speed-up 2.00×).
* ``not-comparable/`` — two bundles that differ in workload (geglu vs swiglu) and GPU
  (H100 vs A100).
* ``oom/`` — JSON Lines: huggingface passed, liger out of memory.
* ``memory/`` — JSON Lines: a peak-memory group (memory saving 1.60×).
* ``reruns/`` — JSON Lines: the baseline once and liger three times on one key, with
  different ``observedAt``: the newest is shown, two older counted.
* ``sweep/`` — JSON Lines: geglu over seq 1024/2048/4096 at hidden 4096, and over
  hidden 2048/4096 at seq 1024 (two sweeps sharing one point); liger is OOM at 4096.
* ``invalid/`` — one valid bundle, one run without its timing (invalid).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kernelindex_sdk.canonical import digest

API = "kernelindex.dev/v1alpha1"
HERE = Path(__file__).resolve().parent


def record(kind: str, name: str, spec: dict[str, Any], title: str | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if title:
        metadata["title"] = title
    return {"apiVersion": API, "kind": kind, "metadata": metadata, "spec": spec}


def protocol(pass_: str, memory: bool = False) -> dict[str, Any]:
    measurement: dict[str, Any] = (
        {"memoryProbe": "torch_cuda_max_memory_allocated", "primaryStatistic": "median"}
        if memory
        else {"timer": "cuda_events", "primaryStatistic": "median"}
    )
    kind = "memory" if memory else "do-bench"
    return record(
        "BenchmarkProtocol",
        f"example-{kind}-{pass_}",
        {
            "harness": {"name": "example harness"},
            "measurement": measurement,
            "comparability": {"notes": "Comparable only within one kernel, workload, pass, GPU."},
        },
        f"Example harness · {pass_} pass" + (" · peak memory" if memory else ""),
    )


def environment(gpu: str, software: Mapping[str, str] | None = None) -> dict[str, Any]:
    hardware = {
        "h100": {
            "vendor": "nvidia",
            "product": "NVIDIA H100",
            "formFactor": "80GB HBM3",
            "architecture": "sm_90",
        },
        "a100": {
            "vendor": "nvidia",
            "product": "NVIDIA A100",
            "formFactor": "SXM4-80GB",
            "architecture": "sm_80",
        },
    }[gpu]
    suffix = "-" + "-".join(f"{k}{v}" for k, v in sorted((software or {}).items()))
    return record(
        "ExecutionEnvironment",
        f"example-{gpu}{suffix if software else ''}",
        {"hardware": hardware, "software": dict(software or {})},
        f"Example host · {gpu.upper()}",
    )


def workload(kernel: str, pass_: str = "forward", **parameters: int) -> dict[str, Any]:
    shape = {"batch": 8, "hidden": 4096, "seq": 1024, **parameters}
    slug = "-".join(f"{k}{v}" for k, v in sorted(shape.items()))
    return record(
        "Workload",
        f"example-{kernel}-{pass_}-{slug}",
        {"kernel": kernel, "pass": pass_, "parameters": shape, "dtype": "bf16"},
        {"geglu": "GeGLU MLP", "swiglu": "SwiGLU MLP"}[kernel],
    )


def implementation(provider: str, version: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"provider": provider}
    if version:
        spec["package"] = {"name": "liger-kernel", "version": version}
    name = f"example-{provider}" + (f"-{version}" if version else "")
    return record("Implementation", name, spec)


def run(
    name: str,
    refs: Mapping[str, Mapping[str, Any]],
    *,
    observed: str = "2025-01-01T12:00:00.000Z",
    latency: tuple[int, int, int] | None = None,
    memory: tuple[int, int, int] | None = None,
    status: str = "passed",
    reason: str | None = None,
) -> dict[str, Any]:
    """A run; ``latency``/``memory`` are (p20, median, p80) in ns or bytes."""
    spec: dict[str, Any] = {"status": status, "observedAt": observed}
    if latency is not None:
        p20, median, p80 = latency
        spec["timing"] = {"latencyNs": {"median": median}, "primaryStatistic": "median"}
        spec["measurements"] = [
            {"metric": "latency", "unit": "ns", "statistic": "p20", "value": p20},
            {"metric": "latency", "unit": "ns", "statistic": "p80", "value": p80},
        ]
    if memory is not None:
        p20, median, p80 = memory
        spec["memory"] = {
            "peakBytes": {"median": median, "p20": p20, "p80": p80},
            "primaryStatistic": "median",
        }
    if reason is not None:
        spec["reason"] = reason
    for member, field in (
        ("protocol", "protocolDigest"),
        ("workload", "workloadDigest"),
        ("environment", "environmentDigest"),
        ("implementation", "implementationDigest"),
    ):
        spec[field] = digest(refs[member])
    provider = refs["implementation"]["spec"]["provider"]
    title = f"{refs['workload']['metadata']['title']} · {provider}"
    return record("BenchmarkRun", name, spec, title)


def bundle(run_record: dict[str, Any], refs: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    return {"run": run_record, **{k: dict(v) for k, v in refs.items()}}


def jsonl(records: list[dict[str, Any]]) -> str:
    """Referenced records first, each once (by digest), then the runs."""
    seen: dict[str, dict[str, Any]] = {}
    runs = []
    for item in records:
        if item["kind"] == "BenchmarkRun":
            runs.append(item)
        else:
            seen.setdefault(digest(item), item)
    lines = [*seen.values(), *runs]
    return "".join(json.dumps(x, ensure_ascii=False, sort_keys=True) + "\n" for x in lines)


def pretty(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True) + "\n"


def examples() -> dict[str, str]:
    """Relative path → file content, for every example file."""
    files: dict[str, str] = {}
    fwd = protocol("forward")
    mem = protocol("forward", memory=True)
    h100 = environment("h100")
    h100_torch = environment("h100", {"torch": "2.4.0"})
    a100 = environment("a100")
    geglu = workload("geglu")
    swiglu = workload("swiglu")
    hf = implementation("huggingface")
    liger = implementation("liger", "0.5.0")

    def refs(w: Any, i: Any, e: Any = h100, p: Any = fwd) -> dict[str, Any]:
        return {"protocol": p, "workload": w, "environment": e, "implementation": i}

    # two-implementations: bundles, environments differing only in software
    r_hf, r_liger = refs(geglu, hf), refs(geglu, liger, h100_torch)
    files["two-implementations/huggingface.json"] = pretty(
        bundle(run("two-hf", r_hf, latency=(98_000, 100_000, 103_000)), r_hf)
    )
    files["two-implementations/liger.json"] = pretty(
        bundle(run("two-liger", r_liger, latency=(49_000, 50_000, 52_000)), r_liger)
    )

    # not-comparable: other kernel, other GPU
    r_a, r_b = refs(geglu, liger), refs(swiglu, liger, a100)
    files["not-comparable/a.json"] = pretty(
        bundle(run("pair-a", r_a, latency=(49_000, 50_000, 52_000)), r_a)
    )
    files["not-comparable/b.json"] = pretty(
        bundle(run("pair-b", r_b, latency=(69_000, 70_000, 72_000)), r_b)
    )

    # oom
    r_hf, r_liger = refs(geglu, hf), refs(geglu, liger)
    files["oom/records.jsonl"] = jsonl(
        [
            *r_hf.values(),
            *r_liger.values(),
            run("oom-hf", r_hf, latency=(98_000, 100_000, 103_000)),
            run("oom-liger", r_liger, status="oom", reason="CUDA out of memory (tried 2 GiB)"),
        ]
    )

    # memory
    r_hf, r_liger = refs(geglu, hf, p=mem), refs(geglu, liger, p=mem)
    files["memory/records.jsonl"] = jsonl(
        [
            *r_hf.values(),
            *r_liger.values(),
            run("mem-hf", r_hf, memory=(2 << 30, 2 << 30, 2 << 30)),
            run("mem-liger", r_liger, memory=(1280 << 20, 1280 << 20, 1300 << 20)),
        ]
    )

    # reruns
    r_hf, r_liger = refs(geglu, hf), refs(geglu, liger)
    files["reruns/records.jsonl"] = jsonl(
        [
            *r_hf.values(),
            *r_liger.values(),
            run("rerun-hf", r_hf, latency=(98_000, 100_000, 103_000)),
            run("rerun-liger-1", r_liger, observed="2024-01-01T00:00:00.000Z",
                latency=(79_000, 80_000, 81_000)),
            run("rerun-liger-3", r_liger, observed="2025-06-01T00:00:00Z",
                latency=(39_000, 40_000, 41_000)),
            run("rerun-liger-2", r_liger, observed="2024-06-01T08:00:00+02:00",
                latency=(59_000, 60_000, 61_000)),
        ]
    )  # fmt: skip

    # sweep: seq at hidden 4096, hidden at seq 1024
    sweep: list[dict[str, Any]] = []
    points = [(1024, 4096), (2048, 4096), (4096, 4096), (1024, 2048)]
    for seq, hidden in points:
        w = workload("geglu", seq=seq, hidden=hidden)
        r_hf, r_liger = refs(w, hf), refs(w, liger)
        base = seq * hidden // 40
        sweep += [*r_hf.values(), *r_liger.values()]
        sweep.append(run(f"sweep-hf-{seq}-{hidden}", r_hf, latency=(base - 500, base, base + 800)))
        if seq == 4096:
            sweep.append(
                run(f"sweep-liger-{seq}-{hidden}", r_liger, status="oom", reason="out of memory")
            )
        else:
            half = base // 2
            sweep.append(
                run(f"sweep-liger-{seq}-{hidden}", r_liger, latency=(half - 300, half, half + 400))
            )
    files["sweep/records.jsonl"] = jsonl(sweep)

    # invalid: a passed run with no result
    r_hf = refs(geglu, hf)
    good = run("valid-hf", r_hf, latency=(98_000, 100_000, 103_000))
    bad = run("invalid-liger", refs(geglu, liger), latency=(49_000, 50_000, 52_000))
    del bad["spec"]["timing"]
    files["invalid/good.json"] = pretty(bundle(good, r_hf))
    files["invalid/bad.json"] = pretty(bad)
    return files


def main() -> None:
    for relative, content in examples().items():
        path = HERE / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        print(path.relative_to(HERE), file=sys.stderr)


if __name__ == "__main__":
    main()
