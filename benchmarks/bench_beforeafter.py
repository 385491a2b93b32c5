"""``compare --against`` beside plain ``compare`` of the same runs: time and peak memory.

    python benchmarks/bench_beforeafter.py [--runs 100000] [--repeats 3] [--out DIR]

Writes two JSON Lines files of ``--runs`` corpus bundles each (``make_corpus.bundles``,
seeds 1 and 2: the four seed shapes with new latencies, times and software). A record a
seed bundle does not embed (its workload, its implementation) is referenced by a digest
made from the run's index, so the i-th run of one side pairs with the i-th of the other:
one suite benchmarked twice, N pairs. Then it times, each as its own process and
interleaved repeat by repeat:

* ``plain``: ``kernelindex compare ref.jsonl cand.jsonl --format json`` (all 2 × N runs);
* ``against``: ``kernelindex compare --against ref.jsonl cand.jsonl --format json``.

Prints the median wall time, the median CPU time and the peak RSS of each, and the
ratios against plain ``compare`` (the target: at most 1.2× its time). With
``--scaling``, the same at a quarter of the runs too, to show how memory grows with the
number of runs. Figures, not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
from pathlib import Path

from bench_cli import KERNELINDEX, run
from make_corpus import REFERENCES, bundles


def write_side(path: Path, count: int, seed: int) -> None:
    """``count`` bundles; the i-th of each side measures the same workload as the i-th of
    the other (a suite benchmarked twice), so every run has a partner."""
    with open(path, "w", encoding="utf-8") as handle:
        for index, bundle in enumerate(bundles(count, seed)):
            spec = bundle["run"]["spec"]
            for member, field in REFERENCES.items():
                if member not in bundle:  # make_corpus gave it a random digest
                    made = hashlib.sha256(f"{member}{index}".encode()).hexdigest()
                    spec[field] = f"sha256:{made}"
            handle.write(json.dumps(bundle, separators=(",", ":")) + "\n")


def measure(ref: Path, cand: Path, repeats: int) -> dict[str, tuple[float, float, int]]:
    commands = {
        "plain": [KERNELINDEX, "compare", str(ref), str(cand), "--format", "json"],
        "against": [KERNELINDEX, "compare", "--against", str(ref), str(cand), "--format", "json"],
    }
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    peaks = dict.fromkeys(commands, 0)
    for _ in range(repeats):
        for name, command in commands.items():
            status, wall, cpu, peak = run(command)
            if status not in (0, 1):
                raise SystemExit(f"{name}: exit {status}: {' '.join(command)}")
            walls[name].append(wall)
            cpus[name].append(cpu)
            peaks[name] = max(peaks[name], peak)
    return {
        name: (statistics.median(walls[name]), statistics.median(cpus[name]), peaks[name])
        for name in commands
    }


def report(runs: int, figures: dict[str, tuple[float, float, int]]) -> None:
    plain = figures["plain"]
    print(f"\n{runs:,} runs per side ({2 * runs:,} in all)")
    print("| command | wall | CPU | peak RSS | wall ÷ plain | CPU ÷ plain | RSS ÷ plain |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, (wall, cpu, peak) in figures.items():
        print(
            f"| {name} | {wall:.2f} s | {cpu:.2f} s | {peak / 1024:.0f} MiB"
            f" | {wall / plain[0]:.2f}× | {cpu / plain[1]:.2f}× | {peak / plain[2]:.2f}× |"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scaling", action="store_true", help="also a quarter of --runs")
    parser.add_argument("--out", type=Path, help="where to write the corpus (default: a temp dir)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as temp:
        out = args.out or Path(temp)
        out.mkdir(parents=True, exist_ok=True)
        sizes = [args.runs // 4, args.runs] if args.scaling else [args.runs]
        for size in sizes:
            ref, cand = out / f"ref-{size}.jsonl", out / f"cand-{size}.jsonl"
            print(f"writing {ref.name} and {cand.name} ...", file=sys.stderr)
            write_side(ref, size, seed=1)
            write_side(cand, size, seed=2)
            report(size, measure(ref, cand, args.repeats))


if __name__ == "__main__":
    main()
