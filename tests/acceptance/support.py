"""Helpers for the CLI acceptance tests: run the real CLI, read its output.

Most tests drive ``kernelindex_sdk.cli.app:cli`` through click's :class:`CliRunner`
(in-process, fast); a few run ``python -m kernelindex_sdk.cli.main`` as a subprocess
to cover the real entry point, stdin and exit statuses.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import attrs
import pytest
from click.testing import CliRunner, Result

from kernelindex_sdk.base.escaping import one_line
from kernelindex_sdk.cli.app import cli

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
EXAMPLES = ROOT / "tests" / "examples"
#: The module of kernelindex's pytest plugin, as its entry point names it: for sessions
#: that load it alone (``-p`` with ``PYTEST_DISABLE_PLUGIN_AUTOLOAD``).
PLUGIN_MODULE = entry_points(group="pytest11")["kernelindex"].value
VALID = EXAMPLES / "valid"
INVALID = EXAMPLES / "invalid"
SEEDS = ROOT / "tests" / "examples" / "valid" / "seeds"
SCHEMAS = ROOT / "schemas"

#: ``<N> valid, <M> invalid[, <U> unreadable] in <F> files``: groups valid, invalid,
#: unreadable (None when there were none) and files.
SUMMARY = re.compile(r"^(\d+) valid, (\d+) invalid(?:, (\d+) unreadable)? in (\d+) files?$")


def summary_counts(summary: str) -> tuple[int, int, int, int]:
    """(valid, invalid, unreadable, files) of a summary line."""
    match = SUMMARY.match(summary)
    assert match is not None, summary
    valid, invalid, unreadable, files = match.groups()
    return int(valid), int(invalid), int(unreadable or 0), int(files)


def summary_of(report: dict[str, Any]) -> str:
    """The text summary line of a ``--format json`` report."""
    unreadable = f", {report['unreadable']} unreadable" if report["unreadable"] else ""
    return (
        f"{report['valid']} valid, {report['invalid']} invalid{unreadable}"
        f" in {report['files']} file{'' if report['files'] == 1 else 's'}"
    )


#: ``file[:line[:col]]: [<pointer>: ]message``; the location is group 1.
PROBLEM = re.compile(r"^(.+?(?::\d+(?::\d+)?)?): (?:(/\S*): )?(\S.*)$")


@attrs.frozen
class Run:
    """What one CLI invocation did."""

    exit_code: int
    stdout: str
    stderr: str
    stdout_bytes: bytes = b""

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    @property
    def lines(self) -> list[str]:
        """Non-empty lines of stdout."""
        return [line for line in self.stdout.splitlines() if line]

    @property
    def summary(self) -> str:
        """The last stdout line, which ``validate --format text`` keeps for the tally."""
        assert self.lines, f"no output at all (stderr: {self.stderr!r})"
        return self.lines[-1]

    @property
    def problem_lines(self) -> list[str]:
        """Every stdout line but the summary: one per problem."""
        return self.lines[:-1]

    def json(self) -> Any:
        return json.loads(self.stdout)


def assert_no_traceback(text: str) -> None:
    assert "Traceback (most recent call last)" not in text, text
    assert not re.search(r"^\w+(Error|Exception): ", text, re.MULTILINE), text


def children() -> set[int]:
    """This process's children, exited but not yet reaped ones included."""
    found: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        try:
            found.update(int(word) for word in (task / "children").read_text().split())
        except OSError:
            continue
    return found


def finish(
    process: subprocess.Popen[bytes], timeout: float = 60, hung: str = "hung for"
) -> tuple[int, str, str]:
    """Its exit status, standard output ("" when not piped) and standard error, once a
    process started in a session of its own has ended. One still running after
    ``timeout`` seconds has its whole group killed and fails the test (``hung``, then
    the seconds); a traceback in what it printed fails it too."""
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail(f"{hung} {timeout} s")
    text = (out or b"").decode("utf-8", "replace"), (err or b"").decode("utf-8", "replace")
    assert_no_traceback(text[0] + text[1])
    return process.returncode, text[0], text[1]


def _from_click(result: Result) -> Run:
    exception = result.exception
    if exception is not None and not isinstance(exception, SystemExit):
        import traceback

        detail = "".join(traceback.format_exception(exception))
        pytest.fail(f"the CLI raised instead of exiting cleanly:\n{detail}")
    run = Run(result.exit_code, result.stdout, result.stderr, result.stdout_bytes)
    assert_no_traceback(run.output)
    return run


Invoke = Callable[..., Run]


def make_invoke() -> Invoke:
    """``invoke("validate", path, ..., input=b"...")``: the CLI in-process (CliRunner)."""
    runner = CliRunner()

    def _invoke(*args: str | os.PathLike[str], input: bytes | str | None = None) -> Run:
        argv = [os.fspath(a) for a in args]
        return _from_click(runner.invoke(cli, argv, input=input, catch_exceptions=True))

    return _invoke


def run_subprocess(
    args: Sequence[str | os.PathLike[str]],
    *,
    input: bytes | None = None,
    cwd: Path | None = None,
    module: bool = True,
) -> Run:
    """The real thing: ``python -m kernelindex_sdk.cli.main ARGS`` in a new process."""
    command = [sys.executable, "-m", "kernelindex_sdk.cli.main"] if module else []
    command += [os.fspath(a) for a in args]
    done = subprocess.run(
        command, input=input, capture_output=True, cwd=cwd, timeout=120, check=False
    )
    return run_of(done)


def run_of(done: subprocess.CompletedProcess[bytes]) -> Run:
    """A finished process as a :class:`Run`, held to have printed no traceback."""
    run = Run(
        done.returncode,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
        done.stdout,
    )
    assert_no_traceback(run.output)
    return run


def cli_process(
    *args: str | bytes, text: bool = False, **popen: Any
) -> subprocess.CompletedProcess[Any]:
    """``python -m kernelindex_sdk.cli.main ARGS`` (as a shell would pass them: ``str``
    or raw ``bytes``) in a new process, its output captured (``text``: decoded) and its
    standard error held to have no traceback. ``popen``: ``cwd``, ``env``..."""
    done = subprocess.run(
        [sys.executable, "-m", "kernelindex_sdk.cli.main", *args],
        capture_output=True,
        text=text,
        timeout=120,
        check=False,
        **popen,
    )
    assert_no_traceback(done.stderr if text else done.stderr.decode("utf-8", "replace"))
    return done


def problem_line_of(problem: dict[str, Any]) -> str:
    """A ``--format json`` problem written the way the text reporter writes it."""
    where = str(problem["file"])
    if problem["line"] is not None:
        where += f":{problem['line']}"
        if problem["column"] is not None:
            where += f":{problem['column']}"
    if problem["pointer"]:
        return one_line(f"{where}: {problem['pointer']}: {problem['message']}")
    return one_line(f"{where}: {problem['message']}")


def lines_with_all(lines: list[str], fragments: Sequence[str]) -> list[str]:
    """The lines holding every fragment (the fragments must share ONE line)."""
    return [line for line in lines if all(fragment in line for fragment in fragments)]


def count_items(path: Path) -> int:
    """Records or bundles in a valid example: one per JSONL line or array element."""
    text = path.read_text(encoding="utf-8")
    if path.suffix in (".jsonl", ".ndjson"):
        return sum(1 for line in text.splitlines() if line.strip())
    value = json.loads(text)
    return len(value) if isinstance(value, list) else 1


def example_files(directory: Path) -> list[Path]:
    """What ``validate DIRECTORY`` reads: .json/.jsonl/.ndjson, hidden entries skipped."""
    found = []
    for path in sorted(directory.rglob("*")):
        relative = path.relative_to(directory)
        if any(part.startswith(".") for part in relative.parts):
            continue
        if path.is_file() and path.suffix.lower() in (".json", ".jsonl", ".ndjson"):
            found.append(path)
    return found
