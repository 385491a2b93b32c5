"""Small record sets for compare's summaries and ``ls``, built in the test.

huggingface and liger on geglu workloads, from the baseline's latencies and liger's
outcomes, with the generator of ``tests/examples/compare`` (which computes every
digest), written as JSON Lines split across any number of files.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

EXAMPLES = Path(__file__).resolve().parent / "examples" / "compare"


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_examples", EXAMPLES / "make_examples.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = generator()

#: One outcome of the implementation on a workload: a latency in ns, "oom", or None (no run).
Outcome = int | str | None


def corpus(baseline: Sequence[int], outcomes: Sequence[Outcome]) -> list[dict[str, Any]]:
    """huggingface and liger on geglu workloads seq=1, 2, ...: the baseline's latencies
    and liger's outcomes, as records (references once, then runs)."""
    fwd, h100 = GEN.protocol("forward"), GEN.environment("h100")
    hf, liger = GEN.implementation("huggingface"), GEN.implementation("liger", "0.5.0")
    records: list[dict[str, Any]] = []
    for index, (base, outcome) in enumerate(zip(baseline, outcomes, strict=True), start=1):
        workload = GEN.workload("geglu", seq=index)
        r_hf = {"protocol": fwd, "workload": workload, "environment": h100, "implementation": hf}
        r_liger = {**r_hf, "implementation": liger}
        records += [*r_hf.values(), liger]
        records.append(GEN.run(f"hf-{index}", r_hf, latency=(base, base, base)))
        if isinstance(outcome, int):
            records.append(GEN.run(f"liger-{index}", r_liger, latency=(outcome,) * 3))
        elif outcome == "oom":
            records.append(GEN.run(f"liger-{index}", r_liger, status="oom", reason="OOM"))
    return records


def write(directory: Path, records: Sequence[dict[str, Any]], files: int = 1) -> None:
    """The records as ``files`` JSON Lines files, round robin."""
    parts: list[list[dict[str, Any]]] = [[] for _ in range(files)]
    for index, record in enumerate(records):
        parts[index % files].append(record)
    for index, part in enumerate(parts):
        text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in part)
        (directory / f"part-{index}.jsonl").write_text(text, encoding="utf-8")
