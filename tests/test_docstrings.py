"""Docstrings and comments say what the code does and why, now: never its history.

An issue number (``#35``, ``issue 12``, ``(#7)``) or a "used to" points a reader at a
past they cannot see; what it stood for belongs in the text itself, and measured
figures in ``benchmarks/README.md``. Every comment and every docstring (any bare string
statement) of every module of the SDK and the adapters is read.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("kernelindex_sdk", "bench_adapters")
#: ``#35``, ``(#7)``, ``issue 12``, ``issues #3``: not ``#fff`` or a ``#:`` comment.
_ISSUE = re.compile(r"(?<![\w&])#\d+\b|\bissues? #?\d+\b", re.IGNORECASE)
_HISTORY = re.compile(r"\bused to\b", re.IGNORECASE)


def _prose(source: str) -> Iterator[tuple[int, str]]:
    """Every comment and every bare string statement of a module, with its line."""
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            for offset, line in enumerate(node.value.value.splitlines()):
                yield node.lineno + offset, line


def history_in(source: str) -> list[str]:
    """``line: text`` of each comment or docstring line that names an issue or a past."""
    return [
        f"{number}: {text.strip()}"
        for number, text in _prose(source)
        if _ISSUE.search(text) or _HISTORY.search(text)
    ]


def _modules() -> list[str]:
    return sorted(
        path.relative_to(ROOT).as_posix()
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
    )


def test_a_planted_issue_number_or_past_is_found() -> None:
    source = (
        '"""Reads a file (#35)."""\n'
        "COLOUR = '#123456'  # a colour, not an issue\n"
        "#: The limit (issue 12 raised it).\n"
        "LIMIT = 3\n"
        "def f() -> None:\n"
        '    """It used to copy the list."""\n'
        "    # after fix #7\n"
    )
    assert history_in(source) == [
        "3: #: The limit (issue 12 raised it).",
        "7: # after fix #7",
        "1: Reads a file (#35).",
        "6: It used to copy the list.",
    ]
    assert history_in('"""Twice as #fast; #: a comment; C# 2 and &#35;."""\n') == []


@pytest.mark.parametrize("module", list(_modules()))
def test_no_module_tells_its_history(module: str) -> None:
    found = history_in((ROOT / module).read_text(encoding="utf-8"))
    assert not found, f"{module}: " + "; ".join(found)
