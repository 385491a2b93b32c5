"""Loading for ``compare``: one library call for one side or both
(:func:`kernelindex_sdk.compare.load`), each side's tree walked once, the progress
bar's total the bytes that walk found, problems written with the bar paused."""

from __future__ import annotations

import io
import os
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from kernelindex_sdk import compare
from kernelindex_sdk.base import progress
from kernelindex_sdk.cli.compare_cmd import run_compare
from kernelindex_sdk.cli.compare_options import CompareOptions
from kernelindex_sdk.errors import Problem

EXAMPLES = Path(__file__).resolve().parent / "examples" / "compare"


def _tree(root: Path, *names: str) -> Path:
    """A folder of nested folders, one example's records in each."""
    folder = root
    for name in names:
        folder = folder / name
        folder.mkdir(parents=True)
        for example in (EXAMPLES / name).iterdir():
            shutil.copy(example, folder / example.name)
    return root


@pytest.fixture
def listings(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How often each folder is listed (``os.scandir``), while the test runs."""
    seen: Counter[str] = Counter()
    real = os.scandir

    def scandir(path: Any = ".") -> Iterator[os.DirEntry[str]]:
        seen[os.fspath(path)] += 1
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    return seen


@pytest.mark.parametrize("against", [False, True])
def test_each_tree_is_walked_once(tmp_path: Path, listings: Counter[str], against: bool) -> None:
    candidate = _tree(tmp_path / "candidate", "sweep", "two-implementations")
    reference = _tree(tmp_path / "reference", "sweep", "two-implementations")
    walked = [candidate, *([reference] if against else [])]
    folders = [str(p) for root in walked for p in [root, *root.rglob("*")] if p.is_dir()]
    options = CompareOptions(
        (str(candidate),), against=(str(reference),) if against else (), progress=True
    )
    out, err = io.StringIO(), io.StringIO()
    listings.clear()
    assert run_compare(options, out=out, err=err) in (0, 1), err.getvalue()
    assert {folder: listings[folder] for folder in folders} == dict.fromkeys(folders, 1)


class _Recorded(progress.Progress):
    """Draws at once, and keeps every bar made."""

    made: ClassVar[list[_Recorded]] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{**kwargs, "delay": 0.0})
        _Recorded.made.append(self)


@pytest.mark.parametrize("against", [False, True])
def test_the_bar_counts_the_bytes_the_walk_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, against: bool
) -> None:
    monkeypatch.setattr(progress, "Progress", _Recorded)
    monkeypatch.setattr(_Recorded, "made", [])
    candidate = _tree(tmp_path / "candidate", "sweep", "two-implementations")
    reference = _tree(tmp_path / "reference", "reruns")
    options = CompareOptions(
        (str(candidate),), against=(str(reference),) if against else (), progress=True
    )
    run_compare(options, out=io.StringIO(), err=io.StringIO())
    sides = [(reference, "reference"), (candidate, "candidate")] if against else [(candidate, "")]
    assert len(_Recorded.made) == len(sides)
    for bar, (root, side) in zip(_Recorded.made, sides, strict=True):
        size = sum(p.stat().st_size for p in root.rglob("*.json*"))
        assert bar.label == (f"compare: loading {side} bytes" if side else "compare: loading bytes")
        assert bar.total == size and bar.count == size


def test_a_problem_is_written_with_the_bar_paused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress, "Progress", _Recorded)
    records = _tree(tmp_path / "records", "sweep")
    (records / "broken.json").write_text('{"apiVersion": ', encoding="utf-8")
    err = io.StringIO()
    run_compare(CompareOptions((str(records),), progress=True), out=io.StringIO(), err=err)
    written = err.getvalue()
    line = next(line for line in written.split("\n") if "broken.json" in line)
    # The bar is erased first (carriage return, blanks, carriage return): the problem
    # starts its own line, never after the bar's text.
    assert line.rsplit("\r", 1)[-1].startswith(str(records / "broken.json"))


def test_paused_erases_the_bar_and_draws_it_again() -> None:
    stream = io.StringIO()
    bar = progress.Progress(10, label="x", stream=stream, enabled=True, delay=0.0)
    bar.update(5)
    drawn = stream.getvalue()
    with bar.paused():
        stream.write("said\n")
    after = stream.getvalue()[len(drawn) :]
    erase = "\r" + " " * len(drawn.lstrip("\r")) + "\r"
    assert after == erase + "said\n" + drawn


def test_load_gives_both_sides_resolved_against_every_record(tmp_path: Path) -> None:
    """The workload records only the reference side holds still describe the
    candidate's runs, and problems of both sides reach the callback in reading order."""
    reference = _tree(tmp_path / "reference", "reruns")
    candidate = tmp_path / "candidate"
    candidate.mkdir()
    (candidate / "broken.json").write_text("[", encoding="utf-8")
    shutil.copy(EXAMPLES / "reruns" / "records.jsonl", candidate / "records.jsonl")
    found: list[Problem] = []
    loaded = compare.load([str(candidate)], [str(reference)], on_problem=found.append)
    assert loaded.reference is not None and loaded.candidate.unreadable == 1
    assert loaded.unreadable == 1 and [p.source for p in found] == [str(candidate / "broken.json")]
    plain = compare.load([str(reference)])
    assert plain.reference is None
    digests = sorted(run.digest for run in plain.candidate.runs)
    assert sorted(run.digest for run in loaded.reference.runs) == digests
    assert sorted(run.digest for run in loaded.candidate.runs) == digests
    records = compare.load_records([str(reference)])
    assert sorted(run.digest for run in compare.resolve_runs(records.index)[0]) == digests


def test_load_records_ticks_once_per_file(tmp_path: Path) -> None:
    records = _tree(tmp_path / "records", "sweep", "two-implementations", "oom")
    ticks: list[None] = []
    loaded = compare.load_records([str(records)], tick=lambda: ticks.append(None))
    assert len(ticks) == 4 and loaded.documents > 4  # two-implementations: two files
