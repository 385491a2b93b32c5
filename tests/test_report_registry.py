"""The output formats' one home (``kernelindex_sdk.cli.report``): every command's
``--format`` is exactly its reporters in the registry, every reporter resolves, the
shared writers keep their laws (one line a row, every cell escaped for its format),
and ``validate`` loads nothing of it beyond its own reporters."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import click
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import law_settings

from kernelindex_sdk.base.escaping import one_line
from kernelindex_sdk.cli.app import cli
from kernelindex_sdk.cli.report import REPORTERS, formats
from kernelindex_sdk.cli.report.ci import annotation
from kernelindex_sdk.cli.report.writing import aligned, write_csv, write_markdown_table

ROOT = Path(__file__).resolve().parent.parent

#: Each command of the registry → its click command's path under ``kernelindex``.
COMMANDS = {
    "validate": ["validate"],
    "schema diff": ["schema", "diff"],
    "compare --against": ["compare"],
    "ls": ["ls"],
    "store query": ["store", "query"],
}


def _format_choices(path: list[str]) -> tuple[str, ...]:
    command: click.Command = cli
    for name in path:
        assert isinstance(command, click.Group)
        found = command.get_command(click.Context(command), name)
        assert found is not None, name
        command = found
    (option,) = [p for p in command.params if p.name == "format_" or "--format" in p.opts]
    assert isinstance(option.type, click.Choice)
    return tuple(option.type.choices)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_commands_formats_are_its_reporters(command: str) -> None:
    offered = _format_choices(COMMANDS[command])
    assert offered == formats(command)
    for fmt in offered:
        assert callable(REPORTERS[command, fmt])  # type: ignore[index]


def test_every_entry_resolves_and_commands_share_nothing_unlisted() -> None:
    assert len(REPORTERS) == len(set(REPORTERS))
    for command, fmt in REPORTERS:
        assert callable(REPORTERS[command, fmt])  # type: ignore[index]
    # Plain compare's and --summary's formats are those of --against without the CI ones.
    assert formats("compare") == formats("compare --summary") == ("text", "markdown", "json", "csv")
    assert formats("compare --against") == (*formats("compare"), "github", "junit")
    with pytest.raises(KeyError):
        REPORTERS["compare", "github"]


def test_validate_loads_only_its_own_reporters(tmp_path: Path) -> None:
    """A real ``validate one.json``: of the output formats it imports the registry and
    its four reporters, never the shared writers, the CI formats or another command's
    reporters (its start-up is what every pre-commit hook pays)."""
    seed = sorted((ROOT / "examples").rglob("*.json"))[0]
    program = (
        "import atexit, sys\n"
        "atexit.register(lambda: print(sorted(m for m in sys.modules"
        " if m.startswith('kernelindex_sdk.cli')), file=sys.stderr))\n"
        "from kernelindex_sdk.cli.main import main\n"
        f"main(['validate', {str(seed)!r}])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    assert done.returncode == 0, done.stderr
    loaded = done.stderr.strip().splitlines()[-1]
    assert loaded == str(
        [
            "kernelindex_sdk.cli",
            "kernelindex_sdk.cli.main",
            "kernelindex_sdk.cli.report",
            "kernelindex_sdk.cli.report.validate",
            "kernelindex_sdk.cli.validate_cmd",
        ]
    )


# --------------------------------------------------------------------------- the writers

_CELL = st.lists(
    st.characters(codec="utf-8")
    | st.sampled_from(list("|\\*_`#<>& \n\r\t\x1b\u2028\u202e\udcff,\"'")),
    max_size=12,
).map("".join)
_ROWS = st.integers(1, 4).flatmap(
    lambda width: st.lists(st.lists(_CELL, min_size=width, max_size=width), min_size=1, max_size=5)
)


@law_settings(300)
@given(_ROWS, st.data())
def test_aligned_is_a_printable_line_a_row_each_cell_at_its_column(
    rows: list[list[str]], data: st.DataObject
) -> None:
    numeric = data.draw(st.lists(st.booleans(), min_size=len(rows[0]), max_size=len(rows[0])))
    lines = aligned(rows, numeric, indent="  ")
    assert len(lines) == len(rows)
    cells = [[one_line(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(numeric))]
    for line, row in zip(lines, cells, strict=True):
        assert one_line(line) == line and line == line.rstrip()
        padded = line.ljust(2 + sum(widths) + 2 * (len(widths) - 1))
        at = 2
        for cell, width, right in zip(row, widths, numeric, strict=True):
            shown, wanted = (
                padded[at : at + width],
                cell.rjust(width) if right else cell.ljust(width),
            )
            if len(line) <= at + width:  # the line's end: no trailing white space
                shown, wanted = shown.rstrip(), wanted.rstrip()
            assert shown == wanted
            at += width + 2


@law_settings(300)
@given(_ROWS)
def test_csv_reads_back_one_printable_line_a_row(rows: list[list[str]]) -> None:
    out = io.StringIO()
    header = [f"c{i}" for i in range(len(rows[0]))]
    write_csv(out, header, rows)
    text = out.getvalue()
    assert text.count("\n") == len(rows) + 1
    assert list(csv.reader(io.StringIO(text))) == [
        header,
        *[[one_line(c) for c in r] for r in rows],
    ]


@law_settings(300)
@given(_ROWS)
def test_markdown_table_is_a_line_a_row_and_a_cell_a_column(rows: list[list[str]]) -> None:
    out = io.StringIO()
    width = len(rows[0])
    write_markdown_table(out, [f"h{i}" for i in range(width)], rows, [True] * width)
    lines = out.getvalue().split("\n")
    assert lines[-2:] == ["", ""] and len(lines) == len(rows) + 4
    for line in lines[2:-2]:
        # Every | inside a cell is escaped: the unescaped ones are the table's own.
        assert line.startswith("| ") and line.endswith(" |")
        assert line.replace("\\\\", "").replace("\\|", "").count("|") == width + 1


@law_settings(300)
@given(_CELL, _CELL, _CELL)
def test_an_annotation_is_one_line(message: str, file: str, title: str) -> None:
    found = annotation("error", message, file=file, line=3, column=4, title=title)
    assert "\n" not in found and "\r" not in found and one_line(found) == found
    assert found.startswith("::error file=") and ",line=3,col=4,title=" in found
