"""Seconds ``kernelindex schema diff`` takes on schemas with large enumerations.

    python benchmarks/bench_schema_diff.py [--sizes 1000,10000,30000] [--cases a,b]
        [--timeout S] [--source DIR]

Each case writes an OLD and a NEW schema file of ``n`` values and times
``kernelindex_sdk.schemadiff.diff(OLD, NEW, mode="full")`` in a fresh process (one
core; the process's CPU time, so a shared machine disturbs it little), stopped after
``--timeout`` seconds. ``--source DIR`` runs the ``kernelindex_sdk`` found in DIR
instead of this checkout's (``git archive OLD_COMMIT | tar -x -C DIR`` gives the code
before a change, for a figure of before and after in one run). The verdict and the
number of violations are printed beside the time, so two versions can be seen to agree.

The cases:

* ``swapped``: a string enum loses its first value and gains another.
* ``disjoint``: every value is replaced (each one a violation, each with a witness).
* ``numbers``: integers, then the same as floats (``1`` and ``1.0``), one swapped.
* ``consts``: ``anyOf`` of ``n`` ``const``\\ s, one swapped.
* ``allof``: ``allOf`` of two overlapping enums against one of them.
* ``required``: an object requiring ``n`` members against one requiring one fewer.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DRAFT = "https://json-schema.org/draft/2020-12/schema"

_RUN = """
import json, resource, sys
from kernelindex_sdk.schemadiff import diff
report = diff(sys.argv[1], sys.argv[2], mode="full")
usage = resource.getrusage(resource.RUSAGE_SELF)
verdict = "compatible" if report.compatible else "violations" if report.violations else "undecided"
print(json.dumps([usage.ru_utime + usage.ru_stime, verdict, len(report.violations)]))
"""


def _object(member: Any, **extra: Any) -> dict[str, Any]:
    return {"$schema": DRAFT, "type": "object", "properties": {"e": member}, **extra}


def case(name: str, n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """OLD and NEW schemas of case ``name`` with ``n`` values."""
    words = [f"v{i}" for i in range(n)]
    if name == "swapped":
        return _object({"enum": words}), _object({"enum": [*words[1:], "extra"]})
    if name == "disjoint":
        return _object({"enum": words}), _object({"enum": [f"w{i}" for i in range(n)]})
    if name == "numbers":
        half = n // 2
        values: list[Any] = [*range(half), *(float(i) for i in range(half))]
        return _object({"enum": values}), _object({"enum": [*values[1:], -1]})
    if name == "consts":
        old = [{"const": w} for w in words]
        return _object({"anyOf": old}), _object({"anyOf": [*old[1:], {"const": "extra"}]})
    if name == "allof":
        both = {"allOf": [{"enum": words}, {"enum": [*words[n // 2 :], "x"]}]}
        return _object(both), _object({"enum": words[n // 2 :]})
    if name == "required":
        props = {w: {"type": "integer"} for w in words}
        return (
            {"$schema": DRAFT, "type": "object", "properties": props, "required": words},
            {"$schema": DRAFT, "type": "object", "properties": props, "required": words[1:]},
        )
    raise SystemExit(f"unknown case {name!r}")


CASES = ("swapped", "disjoint", "numbers", "consts", "allof", "required")


def measure(source: Path, old: Path, new: Path, timeout: float) -> str:
    # -S: no site hooks, so an editable install of this checkout cannot win over SOURCE.
    paths = [str(source), *(p for p in sys.path if p.endswith("site-packages"))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    try:
        done = subprocess.run(
            [sys.executable, "-S", "-c", _RUN, str(old), str(new)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            cwd=old.parent,  # not this checkout: "" heads sys.path under -c
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"> {timeout:.0f} s (stopped)"
    if done.returncode != 0:
        return "failed: " + (done.stderr.strip().splitlines() or ["?"])[-1]
    seconds, verdict, count = json.loads(done.stdout)
    return f"{seconds:8.2f} s  {verdict} ({count})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000,30000")
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--source", type=Path, default=ROOT)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.cases.split(","):
            for n in (int(s) for s in args.sizes.split(",")):
                old_schema, new_schema = case(name, n)
                old, new = Path(tmp, "old.schema.json"), Path(tmp, "new.schema.json")
                old.write_text(json.dumps(old_schema), encoding="utf-8")
                new.write_text(json.dumps(new_schema), encoding="utf-8")
                result = measure(args.source.resolve(), old, new, args.timeout)
                print(f"{name:<9} {n:>7}  {result}", flush=True)


if __name__ == "__main__":
    main()
