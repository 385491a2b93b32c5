"""Digests per second: ``kernelindex_sdk.digest`` (public) and ``canonical.digest`` vs rfc8785.

    python benchmarks/bench_digest.py [--seeds DIR] [--records N] [--repeats R] [--json]
    python benchmarks/bench_digest.py --liger [CSV]     # every record the Liger importer writes
    python benchmarks/bench_digest.py --liger --tree old=/tmp/old-checkout   # old code beside

The corpus is seed-like records (BenchmarkRun / BenchmarkProtocol /
ExecutionEnvironment, in equal parts) made in-process from the published seeds
(``shared/seeds`` beside the repository, or ``--seeds``) or, without them, from a
built-in copy of seed 000. Each record is varied: its integers, its float metrics
(float32 values widened to double, as the Liger CSV gives them), its ids, hex digests,
timestamps, notes, and the number of its measurements, so the corpus is not a few
records repeated. With ``--liger`` the corpus is instead every record that
``kernelindex import liger`` writes from Liger-Kernel's CSV (``shared/liger/
all_benchmark_data.csv`` by default), collected into one JSON array and parsed with
``json.loads`` — the measurement the digest target is stated in. Every digest is checked against the
reference before timing.

One core, in-process: each repeat digests the whole corpus once; the figures are the
median of the repeats' records/s (and min-max), by this thread's CPU time and by wall
clock, and the ratio of medians to the reference. On a shared machine the CPU-time
figures are the steadier ones; both are printed.

``--tree LABEL=PATH`` (repeatable) adds the ``digest`` of another checkout's
``kernelindex_sdk/canonical.py`` (say a ``git worktree`` of ``main``), loaded as a module
of its own beside this one, as one more interleaved contender: old and new code against
the same reference in the same repeats, and a last line with each one's speed over this
checkout's, repeat by repeat.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import importlib.util
import json
import platform
import random
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(ROOT))

import rfc8785  # noqa: E402

import kernelindex_sdk  # noqa: E402
from kernelindex_sdk import canonical  # noqa: E402
from kernelindex_sdk.canonical import DIGEST_PREFIX, canonicalize, digest, identity  # noqa: E402

#: Seed 000 (``shared/seeds/000_0dade080a6775df8.json``), used when the seeds are absent.
BUILTIN_BUNDLE: dict[str, Any] = {
    "run": {
        "apiVersion": "kernelindex.dev/v1alpha1",
        "kind": "BenchmarkRun",
        "metadata": {
            "name": "liger-geglu-backward-liger-nvidia-a100-sxm4-80gb-batch8-hidden4096-"
            "intermediate11008-seq4096-bf16-20",
            "title": "GeGLU MLP · liger · backward",
            "labels": {"liger_version": "0.2.1"},
        },
        "spec": {
            "status": "passed",
            "timing": {"latencyNs": {"median": 70513954}, "primaryStatistic": "median"},
            "observedAt": "2024-09-03T15:38:37.000Z",
            "measurements": [
                {"unit": "ns", "value": 70513954, "metric": "latency", "statistic": "p20"},
                {"unit": "ns", "value": 70513954, "metric": "latency", "statistic": "p80"},
            ],
            "sourceNative": {
                "source": "liger-kernel-bench",
                "metrics": {
                    "ms_20": 70.51395416259766,
                    "ms_50": 70.51395416259766,
                    "ms_80": 70.51395416259766,
                },
                "benchmark": "geglu/backward",
                "externalId": "geglu/backward/liger/nvidia-a100-sxm4-80gb/batch8-hidden4096-"
                "intermediate11008-seq4096-bf16/2024-09-03-15-38-37",
            },
            "protocolDigest": "sha256:"
            "080e6e66e4ec75a131aa0c9121c74b8e8eed64e7b6d621d567c6a28f79548be8",
            "workloadDigest": "sha256:"
            "18cec8f600e47ab4ad675d7ea9559ea1b3ac4f1b081be637d787ef626817c37b",
            "environmentDigest": "sha256:"
            "90c9e2764222f592477cfccf3373519add5a1b881563956ad058c4f99e41b6b9",
            "implementationDigest": "sha256:"
            "273de05b950c7c7353e9e2b0d88f29cab729451b9b3034c01494e1d02bac3c46",
        },
    },
    "protocol": {
        "apiVersion": "kernelindex.dev/v1alpha1",
        "kind": "BenchmarkProtocol",
        "metadata": {
            "name": "liger-bench-do-bench-backward",
            "title": "Liger benchmark harness · backward pass",
        },
        "spec": {
            "harness": {
                "name": "Liger-Kernel benchmark scripts",
                "repository": "https://github.com/linkedin/Liger-Kernel",
            },
            "measurement": {"timer": "cuda_events", "primaryStatistic": "median"},
            "comparability": {
                "notes": "Timed: the backward pass of the module output given a random "
                "upstream gradient, via triton.testing.do_bench with quantiles 0.5/0.2/0.8 "
                "(median with p20/p80 spread). The upstream CSV records no CUDA, driver, or "
                "torch version; the Liger release rides each run's labels. Comparable only "
                "within one kernel, workload, timed pass, and GPU.",
                "family": "liger_kernel_bench",
            },
        },
    },
    "environment": {
        "apiVersion": "kernelindex.dev/v1alpha1",
        "kind": "ExecutionEnvironment",
        "metadata": {
            "name": "liger-bench-nvidia-a100-sxm4-80gb",
            "title": "Liger benchmark host · A100-SXM4-80GB",
        },
        "spec": {
            "hardware": {
                "vendor": "nvidia",
                "product": "NVIDIA A100",
                "formFactor": "SXM4-80GB",
                "architecture": "sm_80",
            },
            "software": {},
        },
    },
}

MEMBERS = ("run", "protocol", "environment")
STATISTICS = ("min", "max", "mean", "stddev", *(f"p{q}" for q in range(1, 100, 2)))
KERNELS = ("geglu", "swiglu", "rms_norm", "llama4_rope", "fused_linear_cross_entropy", "kl_div")
WORDS = ("the of timed pass kernel median spread warmup cuda graph stream reduce tile").split()  # noqa: SIM905


def load_bundles(seeds: Path | None) -> tuple[list[dict[str, Any]], str]:
    candidates = [seeds] if seeds else [ROOT.parent / "shared" / "seeds", ROOT / "shared" / "seeds"]
    for folder in candidates:
        files = sorted(folder.glob("*.json")) if folder and folder.is_dir() else []
        if files:
            return [json.loads(f.read_text(encoding="utf-8")) for f in files], str(folder)
    return [BUILTIN_BUNDLE], "built-in copy of seed 000"


def _ms(rng: random.Random) -> float:
    """A latency in ms as the Liger CSV has it: a float32 widened to double."""
    value = rng.uniform(0.01, 500.0)
    widened: float = struct.unpack("<f", struct.pack("<f", value))[0]
    return widened


def _hex_digest(rng: random.Random) -> str:
    return "sha256:" + rng.getrandbits(256).to_bytes(32, "big").hex()


def vary(
    member: str, record: Mapping[str, Any], rng: random.Random, measurements: tuple[int, int]
) -> dict[str, Any]:
    """A copy of a seed record with new values where a real corpus would differ."""
    rec: dict[str, Any] = copy.deepcopy(dict(record))
    spec = rec["spec"]
    stamp = f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}"
    if member == "run":
        kernel = rng.choice(KERNELS)
        ms = sorted(_ms(rng) for _ in range(3))
        spec["timing"]["latencyNs"]["median"] = round(ms[1] * 1e6)
        spec["observedAt"] = f"{stamp}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.000Z"
        stats = rng.sample(STATISTICS, rng.randint(*measurements))
        spec["measurements"] = [
            {
                "unit": "ns",
                "value": rng.randint(10_000, 500_000_000),
                "metric": "latency",
                "statistic": s,
            }
            for s in stats
        ]
        native = spec["sourceNative"]
        native["metrics"] = {"ms_20": ms[0], "ms_50": ms[1], "ms_80": ms[2]}
        native["benchmark"] = f"{kernel}/{rng.choice(['forward', 'backward', 'full'])}"
        native["externalId"] = f"{native['benchmark']}/liger/gpu-{rng.randint(0, 99)}/{stamp}"
        for key in (
            "protocolDigest",
            "workloadDigest",
            "environmentDigest",
            "implementationDigest",
        ):
            spec[key] = _hex_digest(rng)
    elif member == "protocol":
        comparability = spec.setdefault("comparability", {})
        extra = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 40)))
        comparability["notes"] = str(comparability.get("notes", "")) + " " + extra
    else:
        hardware = spec.setdefault("hardware", {})
        hardware["product"] = f"NVIDIA {rng.choice(['A100', 'H100', 'H200', 'B200', 'L40S'])}"
        hardware["architecture"] = f"sm_{rng.choice([80, 86, 89, 90, 100])}"
        if rng.random() < 0.5:
            spec["software"] = {
                "cuda": f"12.{rng.randint(0, 8)}",
                "torch": f"2.{rng.randint(3, 8)}.0",
            }
    rec["metadata"] = dict(rec.get("metadata", {}), name=f"{member}-{rng.getrandbits(32):08x}")
    return rec


def make_corpus(
    bundles: list[dict[str, Any]], n: int, seed: int, measurements: tuple[int, int] = (2, 8)
) -> list[dict[str, Any]]:
    """``n`` records, runs/protocols/environments in turn; runs get between
    ``measurements[0]`` and ``measurements[1]`` measurements (the seeds have 2)."""
    rng = random.Random(seed)
    return [
        vary(member, bundles[i % len(bundles)][member], rng, measurements)
        for i in range(n)
        for member in [MEMBERS[i % len(MEMBERS)]]
    ]


def liger_corpus(csv: Path) -> list[dict[str, Any]]:
    """Every record ``kernelindex import liger CSV --layout jsonl`` writes (runs,
    protocols, environments, workloads, implementations), as one parsed JSON array."""
    with tempfile.TemporaryDirectory(prefix="bench-digest-") as tmp:
        out = Path(tmp) / "records"
        command = [sys.executable, "-m", "kernelindex_sdk.cli.main", "import", "liger"]
        done = subprocess.run(
            [*command, str(csv), "--out", str(out), "--layout", "jsonl"],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(f"bench_digest: import liger {csv} failed: {done.stderr.strip()}")
        lines = (out / "liger.jsonl").read_text(encoding="utf-8").splitlines()
    records: list[dict[str, Any]] = json.loads("[" + ",".join(lines) + "]")
    return records


def reference_digest(record: Mapping[str, Any]) -> str:
    return DIGEST_PREFIX + hashlib.sha256(rfc8785.dumps(identity(record))).hexdigest()


def public_digest(record: Mapping[str, Any]) -> str:
    """The function a library user calls, looked up as they would: ``ki.digest``."""
    return kernelindex_sdk.digest(record)


def stdlib_digest(record: Mapping[str, Any]) -> str:
    """Our digest with the stdlib ``json`` fast path (what runs without orjson)."""
    ident = identity(record)
    out = canonical._canonicalize_json(ident)
    return DIGEST_PREFIX + hashlib.sha256(rfc8785.dumps(ident) if out is None else out).hexdigest()


def tree_digest(label: str, root: Path) -> Callable[[Mapping[str, Any]], str]:
    """``digest`` of the ``canonical`` module of the checkout at ``root``."""
    path = root / "kernelindex_sdk" / "canonical.py"
    spec = importlib.util.spec_from_file_location(f"bench_digest_canonical_{label}", path)
    if spec is None or spec.loader is None or not path.is_file():
        raise SystemExit(f"bench_digest: --tree {label}={root}: no {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    found: Callable[[Mapping[str, Any]], str] = module.digest
    return found


def rates(
    contenders: Mapping[str, Callable[[Mapping[str, Any]], str]],
    corpus: list[dict[str, Any]],
    repeats: int,
) -> dict[str, dict[str, list[float]]]:
    """records/s of each repeat of each contender, by wall clock and by this thread's
    CPU time (the latter is what one core does, less what other processes take).

    The contenders are interleaved: each repeat times every contender once, in an
    order that rotates from repeat to repeat, so a slow phase of this shared machine
    falls on all of them alike instead of on whichever ran its repeats last."""
    for fn in contenders.values():
        for record in corpus[:200]:  # warm-up
            fn(record)
    names = list(contenders)
    out: dict[str, dict[str, list[float]]] = {name: {"wall": [], "cpu": []} for name in names}
    for repeat in range(repeats):
        shift = repeat % len(names)
        for name in names[shift:] + names[:shift]:
            fn = contenders[name]
            wall, cpu = time.perf_counter(), time.thread_time()
            for record in corpus:
                fn(record)
            cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
            out[name]["wall"].append(len(corpus) / wall)
            out[name]["cpu"].append(len(corpus) / cpu)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seeds", type=Path, help="folder of seed bundles (*.json)")
    parser.add_argument("--records", type=int, default=3000, help="corpus size (default 3000)")
    parser.add_argument("--repeats", type=int, default=7, help="timed passes (>= 5, default 7)")
    parser.add_argument("--seed", type=int, default=8785, help="corpus RNG seed")
    parser.add_argument(
        "--large",
        action="store_true",
        help="runs with 18-30 measurements (2-3 KB canonical) instead of 2-8",
    )
    parser.add_argument(
        "--liger",
        nargs="?",
        type=Path,
        const=ROOT.parent / "shared" / "liger" / "all_benchmark_data.csv",
        help="time every record the Liger importer writes from CSV (default: "
        "shared/liger/all_benchmark_data.csv beside the repository) instead",
    )
    parser.add_argument(
        "--tree",
        action="append",
        default=[],
        help="LABEL=PATH: also time the digest of the checkout at PATH (its canonical.py)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if args.repeats < 5:
        parser.error("--repeats must be at least 5")

    if args.liger is not None:
        if not args.liger.is_file():
            parser.error(f"--liger: {args.liger}: no such file")
        corpus = liger_corpus(args.liger)
        source = f"kernelindex import liger {args.liger}"
    else:
        bundles, source = load_bundles(args.seeds)
        measurements = (18, 30) if args.large else (2, 8)
        corpus = make_corpus(bundles, args.records, args.seed, measurements)
    trees: dict[str, Callable[[Mapping[str, Any]], str]] = {}
    for tree in args.tree:
        label, _, path = tree.partition("=")
        if not path:
            parser.error(f"--tree {tree!r}: want LABEL=PATH")
        trees[f"kernelindex digest, {label}"] = tree_digest(label, Path(path))
    sizes = [len(canonicalize(identity(r))) for r in corpus]
    for record in corpus:  # never time a wrong answer
        expected = reference_digest(record)
        assert digest(record) == expected, record
        assert stdlib_digest(record) == expected, record
        assert public_digest(record) == expected, record
        for other in trees.values():
            assert other(record) == expected, record
    taken = sum(canonical._fast(identity(r)) is not None for r in corpus)

    here = f"kernelindex digest ({canonical.BACKEND})"
    contenders: dict[str, Callable[[Mapping[str, Any]], str]] = {
        here: digest,
        "kernelindex_sdk.digest (public)": kernelindex_sdk.digest,
        **trees,
    }
    if canonical.BACKEND != "json":
        contenders["kernelindex digest (stdlib json path)"] = stdlib_digest
    contenders["rfc8785 reference"] = reference_digest

    results = rates(contenders, corpus, args.repeats)
    ref_name = "rfc8785 reference"
    figures: dict[str, dict[str, dict[str, float]]] = {}
    for name, per_clock in results.items():
        figures[name] = {}
        for clock, values in per_clock.items():
            median = statistics.median(values)
            ref = statistics.median(results[ref_name][clock])
            figures[name][clock] = {
                "median": round(median),
                "min": round(min(values)),
                "max": round(max(values)),
                "ratio": round(median / ref, 2),
                # The same, repeat by repeat: each repeat's rate over the reference's
                # in that repeat (interleaved, so both saw the same minute), then the
                # median of those.
                "paired_ratio": round(
                    statistics.median(
                        v / r for v, r in zip(values, results[ref_name][clock], strict=True)
                    ),
                    2,
                ),
            }
    report: dict[str, Any] = {
        "python": platform.python_version(),
        "backend": canonical.BACKEND,
        "scan": canonical.SCAN,
        "corpus": {
            "from": source,
            "records": len(corpus),
            "bytes_mean": round(statistics.mean(sizes)),
            "bytes_min": min(sizes),
            "bytes_max": max(sizes),
            "fast_path_taken": taken,
        },
        "repeats": args.repeats,
        "records_per_s": figures,
    }
    if trees:  # records/s of each tree over this checkout's, repeat by repeat (CPU time)
        report["tree_over_here_cpu"] = {
            name: round(
                statistics.median(
                    t / h for t, h in zip(results[name]["cpu"], results[here]["cpu"], strict=True)
                ),
                3,
            )
            for name in trees
        }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"python {report['python']}, fast path: {report['backend']}, walk: {report['scan']}")
    print(
        f"corpus: {len(corpus)} records from {source}; canonical identity "
        f"{statistics.mean(sizes):.0f} B mean ({min(sizes)}-{max(sizes)}); "
        f"fast path taken for {taken}"
    )
    print(
        f"records/s, median of {args.repeats} interleaved repeats (min-max), ratio of medians"
        " to the reference, median of the repeats' own ratios:"
    )
    for clock, label in (("cpu", "per CPU-second (thread time)"), ("wall", "per wall-second")):
        print(f"  {label}")
        for name, by_clock in figures.items():
            f = by_clock[clock]
            spread = f"({f['min']:,.0f}-{f['max']:,.0f})"
            print(
                f"    {name:38s} {f['median']:10,.0f} {spread:>22s} {f['ratio']:6.2f}x"
                f" {f['paired_ratio']:6.2f}x"
            )
    for name, ratio in report.get("tree_over_here_cpu", {}).items():
        print(f"  {name}: records/s ÷ this checkout's, CPU time, median of repeats: {ratio:.3f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
