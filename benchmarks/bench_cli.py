"""Whole-process benchmarks: kernelindex validate against ajv-cli and check-jsonschema.

    python benchmarks/make_corpus.py --files 2000 --jsonl-lines 100000   # once
    bash benchmarks/setup_peers.sh                                        # once
    python benchmarks/bench_cli.py [--repeats 5] [--million]

Every command runs as its own process, peers interleaved repeat by repeat in one run
(so they share whatever else the machine is doing); figures are medians of wall time
and of the child's CPU time (user + sys, from ``wait4``), with ratios against
``kernelindex validate`` measured in the same run. Before timing, each peer must
accept a valid file and reject ``invalid.json`` (an unknown key) and a bundle with a
date that does not exist (2024-02-30): a peer that validates nothing is not timed.

Sections: 2,000 files (kernelindex ``--jobs 1`` and ``--jobs 2``, ajv-cli with
ajv-formats, check-jsonschema); cold start on one file; JSON Lines of 100k lines
(and 1M with ``--million``: a 2.3 GB file) with time and peak RSS; one JSON Lines line
of 150 MB (a bundle with a huge annotation), ``--jobs 2`` against ``--jobs 1``; the
Liger CSV import, when ``shared/liger/all_benchmark_data.csv`` is there; ``bare``:
30,000 JSON Lines bundles, ``kernelindex validate --jobs 1`` against
``benchmarks/bare_loop.py`` (orjson + jsonschema-rs on the bundled schema, no other
check), the ratio the JSON Lines target of ``benchmarks/README.md`` is stated in.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CORPUS = HERE / "corpus"
BIN = Path(sys.executable).parent
KERNELINDEX = str(BIN / "kernelindex")
AJV = HERE / "node_modules" / ".bin" / "ajv"
CHECK_JSONSCHEMA = HERE / ".peers-venv" / "bin" / "check-jsonschema"
LIGER_CSV = ROOT.parent / "shared" / "liger" / "all_benchmark_data.csv"


def run(command: list[str]) -> tuple[int, float, float, int]:
    """(exit status, wall s, CPU s, peak RSS KiB) of one command, output discarded."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def median_runs(
    peers: dict[str, list[str]], repeats: dict[str, int] | int
) -> dict[str, tuple[float, float, int]]:
    """Median (wall, CPU) and max RSS of each peer, repeats interleaved."""
    counts = {n: repeats if isinstance(repeats, int) else repeats[n] for n in peers}
    walls: dict[str, list[float]] = {n: [] for n in peers}
    cpus: dict[str, list[float]] = {n: [] for n in peers}
    rss: dict[str, int] = {n: 0 for n in peers}
    for round_ in range(max(counts.values())):
        for name, command in peers.items():
            if round_ >= counts[name]:
                continue
            _, wall, cpu, peak = run(command)
            walls[name].append(wall)
            cpus[name].append(cpu)
            rss[name] = max(rss[name], peak)
    return {n: (statistics.median(walls[n]), statistics.median(cpus[n]), rss[n]) for n in peers}


def table(title: str, results: dict[str, tuple[float, float, int]], baseline: str) -> None:
    print(f"\n### {title}\n")
    print("| command | wall (median) | CPU (median) | wall ÷ kernelindex | peak RSS |")
    print("|---|---:|---:|---:|---:|")
    base = results[baseline][0]
    for name, (wall, cpu, rss) in results.items():
        ratio = wall / base
        print(f"| {name} | {wall:.3f} s | {cpu:.3f} s | {ratio:.1f}× | {rss / 1024:.0f} MiB |")
    sys.stdout.flush()


def sanity(name: str, command: list[str], valid: str, invalid: list[str]) -> bool:
    """The peer accepts a valid file and rejects each invalid one."""
    ok = run([*command, valid])[0] == 0
    for path in invalid:
        ok = ok and run([*command, path])[0] != 0
    print(f"- sanity, {name}: {'accepts valid, rejects invalid' if ok else 'FAILED: not timed'}")
    return ok


def ensure_bytecode() -> str:
    """Compile kernelindex's modules where they are installed, as ``pip install`` does.

    An editable install (``pip install -e``) leaves ``.py`` files only, and with
    ``PYTHONDONTWRITEBYTECODE`` set (as on the development machine) every run would
    compile them again: ~25 ms of each start-up that no installed copy pays.
    """
    import compileall

    import bench_adapters
    import kernelindex_sdk

    for package in (kernelindex_sdk, bench_adapters):
        compileall.compile_dir(str(Path(package.__file__).parent), quiet=1)
    return str(Path(kernelindex_sdk.__file__).parent)


def write_long_line(path: Path, bundle_file: Path, size: int) -> None:
    """One JSON Lines line of about ``size`` bytes: a bundle whose run carries a huge
    annotation, then a short valid line (so the file is more than one range)."""
    bundle = json.loads(bundle_file.read_text("utf-8"))
    short = json.dumps(bundle)
    bundle["run"]["metadata"].setdefault("annotations", {})["blob"] = "x" * size
    with open(path, "w", encoding="utf-8") as out:
        out.write(json.dumps(bundle) + "\n" + short + "\n")


def bare_peer(work: Path, ki: list[str], jsonl: str, repeats: int) -> None:
    """30,000 bundles: ``validate --jobs 1`` against the bare orjson + jsonschema-rs loop.

    Both must agree on the count of valid lines first (the corpus is all valid, so a
    bare loop that rejected some would be measuring something else)."""
    subprocess.run([KERNELINDEX, "schema", "export", "--bundled", str(work / "bundled")],
                   check=True, capture_output=True)  # fmt: skip
    (bundled,) = (work / "bundled").rglob("bundle.schema.json")
    lines = work / "30k.jsonl"
    with open(jsonl, "rb") as source, open(lines, "wb") as out:
        for _, line in zip(range(30_000), source, strict=False):
            out.write(line)
    bare = [sys.executable, str(HERE / "bare_loop.py"), str(bundled), str(lines)]
    said = subprocess.run(bare, capture_output=True, text=True).stdout.strip()
    print(f"- sanity, bare loop: {said}")
    if said != "30000 valid, 0 invalid" or run([*ki, "--jobs", "1", str(lines)])[0] != 0:
        print("- bare loop or kernelindex does not accept all 30,000 lines: not timed")
        return
    peers = {"kernelindex validate --jobs 1, 30,000 lines": [*ki, "--jobs", "1", str(lines)],
             "bare loop (orjson + jsonschema-rs is_valid)": bare}  # fmt: skip
    results = median_runs(peers, repeats)
    table("30,000 JSON Lines bundles against the bare loop", results, next(iter(peers)))
    (ki_wall, ki_cpu, _), (bare_wall, bare_cpu, _) = results.values()
    print(f"\nkernelindex ÷ bare loop: {ki_wall / bare_wall:.2f}× wall, "
          f"{ki_cpu / bare_cpu:.2f}× CPU (target ≤ 2.0×)")  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--slow-repeats", type=int, default=3, help="for check-jsonschema")
    parser.add_argument("--million", action="store_true", help="also 1,000,000 JSONL lines")
    parser.add_argument("--skip-files", action="store_true")
    parser.add_argument(
        "--sections",
        default="files,cold,jsonl,bare,longline,liger",
        help="comma-separated subset of: files, cold, jsonl, bare, longline, liger (default: all)",
    )
    args = parser.parse_args(argv)
    sections = set(args.sections.split(","))
    if args.skip_files:
        sections.discard("files")

    files_dir = CORPUS / "files"
    files = sorted(str(p) for p in files_dir.glob("*.json"))
    if len(files) < 2000 or not (CORPUS / "records.jsonl").exists():
        raise SystemExit("run: python benchmarks/make_corpus.py --files 2000 --jsonl-lines 100000")
    work = Path(tempfile.mkdtemp(prefix="kernelindex-bench-"))
    try:
        bad_date = json.loads(Path(files[0]).read_text("utf-8"))
        bad_date["run"]["spec"]["observedAt"] = "2024-02-30T00:00:00Z"
        (work / "bad-date.json").write_text(json.dumps(bad_date), "utf-8")
        invalid = [str(CORPUS / "invalid.json"), str(work / "bad-date.json")]
        subprocess.run([KERNELINDEX, "schema", "export", str(work / "schemas")], check=True,
                       capture_output=True)  # fmt: skip
        schemas = work / "schemas" / "kernelindex.dev" / "v1alpha1"
        bundle = str(schemas / "bundle.schema.json")
        refs = [
            a for p in sorted(schemas.glob("*.json")) if str(p) != bundle for a in ("-r", str(p))
        ]
        print(f"kernelindex corpus: {len(files)} files under {files_dir}")

        ki = [KERNELINDEX, "validate"]
        ajv = [str(AJV), "validate", "--spec=draft2020", "-c", "ajv-formats",
               "--allow-union-types", "-s", bundle, *refs, "-d"]  # fmt: skip
        cj = [str(CHECK_JSONSCHEMA), "--base-uri", f"file://{bundle}", "--schemafile", bundle]
        have_ajv = AJV.exists() and sanity("ajv-cli", ajv, files[0], invalid)
        have_cj = CHECK_JSONSCHEMA.exists() and sanity("check-jsonschema", cj, files[0], invalid)
        assert sanity("kernelindex", ki, files[0], invalid)

        print(f"- bytecode compiled under {ensure_bytecode()}")
        if "files" in sections:
            peers = {
                "kernelindex validate": [*ki, str(files_dir)],
                "kernelindex validate --jobs 1": [*ki, "--jobs", "1", str(files_dir)],
            }
            repeats = {name: args.repeats for name in peers}
            if have_ajv:
                peers["ajv-cli + ajv-formats"] = [*ajv, str(files_dir / "*.json")]
                repeats["ajv-cli + ajv-formats"] = args.repeats
            if have_cj:
                peers["check-jsonschema"] = [*cj, *files]
                repeats["check-jsonschema"] = args.slow_repeats
            results = median_runs(peers, repeats)
            table(f"{len(files)} files, whole process", results, "kernelindex validate")

        one = files[0]
        peers = {}
        if "cold" in sections:
            peers = {
                "kernelindex validate one.json": [*ki, one],
                "python -c pass (interpreter alone)": [sys.executable, "-c", "pass"],
            }
        if peers and have_ajv:
            peers["ajv-cli, one file"] = [*ajv, one]
        if peers:
            table("Cold start, one file", median_runs(peers, 15), "kernelindex validate one.json")

        jsonl = str(CORPUS / "records.jsonl")
        with open(jsonl, "rb") as handle:
            lines = sum(1 for _ in handle)
        peers = {
            f"validate {lines:,} lines --jobs 1": [*ki, "--jobs", "1", jsonl],
            f"validate {lines:,} lines --jobs 2": [*ki, "--jobs", "2", jsonl],
        }
        if "jsonl" in sections:
            table("JSON Lines", median_runs(peers, 3), f"validate {lines:,} lines --jobs 1")
        if "bare" in sections:
            bare_peer(work, ki, jsonl, args.repeats)
        if args.million:
            big = work / "million.jsonl"
            with open(big, "wb") as out:
                for _ in range(1_000_000 // lines):
                    with open(jsonl, "rb") as source:
                        shutil.copyfileobj(source, out)
            peers = {
                "validate 1,000,000 lines --jobs 2": [*ki, "--jobs", "2", str(big)],
                "validate 1,000,000 lines --jobs 1": [*ki, "--jobs", "1", str(big)],
            }
            table(
                "JSON Lines, 1M lines", median_runs(peers, 1), "validate 1,000,000 lines --jobs 1"
            )
            big.unlink()

        if "longline" in sections:
            long_line = work / "long-line.jsonl"
            write_long_line(long_line, Path(files[0]), 150 << 20)
            peers = {
                "one 150 MB line --jobs 1": [*ki, "--jobs", "1", str(long_line)],
                "one 150 MB line --jobs 2": [*ki, "--jobs", "2", str(long_line)],
            }
            table("One long JSON Lines line", median_runs(peers, 5), "one 150 MB line --jobs 1")
            long_line.unlink()

        if "liger" in sections and LIGER_CSV.exists():
            out = work / "liger"
            peers = {"kernelindex import liger (full CSV, jsonl)": [
                KERNELINDEX, "import", "liger", str(LIGER_CSV), "--out", str(out),
                "--layout", "jsonl"]}  # fmt: skip
            table("Liger import", median_runs(peers, 3), next(iter(peers)))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
