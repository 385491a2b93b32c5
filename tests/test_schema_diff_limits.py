"""``schema diff`` ends, on small schemas that cost much, in bounded time and memory.

Each case runs the real command in a process of its own, held to 1 GiB of address
space, and its CPU time is checked (under 10 s): a verdict, an undecided (exit 3) or
one line (exit 2) — never a traceback, and never exit 1 but for a violation proven.

* an ``allOf`` (or ``anyOf``) diamond of ``$ref``\\ s 24 levels deep, the same on both
  sides (compatible) and with the type at the bottom changed (the violation found);
  a diamond through ``oneOf`` or through two properties, undecided;
* a pattern that backtracks (``^(a+)+$``), with ``minLength`` up to 34;
* ``$ref`` chains of 500 and 5,000 links, plain subschemas nested as deep as a schema
  file may nest, and nested through ``$ref``\\ s 2,000 deep;
* and :mod:`kernelindex_sdk.base.timebox` itself.
"""

from __future__ import annotations

import json
import re
import resource
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from acceptance.support import Run, run_of
from profiles import variants

from kernelindex_sdk.base import timebox

#: What a case may cost.
CPU_SECONDS = 10.0
MEMORY = 1 << 30


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def schema_diff(old: Path, new: Path, *more: str) -> Run:
    """``kernelindex schema diff OLD NEW --mode full`` in a process of its own, held to
    :data:`MEMORY`; its CPU time checked against :data:`CPU_SECONDS`."""
    command = [sys.executable, "-m", "kernelindex_sdk.cli.main", "schema", "diff"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [*command, str(old), str(new), "--mode", "full", *more],
        capture_output=True,
        preexec_fn=_limited,
        timeout=120,
        check=False,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    spent = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    run = run_of(done)
    assert "RecursionError" not in run.output and "MemoryError" not in run.output
    assert spent < CPU_SECONDS, (spent, run.output[-500:])
    if run.exit_code == 1:  # a violation, proven: said on a line of its own
        assert re.search(r"^[A-Z_]+ (backward|forward) ", run.stdout, re.MULTILINE), run.output
    return run


def _pair(where: Path, old: Any, new: Any) -> tuple[Path, Path]:
    """Two schema files, each written as JSON text (``str``: as it is)."""
    where.mkdir(parents=True, exist_ok=True)
    paths = (where / "old.schema.json", where / "new.schema.json")
    for path, schema in zip(paths, (old, new), strict=True):
        path.write_text(schema if isinstance(schema, str) else json.dumps(schema), "utf-8")
    return paths


def _diamond(depth: int, bottom: str, keyword: str = "allOf") -> dict[str, Any]:
    """``d_i = {keyword: [{"$ref": d_{i+1}}, {"$ref": d_{i+1}}]}``, ``d_depth`` of one
    type (``properties``: two members, each ``d_{i+1}``)."""
    defs: dict[str, Any] = {}
    for i in range(depth):
        ref = {"$ref": f"#/$defs/d{i + 1}"}
        if keyword == "properties":
            defs[f"d{i}"] = {"type": "object", "properties": {"a": ref, "b": ref}}
        else:
            defs[f"d{i}"] = {keyword: [ref, dict(ref)]}
    defs[f"d{depth}"] = {"type": bottom}
    return {"$ref": "#/$defs/d0", "$defs": defs}


# --------------------------------------------------------------------------- diamonds


@pytest.mark.parametrize("keyword", ["allOf", "anyOf"])
def test_a_diamond_of_refs_24_deep_is_read_once_per_definition(
    tmp_path: Path, keyword: str
) -> None:
    same = _pair(
        tmp_path / "same", _diamond(24, "integer", keyword), _diamond(24, "integer", keyword)
    )
    run = schema_diff(*same)
    assert run.exit_code == 0, run.output
    assert run.lines[-1].startswith("compatible")
    changed = _pair(
        tmp_path / "changed", _diamond(24, "integer", keyword), _diamond(24, "string", keyword)
    )
    run = schema_diff(*changed)
    assert run.exit_code == 1, run.output
    rules = sorted(line.split()[0] for line in run.lines[:-1])
    assert rules == ["TYPE_NARROWED", "TYPE_WIDENED"]
    assert "witness (old accepts, new rejects): 0" in run.stdout


@pytest.mark.parametrize("keyword", ["oneOf", "properties"])
def test_a_diamond_no_normal_form_keeps_small_is_undecided_in_time(
    tmp_path: Path, keyword: str
) -> None:
    changed = _pair(tmp_path, _diamond(24, "integer", keyword), _diamond(24, "string", keyword))
    run = schema_diff(*changed)
    assert run.exit_code == 3, run.output
    assert "UNDECIDED" in run.stdout and run.lines[-1].startswith("cannot decide")


# --------------------------------------------------------------------------- patterns


@pytest.mark.parametrize("length", variants([28, 31, 34], quick={1}))
def test_a_backtracking_pattern_is_judged_in_time_or_undecided(tmp_path: Path, length: int) -> None:
    catastrophic = {"type": "string", "pattern": "^(a+)+$", "minLength": length}
    # On one side only: the minLength relaxed is shown by a string the pattern takes.
    run = schema_diff(*_pair(tmp_path / "one", catastrophic, {**catastrophic, "minLength": 1}))
    assert run.exit_code == 1, run.output
    assert "BOUND_RELAXED forward" in run.stdout
    # Every candidate of a long run of "a"s makes ^(a+)+b$ backtrack: undecided, in time.
    other = {**catastrophic, "pattern": "^(a+)+b$"}
    run = schema_diff(*_pair(tmp_path / "two", catastrophic, other))
    assert run.exit_code == 3, run.output
    assert re.search("CPU seconds|ran out of time", run.stdout), run.stdout


# --------------------------------------------------------------------------- depth


def _chain(links: int, bottom: str) -> dict[str, Any]:
    defs: dict[str, Any] = {f"r{i}": {"$ref": f"#/$defs/r{i + 1}"} for i in range(links)}
    defs[f"r{links}"] = {"type": bottom}
    return {"$ref": "#/$defs/r0", "$defs": defs}


@pytest.mark.parametrize("links", [500, pytest.param(5000, marks=pytest.mark.slow)])
def test_a_long_ref_chain_is_followed_without_recursion(tmp_path: Path, links: int) -> None:
    run = schema_diff(*_pair(tmp_path / "same", _chain(links, "integer"), _chain(links, "integer")))
    assert run.exit_code == 0, run.output
    run = schema_diff(
        *_pair(tmp_path / "changed", _chain(links, "integer"), _chain(links, "string"))
    )
    # The engine that judges witnesses resolves each link by recursion: a record it
    # cannot judge is no witness, so the change is undecided, never passed.
    assert run.exit_code in (1, 3), run.output
    assert "TYPE_NARROWED" in run.stdout


def _nested(levels: int, bottom: str) -> str:
    return '{"type":"object","properties":{"p":' * levels + f'{{"type":"{bottom}"}}' + "}}" * levels


@pytest.mark.parametrize("levels", [100, 2000])
def test_deeply_nested_subschemas_are_one_line(tmp_path: Path, levels: int) -> None:
    run = schema_diff(*_pair(tmp_path, _nested(levels, "integer"), _nested(levels, "string")))
    assert run.exit_code == 2, run.output
    assert not run.stdout
    (line,) = run.stderr.splitlines()
    assert "old.schema.json" in line and ("nested" in line or "deeper than" in line)


def test_nesting_through_refs_is_undecided_not_a_traceback(tmp_path: Path) -> None:
    def schema(bottom: str) -> dict[str, Any]:
        defs: dict[str, Any] = {
            f"n{i}": {"type": "object", "properties": {"p": {"$ref": f"#/$defs/n{i + 1}"}}}
            for i in range(2000)
        }
        defs["n2000"] = {"type": bottom}
        return {"$ref": "#/$defs/n0", "$defs": defs}

    run = schema_diff(*_pair(tmp_path, schema("integer"), schema("string")))
    assert run.exit_code == 3, run.output
    assert "recursion limit" in run.stdout


# --------------------------------------------------------------------------- the time box


def test_a_search_that_runs_over_is_stopped_and_remembered() -> None:
    slow = re.compile(r"^(a+)+b$")
    with timebox.armed() as armed:
        assert armed
        assert timebox.search(slow, "a" * 10 + "b")
        with pytest.raises(timebox.OverBudget, match="CPU seconds"):
            timebox.search(slow, "a" * 40)
        with pytest.raises(timebox.OverBudget, match="a shorter one already"):
            timebox.search(slow, "a" * 41)
        assert not timebox.search(slow, "a" * 5)  # shorter: still tried


def test_unarmed_or_off_the_main_thread_nothing_is_bounded() -> None:
    seen: list[bool] = []

    def elsewhere() -> None:
        with timebox.armed() as armed:
            seen.append(armed)

    thread = threading.Thread(target=elsewhere)
    thread.start()
    thread.join()
    assert seen == [False]
    with timebox.bounded("nothing"):  # not armed: a plain block
        pass
