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
from collections.abc import Callable, Iterable
from typing import IO, Any

from kernelindex_sdk.base.escaping import one_line
from kernelindex_sdk.errors import Problem
from kernelindex_sdk.reading.positions import Locator, locate
from kernelindex_sdk.validating.pipeline import Tally
from kernelindex_sdk.validating.validation import Item


def format_problem(problem: Problem) -> str:
    """``file[:line[:col]]: <pointer>: message`` — one printable line, always."""
    return str(problem)


def _located(problems: list[tuple[Problem, bool]]) -> list[Problem]:
    """Problems (each with whether its document was read) in order, placed where they
    can be: every file read once more at most, however many items hold its problems."""
    placed = iter(locate([problem for problem, read in problems if read]))
    return [next(placed) if read else problem for problem, read in problems]


class ProblemPrinter:
    """Writes problems as ``validate`` words them, as they come, each with the line and
    column it is known at (a ``.json`` file's once that file is done: :class:`Locator`);
    :meth:`close` writes what is still held. For every command that reports input
    problems (``compare``, ``ls``, ``store add``) as ``validate`` does."""

    def __init__(self, write: Callable[[str], object]) -> None:
        self._write = write
        self._locator = Locator()

    def __call__(self, problem: Problem) -> None:
        for ready in self._locator.add(problem):
            self._write(format_problem(ready) + "\n")

    def close(self) -> None:
        for ready in self._locator.flush():
            self._write(format_problem(ready) + "\n")


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
    """Problems on stdout as they are found (a ``.json`` file's once the file is done,
    placed on their line and column); the summary line at the end."""

    def __init__(self, out: IO[str] | None = None, *, verbose: bool = False) -> None:
        super().__init__(out, verbose=verbose)
        self._locator = Locator()

    def _write(self, problems: Iterable[Problem]) -> None:
        for problem in problems:
            self.out.write(format_problem(problem) + "\n")

    def item(self, item: Item) -> None:
        for problem in item.problems:
            self._write(self._locator.add(problem, not item.unreadable))
        if self.verbose and item.valid:
            self._write(self._locator.flush())
            where = f"{item.source}:{item.line}" if item.line else item.source
            line = f"{where}: {item.pointer or '/'}: ok ({item.kind} {item.name})"
            self.out.write(one_line(line) + "\n")

    def problems(self, problems: Iterable[Problem]) -> None:
        for problem in problems:
            self._write(self._locator.add(problem))
        self._write(self._locator.flush())

    def finish(self, tally: Tally) -> None:
        self._write(self._locator.flush())
        self.out.write(tally.summary() + "\n")


class JsonReporter(_Reporter):
    """One JSON object at the end: the tally and every problem (with ``-v``, every item)."""

    def __init__(self, out: IO[str] | None = None, *, verbose: bool = False) -> None:
        super().__init__(out, verbose=verbose)
        #: Every problem, and whether its document was read (so it can be placed).
        self.found: list[tuple[Problem, bool]] = []
        self.items: list[dict[str, Any]] = []

    def item(self, item: Item) -> None:
        self.found.extend((problem, not item.unreadable) for problem in item.problems)
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
        self.found.extend((problem, True) for problem in found)
        if self.verbose:  # a late reference problem makes its item invalid
            late = {(p.source, p.line) for p in found}
            for entry in self.items:
                if entry["status"] == "valid" and (entry["file"], entry["line"]) in late:
                    entry["status"] = "invalid"

    def _located(self) -> list[Problem]:
        """The problems in order, each with its line and column where they are known."""
        return _located(self.found)

    def finish(self, tally: Tally) -> None:
        report: dict[str, Any] = {
            "valid": tally.valid,
            "invalid": tally.invalid,
            "unreadable": tally.unreadable,
            "files": tally.files,
            "ok": tally.invalid == 0 and tally.unreadable == 0,
            "problems": [problem_json(p) for p in self._located()],
        }
        if self.verbose:
            report["items"] = self.items
        json.dump(report, self.out, ensure_ascii=True, indent=2)
        self.out.write("\n")


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
        self._locator = Locator()

    def _add(self, problem: Problem, read: bool = True) -> None:
        for ready in self._locator.add(problem, read):
            self._annotate(ready)

    def _flush(self) -> None:
        for ready in self._locator.flush():
            self._annotate(ready)

    def _annotate(self, problem: Problem) -> None:
        from kernelindex_sdk.cli.report.ci import annotation

        line, column = problem.line, problem.column
        title = f"kernelindex {problem.code}" + (
            f" at {problem.pointer}" if problem.pointer else ""
        )
        message = f"{problem.pointer}: {problem.message}" if problem.pointer else problem.message
        where = problem.source or "<input>"
        found = annotation("error", message, file=where, line=line, column=column, title=title)
        self.out.write(found + "\n")

    def item(self, item: Item) -> None:
        for problem in item.problems:
            self._add(problem, not item.unreadable)

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
        located = iter(_located([(p, not c[5]) for c in self.cases for p in c[4]]))
        for source, line, pointer, label, unlocated, unreadable in self.cases:
            found = [next(located) for _ in unlocated]
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
