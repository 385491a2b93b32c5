"""Every command and snippet in README.md and docs/ runs as written (issue #32).

The ```` ```sh ````, ```` ```console ```` and ```` ```python ```` blocks of each page are
run in order, in one temporary folder per page that holds what the project ships
(``examples/``, ``schemas-released/``) with ``shared/`` beside it (``../shared``, as in a
checkout), so a page's later blocks see what its earlier ones wrote:

* ``sh``: each command (``\\``-continued lines joined) must exit 0;
* ``console``: each ``$ command`` runs; where output is shown under it, stdout and
  stderr together must match it, ``…`` standing for any text and a line ``...`` for any
  lines; where none is shown, it must exit 0;
* ``python``: executed (one namespace per page); ``SystemExit(0)`` is success.

A block that cannot run here — it needs a GPU, the network, a package outside the test
extra, or a file a user has and the project does not ship — is marked in the page by an
HTML comment on the line before it, ``<!-- not-run: why -->``, and listed in
:data:`NOT_RUN` below, so nothing is left out silently. Untagged blocks (usage
synopses, sample output) are text; one that starts with ``$ `` must be tagged.

A failure names the page and line: ``docs/cli.md:182: `kernelindex …` exited 1``.
Pages that need ``shared/`` skip, saying so, where it is absent.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest
import shared_data

ROOT = Path(__file__).resolve().parents[2]
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")))
#: What a page's folder holds, copied from the checkout: what the project ships.
SHIPPED = ("examples", "schemas-released")
RUN = ("sh", "console", "python")
_FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
_NOT_RUN = re.compile(r"^<!--\s*not-run:\s*(.*?)\s*-->$")
#: Blocks marked ``not-run``, by page and the reason the page gives: adding a marker
#: means adding it here, so a skipped block is always a decision someone wrote down.
NOT_RUN: frozenset[tuple[str, str]] = frozenset(
    {
        ("README.md", "creates a virtual environment and installs from the network"),
        ("README.md", "needs a CUDA GPU and liger-kernel, triton, torch"),
        ("docs/recording.md", "needs a CUDA GPU, torch and triton, and the user's own kernel"),
        ("docs/store.md", "needs Spark and polars, which kernelindex does not install"),
        ("docs/store.md", "installs from the network"),
        (
            "docs/serve.md",
            "needs a live kernelindex serve; tests/test_docs.py starts one and runs this block",
        ),
        ("docs/serve.md", "installs from the network and serves until stopped"),
        ("docs/serve.md", "needs a server of the user's own at index.example.org"),
        (
            "docs/compare.md",
            "a user's main.jsonl and branch.jsonl, which the project does not ship",
        ),
        ("docs/history.md", "reads ../shared; tests/test_history_liger.py runs the same on it"),
        (
            "docs/bench-liger.md",
            "installs liger-kernel, triton, torch and transformers from the network",
        ),
    }
)
#: Seconds one command may take.
TIMEOUT = 120


@attrs.frozen
class Block:
    page: str
    #: 1-based line of the block's first line inside the fence.
    line: int
    lang: str
    lines: tuple[str, ...]
    not_run: str | None


def blocks(page: Path, root: Path = ROOT) -> list[Block]:
    """The fenced blocks of a page, with the ``not-run`` reason marked before each."""
    text = page.read_text(encoding="utf-8").splitlines()
    name = page.relative_to(root).as_posix()
    found = []
    index = 0
    while index < len(text):
        opening = _FENCE.match(text[index])
        if opening is None:
            index += 1
            continue
        indent, lang = opening.groups()
        end = index + 1
        while end < len(text) and text[end].strip() != "```":
            end += 1
        before = next((text[i].strip() for i in range(index - 1, -1, -1) if text[i].strip()), "")
        marked = _NOT_RUN.match(before)
        body = tuple(line[len(indent) :] for line in text[index + 1 : end])
        found.append(Block(name, index + 2, lang, body, marked.group(1) if marked else None))
        index = end + 1
    return found


def commands(block: Block) -> Iterator[tuple[int, str, list[str] | None]]:
    """(doc line, command, expected output or None) of a sh or console block."""
    index = 0
    lines = block.lines
    while index < len(lines):
        line = lines[index]
        start = index
        if block.lang == "console" and not line.startswith("$ "):
            index += 1
            continue
        command = line[2:] if block.lang == "console" else line
        while command.endswith("\\") and index + 1 < len(lines):
            index += 1
            command = command[:-1] + " " + lines[index].strip()
        index += 1
        if block.lang == "sh":
            if command.strip() and not command.lstrip().startswith("#"):
                yield block.line + start, command, None
            continue
        shown: list[str] = []
        while index < len(lines) and not lines[index].startswith("$ "):
            shown.append(lines[index])
            index += 1
        while shown and not shown[-1].strip():
            shown.pop()
        yield block.line + start, command, shown or None


def matches(shown: list[str], output: str) -> bool:
    """Whether output is what the page shows: ``…`` any text, a line ``...`` any lines,
    runs of blanks compared as one (a table's column widths follow its widest cell)."""
    parts = []
    for line in shown:
        if line.strip() in ("...", "…"):
            parts.append(r"(?:.*\n)*?")
            continue
        pieces = [re.escape(_spaced(piece)) for piece in line.split("…")]
        parts.append(r"[^\n]*".join(pieces) + "\n")
    pattern = "".join(parts)
    actual = "".join(_spaced(line) + "\n" for line in output.rstrip("\n").split("\n"))
    return re.fullmatch(pattern, actual) is not None


def _spaced(text: str) -> str:
    """Runs of blanks as one space, none at the ends: column widths may change."""
    return " ".join(text.split())


def workspace(base: Path) -> Path:
    """A folder holding what the project ships, with ``shared`` beside it."""
    work = base / "work"
    work.mkdir()
    for name in SHIPPED:
        shutil.copytree(ROOT / name, work / name)
    shared = shared_data.find()
    if shared is not None:
        (base / "shared").symlink_to(shared.resolve(), target_is_directory=True)
    return work


def environment() -> dict[str, str]:
    """The test's own interpreter and ``kernelindex`` first on PATH; no colour, no bar."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.pop("KERNELINDEX_SHARED", None)
    return env


def run_shell(block: Block, work: Path, env: dict[str, str]) -> None:
    for line, command, shown in commands(block):
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", command],
            cwd=work,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
        where = f"{block.page}:{line}: `{command}`"
        if shown is None:
            if done.returncode != 0:
                pytest.fail(f"{where} exited {done.returncode}:\n{done.stdout[-3000:]}")
        elif not matches(shown, done.stdout):
            pytest.fail(
                f"{where} printed what the page does not show (exit {done.returncode}).\n"
                f"--- shown\n{chr(10).join(shown)}\n--- printed\n{done.stdout[-3000:]}"
            )


def run_python(block: Block, namespace: dict[str, object]) -> None:
    # Blank lines first, so a traceback's line number is the page's.
    source = "\n" * (block.line - 1) + "\n".join(block.lines) + "\n"
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(source, block.page, "exec"), namespace)
    except SystemExit as stop:
        if stop.code not in (0, None):
            pytest.fail(f"{block.page}:{block.line}: the snippet exited {stop.code}")
    except Exception as error:
        frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == block.page]
        line = frames[-1].lineno if frames else block.line
        pytest.fail(f"{block.page}:{line}: {type(error).__name__}: {error}")


def runnable(page: Path) -> list[Block]:
    return [b for b in blocks(page) if b.lang in RUN and b.not_run is None]


#: Pages whose commands take more than a few seconds (they import and compare the whole
#: Liger CSV): run by .ci/run with the slow tests, not by plain pytest.
SLOW_PAGES = frozenset({"README.md", "docs/compare.md", "docs/importers/liger.md"})


def _page_param(page: Path) -> object:
    name = page.relative_to(ROOT).as_posix()
    marks = [pytest.mark.slow] if name in SLOW_PAGES else []
    return pytest.param(page, id=name, marks=marks)


def run_page(found: list[Block], work: Path) -> None:
    """The page's runnable blocks in order, in one folder and one Python namespace: what
    a block writes (files, the store, variables) is what the next one reads."""
    env = environment()
    namespace: dict[str, object] = {"__name__": "__doc__"}
    for block in found:
        if block.lang == "python":
            run_python(block, namespace)
        else:
            run_shell(block, work, env)


@pytest.mark.parametrize("page", [_page_param(p) for p in PAGES if runnable(p)])
def test_page_runs_as_written(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    found = runnable(page)
    needs = [b for b in found if any("../shared" in line for line in b.lines)]
    if needs and shared_data.find() is None:
        pytest.skip(f"{needs[0].page}:{needs[0].line} reads ../shared, which is not present")
    work = workspace(tmp_path)
    monkeypatch.chdir(work)
    run_page(found, work)


def test_a_page_runs_as_one_sequence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A later block sees what an earlier one wrote; a block that reads what no earlier
    block wrote (a store added to under one name, read under another) fails, naming it."""
    page = tmp_path / "page.md"
    steps = (
        "```sh\nkernelindex store add examples/ --store runs.kistore\n```\n\n"
        "```console\n$ kernelindex validate runs.kistore\n4 valid, 0 invalid in 1 file\n```\n"
    )
    page.write_text(steps, encoding="utf-8")
    (tmp_path / "a").mkdir()
    work = workspace(tmp_path / "a")
    monkeypatch.chdir(work)
    run_page(runnable_in(page, tmp_path), work)
    wrong = tmp_path / "wrong.md"
    wrong.write_text(steps.replace(" --store runs.kistore", ""), encoding="utf-8")
    (tmp_path / "b").mkdir()
    work = workspace(tmp_path / "b")
    monkeypatch.chdir(work)
    with pytest.raises(pytest.fail.Exception, match=r"wrong\.md:6: `kernelindex validate"):
        run_page(runnable_in(wrong, tmp_path), work)


def runnable_in(page: Path, root: Path) -> list[Block]:
    return [b for b in blocks(page, root) if b.lang in RUN and b.not_run is None]


#: First words of a command: an indented block starting with one is an example a reader
#: runs, and is fenced (```sh or ```console) so that it runs here too.
_COMMANDS = ("kernelindex", "pip", "python", "python3", "$", "scripts/")


def _is_command(line: str) -> bool:
    return bool(line.strip()) and line.split()[0].startswith(_COMMANDS)


def test_command_examples_are_fenced_so_they_run() -> None:
    unfenced = []
    for page in PAGES:
        fenced, blank = False, True
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if _FENCE.match(line) or line.strip() == "```":
                fenced = not fenced
            elif not fenced and blank and line.startswith("    ") and _is_command(line):
                unfenced.append(f"{page.relative_to(ROOT).as_posix()}:{number}")
            blank = not line.strip()
    assert unfenced == [], f"fence these blocks (```sh or ```console): {unfenced}"


def test_what_the_pages_write_is_git_ignored() -> None:
    """The docs' commands write into a checkout when run there (``records/``, …): every
    folder or file they name as output is ignored, never mistaken for the project's."""
    ignored = {
        line.strip().strip("/")
        for line in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
        if line.startswith("/")
    }
    written: set[str] = set()
    for page in PAGES:
        for block in runnable(page):
            text = "\n".join(block.lines)
            written.update(re.findall(r"--out[ =]([\w.-]+)/?", text))
            written.update(re.findall(r"--plot ([\w.-]+)", text))
            written.update(re.findall(r"> ([\w.-]+\.txt)", text))
            written.update(re.findall(r"schema export (?:--bundled )?([\w.-]+)/", text))
            written.update(re.findall(r'Path\("([\w.-]+)"\)', text))
            written.update(re.findall(r'render\w*\([^,]+, "([\w.-]+)"\)', text))
    written.discard("schemas")  # ci.md's bundled export, checked by schema export itself
    assert written <= ignored, f"add to .gitignore: {sorted(written - ignored)}"


def test_every_block_left_out_says_why_and_is_listed() -> None:
    marked = {(b.page, b.not_run) for p in PAGES for b in blocks(p) if b.not_run is not None}
    assert all(reason for _, reason in marked), "a not-run marker without a reason"
    unlisted = marked - NOT_RUN
    assert not unlisted, f"not-run blocks missing from NOT_RUN: {sorted(unlisted)}"
    stale = NOT_RUN - marked
    assert not stale, f"NOT_RUN lists blocks no page marks: {sorted(stale)}"


def test_sessions_are_tagged_to_run() -> None:
    """A block that shows a ``$ command`` is a console session: tagged, so it runs."""
    untagged = [
        f"{b.page}:{b.line}"
        for p in PAGES
        for b in blocks(p)
        if b.lang == "" and b.lines and b.lines[0].startswith("$ ")
    ]
    assert untagged == [], f"tag these blocks ```console: {untagged}"


def test_the_runner_reads_blocks_as_described(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- not-run: needs a GPU -->\n```sh\nnvidia-smi\n```\n\n"
        "```console\n$ echo a \\\n  b\na b\n$ true\n```\n",
        encoding="utf-8",
    )
    found = blocks(page, tmp_path)
    assert [(b.lang, b.line, b.not_run) for b in found] == [
        ("sh", 3, "needs a GPU"),
        ("console", 7, None),
    ]
    assert list(commands(found[1])) == [(7, "echo a  b", ["a b"]), (10, "true", None)]
    assert matches(
        ["sha256:6184a6f0…  BenchmarkRun", "..."], "sha256:6184a6f0abc  BenchmarkRun\nx\ny\n"
    )
    assert not matches(["4 valid"], "5 valid\n")
