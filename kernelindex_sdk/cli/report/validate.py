"""``validate``'s reporters, chosen by name with ``--format``: how validation results
are shown.

A reporter receives each item as the pipeline yields it (so text output streams),
the late problems, and the final tally; it never decides anything. Every line a
reporter writes is one line whatever the input holds: text goes through
:func:`~kernelindex_sdk.base.escaping.one_line`, JSON is written ASCII-only (control
characters and everything beyond ASCII as ``\\u`` escapes), so it stays valid JSON
under any output encoding. Every ``validate`` imports this module, so the CI formats'
writers (:mod:`~kernelindex_sdk.cli.report.ci`) are imported only by their reporters,
when they write.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import IO, Any

from kernelindex_sdk.base.escaping import one_line
from kernelindex_sdk.errors import Problem
from kernelindex_sdk.validating.pipeline import Tally
from kernelindex_sdk.validating.validation import Item


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


class _Reporter:
    """Where a reporter writes (standard output by default), and whether it was asked
    for every item (``-v``)."""

    def __init__(self, out: IO[str] | None = None, *, verbose: bool = False) -> None:
        self.out = out or sys.stdout
        self.verbose = verbose
        #: Whether it needs valid items too (else the pipeline sends only problems).
        self.every_item = verbose


class TextReporter(_Reporter):
    """Problems on stdout as they are found; the summary line at the end."""

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


class JsonReporter(_Reporter):
    """One JSON object at the end: the tally and every problem (with ``-v``, every item)."""

    def __init__(self, out: IO[str] | None = None, *, verbose: bool = False) -> None:
        super().__init__(out, verbose=verbose)
        self.found: list[dict[str, Any]] = []
        self.items: list[dict[str, Any]] = []

    def item(self, item: Item) -> None:
        self.found.extend(problem_json(p) for p in item.problems)
        if self.verbose:
            self.items.append(
                {
                    "file": item.source,
                    "line": item.line,
                    "pointer": item.pointer,
                    "kind": item.kind,
                    "name": item.name,
                    "status": "unreadable"
                    if item.unreadable
                    else "invalid"
                    if item.problems
                    else "valid",
                }
            )

    def problems(self, problems: Iterable[Problem]) -> None:
        found = list(problems)
        self.found.extend(problem_json(p) for p in found)
        if self.verbose:  # a late reference problem makes its item invalid
            late = {(p.source, p.line) for p in found}
            for entry in self.items:
                if entry["status"] == "valid" and (entry["file"], entry["line"]) in late:
                    entry["status"] = "invalid"

    def finish(self, tally: Tally) -> None:
        report: dict[str, Any] = {
            "valid": tally.valid,
            "invalid": tally.invalid,
            "unreadable": tally.unreadable,
            "files": tally.files,
            "ok": tally.invalid == 0 and tally.unreadable == 0,
            "problems": self.found,
        }
        if self.verbose:
            report["items"] = self.items
        json.dump(report, self.out, ensure_ascii=True, indent=2)
        self.out.write("\n")


def _positions(source: str, pointers: Iterable[str]) -> dict[str, tuple[int, int]]:
    """Line and column of each pointer in the file ``source``, or none when it cannot be
    read again (standard input, a file gone since): the annotation then has no line."""
    from pathlib import Path

    from kernelindex_sdk.reading.positions import pointer_positions

    if source in ("<stdin>", "<input>"):
        return {}
    try:
        text = Path(source).read_text(encoding="utf-8")
    except (OSError, ValueError):
        return {}
    return pointer_positions(text, pointers)


class GithubReporter(_Reporter):
    """GitHub Actions annotations, one ``::error`` line per problem, then the summary.

    ``::error file=F,line=L,col=C,title=T::message`` puts each problem on the file in a
    pull request's diff; the summary is a plain log line. A problem in a ``.json``
    record, array or bundle is located by pointer only (validation tracks no positions
    on its fast path), so its file's problems are held until the file is done, and then
    the file is read once more to place each pointer on its line and column
    (:mod:`kernelindex_sdk.reading.positions`): only files with problems are read again.
    """

    def __init__(self, out: IO[str] | None = None, *, verbose: bool = False) -> None:
        super().__init__(out)  # problems only, with -v too
        #: Problems without a line, all of one file, waiting for its positions.
        self._pending: list[Problem] = []

    def _add(self, problem: Problem) -> None:
        if problem.line is None and problem.source:
            if self._pending and self._pending[0].source != problem.source:
                self._flush()
            self._pending.append(problem)
            return
        self._flush()
        self._annotate(problem)

    def _flush(self) -> None:
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        positions = _positions(pending[0].source or "", {p.pointer for p in pending})
        for problem in pending:
            self._annotate(problem, positions.get(problem.pointer))

    def _annotate(self, problem: Problem, position: tuple[int, int] | None = None) -> None:
        from kernelindex_sdk.cli.report.ci import annotation

        line, column = position if position is not None else (problem.line, problem.column)
        title = f"kernelindex {problem.code}" + (
            f" at {problem.pointer}" if problem.pointer else ""
        )
        message = f"{problem.pointer}: {problem.message}" if problem.pointer else problem.message
        where = problem.source or "<input>"
        found = annotation("error", message, file=where, line=line, column=column, title=title)
        self.out.write(found + "\n")

    def item(self, item: Item) -> None:
        for problem in item.problems:
            self._add(problem)

    def problems(self, problems: Iterable[Problem]) -> None:
        for problem in problems:
            self._add(problem)
        self._flush()

    def finish(self, tally: Tally) -> None:
        self._flush()
        self.out.write(tally.summary() + "\n")


class JunitReporter(_Reporter):
    """JUnit XML at the end: one test case per record or bundle, a failure per invalid
    one, an error per document that could not be read — what CI systems show as tests.

    Test cases are named ``FILE[:LINE] POINTER`` (class name: the file); every
    problem of an item is one line of its failure text. Everything from input is
    escaped to one printable line first, so the XML is always well-formed.
    """

    def __init__(self, out: IO[str] | None = None, *, verbose: bool = False) -> None:
        super().__init__(out, verbose=verbose)
        self.every_item = True  # a test case for every item, passed ones included
        #: (source, line, pointer, label, problems, unreadable) per item, in order.
        self.cases: list[tuple[str, int | None, str, str, list[Problem], bool]] = []

    def item(self, item: Item) -> None:
        label = f" ({item.kind} {item.name})" if item.kind and item.name else ""
        self.cases.append(
            (item.source, item.line, item.pointer, label, list(item.problems), item.unreadable)
        )

    def problems(self, problems: Iterable[Problem]) -> None:
        for problem in problems:  # late reference problems: to the item they belong to
            for source, line, pointer, _, found, _ in self.cases:
                if (source, line) == (problem.source, problem.line) and (
                    problem.pointer.startswith(pointer + "/") or not pointer
                ):
                    found.append(problem)
                    break
            else:
                self.cases.append(
                    (problem.source or "<input>", problem.line, "", "", [problem], False)
                )

    def finish(self, tally: Tally) -> None:
        from kernelindex_sdk.cli.report.ci import JunitCase, write_junit

        cases = []
        for source, line, pointer, label, found, unreadable in self.cases:
            where = f"{source}:{line}" if line is not None else source
            outcome = ("error" if unreadable else "failure") if found else None
            cases.append(
                JunitCase(
                    source,
                    f"{where} {pointer or '/'}{label}",
                    outcome,
                    found[0].code if found else "",
                    tuple(str(p) for p in found),
                )
            )
        write_junit(self.out, "kernelindex validate", cases)


Reporter = TextReporter | JsonReporter | GithubReporter | JunitReporter
