"""Reporters, chosen by name with ``--format``: how validation results are shown.

A reporter receives each item as it is validated (so text output streams) and the
final tally; it never decides anything.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

from kernelindex_sdk.errors import Problem
from kernelindex_sdk.validation import Item


@dataclass(slots=True)
class Tally:
    """Counts for the summary line."""

    valid: int = 0
    invalid: int = 0
    files: int = 0
    unreadable: int = 0

    def summary(self) -> str:
        return f"{self.valid} valid, {self.invalid} invalid in {self.files} files"


def format_problem(problem: Problem) -> str:
    """``file[:line[:col]]: <pointer>: message`` — one line, always."""
    message = " ".join(problem.message.split())
    if problem.pointer:
        return f"{problem.located()}: {problem.pointer}: {message}"
    return f"{problem.located()}: {message}"


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
            self.out.write(f"{where}: {item.pointer or '/'}: ok ({item.kind} {item.name})\n")

    def problems(self, problems: list[Problem]) -> None:
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

    def problems(self, problems: list[Problem]) -> None:
        self.found.extend(problem_json(p) for p in problems)

    def finish(self, tally: Tally) -> None:
        report = {
            "valid": tally.valid,
            "invalid": tally.invalid,
            "files": tally.files,
            "ok": tally.invalid == 0,
            "problems": self.found,
        }
        json.dump(report, self.out, ensure_ascii=False, indent=2)
        self.out.write("\n")


REPORTERS: dict[str, Callable[..., TextReporter | JsonReporter]] = {
    "text": TextReporter,
    "json": JsonReporter,
}
