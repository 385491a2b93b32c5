"""Complete bundles for the store's benchmark and tests: every reference resolvable.

``make_corpus.bundles`` varies the seeds, which embed a protocol and an environment
but only *reference* their workload and implementation: ``validate --strict-refs``
(and so ``kernelindex store add``) refuses them. This adds the two missing members,
built from the seed's own ``sourceNative`` (kernel and pass from ``benchmark``,
provider from ``externalId``), with one of eight batch sizes and three releases so
that workloads and implementations repeat across runs as they do in real data, and
points the run at them. Every bundle is distinct (its own latencies and timestamp)::

    python benchmarks/store_corpus.py 1000 out.jsonl
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_corpus import _digest, bundles

_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128)
_RELEASES = ("0.5.10", "0.6.0", "0.6.1")


def complete(bundle: dict[str, Any], index: int) -> dict[str, Any]:
    """``bundle`` with a workload and an implementation its run references."""
    run = bundle["run"]
    native = run["spec"]["sourceNative"]
    kernel, pass_ = native["benchmark"].split("/")
    provider = native["externalId"].split("/")[2]
    batch = _BATCHES[index % len(_BATCHES)]
    release = _RELEASES[(index // len(_BATCHES)) % len(_RELEASES)]
    workload = {
        "apiVersion": run["apiVersion"],
        "kind": "Workload",
        "metadata": {"name": f"{kernel}-{pass_}-batch{batch}-bf16"},
        "spec": {
            "kernel": kernel,
            "pass": pass_,
            "parameters": {"batch": batch, "seq": 4096, "hidden": 4096},
            "dtype": "bf16",
        },
    }
    implementation = {
        "apiVersion": run["apiVersion"],
        "kind": "Implementation",
        "metadata": {"name": f"{provider}-{release.replace('.', '-')}"},
        "spec": {"provider": provider, "package": {"name": "liger-kernel", "version": release}},
    }
    run["spec"]["workloadDigest"] = _digest(workload)
    run["spec"]["implementationDigest"] = _digest(implementation)
    bundle["workload"] = workload
    bundle["implementation"] = implementation
    return bundle


def complete_bundles(count: int, seed: int = 0) -> Iterator[dict[str, Any]]:
    """``count`` distinct bundles that pass ``validate --strict-refs`` together."""
    for index, bundle in enumerate(bundles(count, seed)):
        yield complete(bundle, index)


def write_jsonl(path: Path, count: int, seed: int = 0) -> None:
    """``count`` complete bundles, one per line."""
    with open(path, "w", encoding="utf-8") as handle:
        for bundle in complete_bundles(count, seed):
            handle.write(json.dumps(bundle, ensure_ascii=False, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    write_jsonl(Path(sys.argv[2]), int(sys.argv[1]))
