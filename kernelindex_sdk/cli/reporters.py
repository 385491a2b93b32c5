"""Reporters, chosen by name with ``--format``: how validation results are shown.

A reporter receives each item as the pipeline yields it (so text output streams),
the late problems, and the final tally; it never decides anything. Every line a
reporter writes is one line whatever the input holds: text goes through
:func:`~kernelindex_sdk.printable.one_line`, JSON is written ASCII-only (control
characters and everything beyond ASCII as ``\\u`` escapes), so it stays valid JSON
under any output encoding.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from typing import IO, Any

from kernelindex_sdk.errors import Problem
from kernelindex_sdk.pipeline import Tally
from kernelindex_sdk.printable import one_line
from kernelindex_sdk.validation import Item


def format_problem(problem: Problem) -> str:
    """``file[:line[:col]]: <pointer>: message`` — one printable line, always."""
    return str(problem)


def problem_json(problem: Problem) -> dict[str, Any]:
    return {
        "file": problem.source,
        "line": problem.line,
        "column": problem.column,
        "pointer": problem.pointer,
        "code": problem.code,
        "message": problem.message,
    }


class TextReporter:
    """Problems on stdout as they are found; the summary line at the end."""

    def __init__(self, out: IO[str] | None = None, *, verbose: bool = False) -> None:
        self.out = out or sys.stdout
        self.verbose = verbose

    def item(self, item: Item) -> None:
        for problem in item.problems:
            self.out.write(format_problem(problem) + "\n")
        if self.verbose and item.valid:
            where = f"{item.source}:{item.line}" if item.line else item.source
            line = f"{where}: {item.pointer or '/'}: ok ({item.kind} {item.name})"
            self.out.write(one_line(line) + "\n")

    def problems(self, problems: Iterable[Problem]) -> None:
        for problem in problems:
            self.out.write(format_problem(problem) + "\n")

    def finish(self, tally: Tally) -> None:
        self.out.write(tally.summary() + "\n")


class JsonReporter:
    """One JSON object at the end: the tally and every problem."""

    def __init__(self, out: IO[str] | None = None, *, verbose: bool = False) -> None:
        self.out = out or sys.stdout
        self.found: list[dict[str, Any]] = []

    def item(self, item: Item) -> None:
        self.found.extend(problem_json(p) for p in item.problems)

    def problems(self, problems: Iterable[Problem]) -> None:
        self.found.extend(problem_json(p) for p in problems)

    def finish(self, tally: Tally) -> None:
        report = {
            "valid": tally.valid,
            "invalid": tally.invalid,
            "unreadable": tally.unreadable,
            "files": tally.files,
            "ok": tally.invalid == 0 and tally.unreadable == 0,
            "problems": self.found,
        }
        json.dump(report, self.out, ensure_ascii=True, indent=2)
        self.out.write("\n")


Reporter = TextReporter | JsonReporter

REPORTERS: dict[str, Callable[..., Reporter]] = {
    "text": TextReporter,
    "json": JsonReporter,
}
