"""A ``jsonl`` merge keeps every line already in the stream (#29).

A digest leaves metadata out, so a stream can hold two records of one digest: a copy
added by hand (or by another tool) with another name or title. Before #29 the merge
kept one record per digest and silently dropped the other line (``records kept 59``
of 60, exit 0). Real commands on real files.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from liger_rows import good_rows, row, write_csv

from kernelindex_sdk.canonical import digest

COMMAND = [sys.executable, "-m", "kernelindex_sdk.cli.main", "import", "liger"]


def run_import(source: Path, out: Path) -> tuple[int, str]:
    done = subprocess.run(
        [*COMMAND, str(source), "--out", str(out), "--layout", "jsonl"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in done.stderr
    return done.returncode, done.stderr


def records(stream: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.read_text("utf-8").splitlines()]


def kept(err: str) -> int:
    line = next(line for line in err.splitlines() if line.startswith("records kept"))
    return int(line.split()[-1])


def test_a_hand_added_copy_of_one_digest_survives_a_merge(tmp_path: Path) -> None:
    out = tmp_path / "out"
    status, err = run_import(write_csv(tmp_path / "a.csv", good_rows(2)), out)
    assert status == 0, err
    stream = out / "liger.jsonl"
    before = records(stream)
    workload = next(r for r in before if r["kind"] == "Workload")
    copy = json.loads(json.dumps(workload))
    copy["metadata"]["name"] = "a-hand-added-alias"
    copy["metadata"]["title"] = "The same shape, under my own title"
    assert digest(copy) == digest(workload), "metadata is outside the digest"
    with stream.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(copy, separators=(",", ":")) + "\n")
    everything = [*before, copy]

    status, err = run_import(write_csv(tmp_path / "b.csv", [row(x_value="8")]), out)
    assert status == 0, err
    assert kept(err) == len(everything), "every line already there is kept"
    after = records(stream)
    for record in everything:
        assert record in after, f"lost {record['kind']} {record['metadata']['name']}"
    # What the second import adds is added once: its protocol, environment and
    # implementation are already there (the same digest) and are not written again.
    digests = [digest(r) for r in after]
    assert len(after) == len(everything) + 2, "one new workload and one new run"
    assert digests.count(digest(workload)) == 2

    # And again: the merge is stable, the file untouched.
    mtime = stream.stat().st_mtime_ns
    status, err = run_import(tmp_path / "b.csv", out)
    assert status == 0 and kept(err) == len(after)
    assert stream.stat().st_mtime_ns == mtime
