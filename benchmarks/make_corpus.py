"""Write a benchmark corpus: N seed-like bundle files and a JSON Lines file.

Every record is a variation of one of the seed bundles (``tests/examples/valid/seeds/``): new
latencies (p20 <= median <= p80, so the semantic checks pass), new names, new
timestamps (all in the past), a software map on the environment, and every digest a
run makes of its embedded records recomputed, so each file is valid::

    python benchmarks/make_corpus.py --files 2000 --jsonl-lines 100000 benchmarks/corpus

writes ``benchmarks/corpus/files/00000.json ...`` (indented like the seeds, ~3 KB
each), ``benchmarks/corpus/records.jsonl`` (one compact bundle per line, ~2 KB) and
``benchmarks/corpus/invalid.json`` (one bundle with an unknown key, for checking that
a validator really validates). The output is deterministic for a given ``--seed``.
``benchmarks/corpus/`` is git-ignored: nothing large is committed.

With ``--file-writers`` the same files are also written by each writer the
files target names, one folder each: ``files-indent2/`` (``json.dumps(indent=2)``, its
``\\u00b7`` escapes), ``files-indent2-utf8/`` (``json.dumps(indent=2,
ensure_ascii=False)``) and ``files-orjson-indent2/`` (``orjson.dumps(option=
OPT_INDENT_2)``), each file with a final newline — the folders ``bench_ab.py --files``
sets against ajv-cli.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import sys
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "tests" / "examples" / "valid" / "seeds"
#: Members a bundle may embed → the run spec field that references each.
REFERENCES = {
    "protocol": "protocolDigest",
    "workload": "workloadDigest",
    "environment": "environmentDigest",
    "implementation": "implementationDigest",
}
_EPOCH = datetime(2023, 1, 1, tzinfo=timezone.utc)


def _digest(record: dict[str, Any]) -> str:
    # The reference definition, so the corpus does not depend on the code it measures.
    import hashlib

    import rfc8785

    identity = {k: record[k] for k in ("apiVersion", "kind", "spec")}
    return "sha256:" + hashlib.sha256(rfc8785.dumps(identity)).hexdigest()


def load_seeds(directory: Path = SEEDS) -> list[dict[str, Any]]:
    """The seed bundles, in file-name order."""
    seeds = [json.loads(p.read_text("utf-8")) for p in sorted(directory.glob("*.json"))]
    if not seeds:
        raise SystemExit(f"no seeds in {directory}")
    return seeds


def variant(seed: dict[str, Any], index: int, rng: random.Random) -> dict[str, Any]:
    """A valid bundle derived from ``seed``: the index-th of the corpus."""
    bundle = copy.deepcopy(seed)
    run = bundle["run"]
    spec = run["spec"]
    median = rng.randint(5_000, 200_000_000)
    low = max(1, int(median * rng.uniform(0.90, 1.0)))
    high = int(median * rng.uniform(1.0, 1.25))
    timing = spec.get("timing")
    if timing is not None:
        timing["latencyNs"] = {"median": median}
        spec["measurements"] = [
            {"unit": "ns", "value": low, "metric": "latency", "statistic": "p20"},
            {"unit": "ns", "value": high, "metric": "latency", "statistic": "p80"},
        ]
        native = spec.get("sourceNative", {}).get("metrics")
        if isinstance(native, dict):
            native.clear()
            native.update({"ms_20": low / 1e6, "ms_50": median / 1e6, "ms_80": high / 1e6})
    observed = _EPOCH + timedelta(seconds=rng.randint(0, 3 * 365 * 86400))
    millis = rng.randint(0, 999)
    spec["observedAt"] = observed.strftime("%Y-%m-%dT%H:%M:%S") + f".{millis:03d}Z"
    run["metadata"]["name"] = f"{run['metadata']['name'][:80]}-c{index:07d}"
    labels = run["metadata"].setdefault("labels", {})
    labels["corpus_index"] = str(index)
    environment = bundle.get("environment")
    if isinstance(environment, dict):
        environment["spec"]["software"] = {
            "torch": f"2.{rng.randint(0, 11)}.{rng.randint(0, 3)}",
            "triton": f"3.{rng.randint(0, 6)}.0",
        }
    for member, field in REFERENCES.items():
        record = bundle.get(member)
        if isinstance(record, dict):
            spec[field] = _digest(record)
        else:
            spec[field] = "sha256:" + rng.randbytes(32).hex()
    return bundle


def bundles(count: int, seed: int = 0) -> Iterator[dict[str, Any]]:
    """``count`` corpus bundles, cycling through the seeds."""
    seeds = load_seeds()
    rng = random.Random(seed)
    for index in range(count):
        yield variant(seeds[index % len(seeds)], index, rng)


def invalid_bundle() -> dict[str, Any]:
    """A bundle every JSON Schema validator must reject: an unknown key in the run."""
    bundle = copy.deepcopy(load_seeds()[0])
    bundle["run"]["spec"]["unexpected"] = True
    return bundle


def _orjson_indent2(bundle: Any) -> str:
    import orjson  # a dependency of kernelindex's fast path, not of this script otherwise

    return orjson.dumps(bundle, option=orjson.OPT_INDENT_2).decode() + "\n"


#: ``--file-writers``: folder → how that writer writes a bundle (with a final newline).
FILE_WRITERS: dict[str, Callable[[Any], str]] = {
    "files-indent2": lambda b: json.dumps(b, indent=2) + "\n",
    "files-indent2-utf8": lambda b: json.dumps(b, indent=2, ensure_ascii=False) + "\n",
    "files-orjson-indent2": _orjson_indent2,
}


def write_corpus(
    out: Path,
    files: int,
    jsonl_lines: int,
    seed: int = 0,
    *,
    quiet: bool = False,
    file_writers: bool = False,
) -> None:
    """Write ``out/files/*.json``, ``out/records.jsonl`` and ``out/invalid.json`` (and,
    with ``file_writers``, the files again in one folder per :data:`FILE_WRITERS`)."""
    writers: dict[str, Callable[[Any], str]] = {
        "files": lambda b: json.dumps(b, ensure_ascii=False, indent=2) + "\n",
        **(FILE_WRITERS if file_writers else {}),
    }
    for folder in writers:
        (out / folder).mkdir(parents=True, exist_ok=True)
        for stale in (out / folder).glob("*.json"):
            stale.unlink()
    for index, bundle in enumerate(bundles(files, seed)):
        for folder, write in writers.items():
            (out / folder / f"{index:05d}.json").write_text(write(bundle), "utf-8")
    if jsonl_lines:
        # A few thousand distinct lines, repeated: generating 1M unique bundles would
        # take longer than validating them, and repetition changes no validator's work.
        distinct = [
            json.dumps(b, ensure_ascii=False, separators=(",", ":")) + "\n"
            for b in bundles(min(jsonl_lines, 5000), seed + 1)
        ]
        tmp = out / "records.jsonl.tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            for index in range(jsonl_lines):
                handle.write(distinct[index % len(distinct)])
        os.replace(tmp, out / "records.jsonl")
    invalid = json.dumps(invalid_bundle(), ensure_ascii=False, indent=2) + "\n"
    (out / "invalid.json").write_text(invalid, "utf-8")
    if not quiet:
        print(f"wrote {files} files and {jsonl_lines} JSONL lines under {out}", file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, nargs="?", default=ROOT / "benchmarks" / "corpus")
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--jsonl-lines", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--file-writers",
        action="store_true",
        help="also write the files as json.dumps(indent=2), json.dumps(indent=2, "
        "ensure_ascii=False) and orjson OPT_INDENT_2 do, a folder each",
    )
    args = parser.parse_args(argv)
    write_corpus(args.out, args.files, args.jsonl_lines, args.seed, file_writers=args.file_writers)


if __name__ == "__main__":
    main()
