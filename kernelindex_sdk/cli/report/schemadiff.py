"""Reporters of ``kernelindex schema diff``, chosen by name with ``--format``.

The same four forms as ``validate`` (:mod:`~kernelindex_sdk.cli.report.validate`), for a
:class:`~kernelindex_sdk.schemadiff.DiffReport`: ``text`` (one line per violation,
``RULE mode OLD → NEW: KIND PATH: message; witness …``, one per undecided place, one
``assumed unchanged: URI`` per external schema relied on, then a verdict line),
``json`` (the report as one ASCII-only object), ``github`` (an ``::error`` annotation
per violation on the schema file it is in), ``junit`` (a test case per kind and
direction). Each says how ``format`` was read (``--format-assertion`` or not): the
verdict line (``text``, ``github``), ``format_assertion`` (``json``), a property of the
test suite (``junit``). Everything that comes from input — pointers, kinds, messages,
witnesses — is written through :func:`~kernelindex_sdk.base.escaping.one_line`, so one violation is
always one line.
"""

from __future__ import annotations

import json
import sys
from typing import IO, Any

from kernelindex_sdk.base.escaping import one_line
from kernelindex_sdk.cli.report.ci import JunitCase, annotation, write_junit
from kernelindex_sdk.cli.report.writing import write_json
from kernelindex_sdk.schemadiff import DiffReport, Undecided, Violation
from kernelindex_sdk.schemadiff.rules import DIRECTIONS


def compact(value: Any) -> str:
    """A witness on one line, ASCII only."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"))


def violation_line(v: Violation) -> str:
    """``RULE mode OLD → NEW: KIND PATH: message; witness (… accepts, … rejects): {…}``."""
    rejected_by = "new" if v.accepted_by == "old" else "old"
    return one_line(
        f"{v.rule} {v.mode} {v.old or '-'} → {v.new or '-'}: {v.kind} {v.path or '/'}:"
        f" {v.message}; witness ({v.accepted_by} accepts, {rejected_by} rejects):"
        f" {compact(v.witness)}"
    )


def undecided_line(u: Undecided) -> str:
    """``UNDECIDED [mode] OLD → NEW: KIND PATH: reason``."""
    mode = f" {u.mode}" if u.mode else ""
    return one_line(
        f"UNDECIDED{mode} {u.old or '-'} → {u.new or '-'}: {u.kind} {u.path or '/'}: {u.reason}"
    )


def assumed_lines(report: DiffReport) -> list[str]:
    """``assumed unchanged: URI``: an external schema (never fetched) the verdict takes
    to be the same on both sides, one line each."""
    return [one_line(f"assumed unchanged: {uri}") for uri in report.assumed_unchanged]


def format_reading(report: DiffReport) -> str:
    """How ``format`` was read: ``format asserted`` or ``format as annotation``."""
    return "format asserted" if report.format_assertion else "format as annotation"


def verdict(report: DiffReport) -> str:
    """The last line: the verdict, the mode, policy and reading of ``format``, and what
    was counted."""
    setting = f"(mode {report.mode}, policy {report.policy}, {format_reading(report)})"
    kinds = f"{len(report.kinds)} kind{'s' if len(report.kinds) != 1 else ''}"
    if report.violations:
        undecided = f", {len(report.undecided)} undecided" if report.undecided else ""
        count = len(report.violations)
        violations = f"{count} violation{'s' if count != 1 else ''}"
        return f"incompatible {setting}: {violations}{undecided} in {kinds}"
    if report.undecided:
        return f"cannot decide {setting}: {len(report.undecided)} undecided in {kinds}"
    return f"compatible {setting}: {kinds} compared"


class TextReporter:
    def __init__(self, out: IO[str] | None = None) -> None:
        self.out = out or sys.stdout

    def report(self, report: DiffReport) -> None:
        for violation in report.violations:
            self.out.write(violation_line(violation) + "\n")
        for undecided in report.undecided:
            self.out.write(undecided_line(undecided) + "\n")
        for line in assumed_lines(report):
            self.out.write(line + "\n")
        self.out.write(one_line(verdict(report)) + "\n")


class JsonReporter:
    """``{"compatible", "decided", "mode", "policy", "kinds", "violations": [{"rule",
    "mode", "kind", "path", "old", "new", "message", "witness", "accepted_by"}],
    "undecided": [...], "assumed_unchanged": [...], "format_assertion"}`` — ASCII only."""

    def __init__(self, out: IO[str] | None = None) -> None:
        self.out = out or sys.stdout

    def report(self, report: DiffReport) -> None:
        write_json(self.out, report.as_json())


class GithubReporter:
    """An ``::error`` annotation per violation and per undecided place, on the schema
    file it is in (the new side's, where the change was made), then the verdict."""

    def __init__(self, out: IO[str] | None = None) -> None:
        self.out = out or sys.stdout

    def _annotate(self, file: str | None, title: str, message: str) -> None:
        self.out.write(annotation("error", message, file=file or None, title=title) + "\n")

    def report(self, report: DiffReport) -> None:
        for v in report.violations:
            self._annotate(
                v.new_file or v.old_file,
                f"kernelindex schema diff {v.rule} ({v.mode})",
                violation_line(v),
            )
        for u in report.undecided:
            self._annotate(None, "kernelindex schema diff: cannot decide", undecided_line(u))
        for line in assumed_lines(report):
            self.out.write(annotation("notice", line, title="kernelindex schema diff") + "\n")
        self.out.write(one_line(verdict(report)) + "\n")


class JunitReporter:
    """JUnit XML: a test case per kind and direction checked, a failure listing its
    violations, an error listing what could not be decided."""

    def __init__(self, out: IO[str] | None = None) -> None:
        self.out = out or sys.stdout

    def report(self, report: DiffReport) -> None:
        cases = []
        for kind in report.kinds:
            for mode in DIRECTIONS[report.mode]:
                broken = [v for v in report.violations if v.kind == kind and v.mode == mode]
                doubts = [u for u in report.undecided if u.kind == kind and u.mode in (mode, None)]
                case = JunitCase(kind, f"{kind} {mode}")
                if broken:
                    lines = tuple(violation_line(v) for v in broken)
                    case = JunitCase(kind, case.name, "failure", broken[0].rule, lines)
                elif doubts:
                    lines = tuple(undecided_line(u) for u in doubts)
                    case = JunitCase(kind, case.name, "error", "undecided", lines)
                cases.append(case)
        properties = {
            "mode": report.mode,
            "policy": report.policy,
            "format": "assertion" if report.format_assertion else "annotation",
        }
        write_junit(self.out, "kernelindex schema diff", cases, properties)


DiffReporter = TextReporter | JsonReporter | GithubReporter | JunitReporter
