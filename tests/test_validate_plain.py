"""``kernelindex validate``'s plain parser (``validate_cmd.parse_plain``) against click.

The plain parser lets ``validate one.json`` start without importing click; it may take
a command line only where click would make the same :class:`ValidateOptions` of it, and
everything it leaves goes to click. So: the two paths, run on the same command lines
(each in a forked child, stdin empty), must write the same bytes to stdout and stderr
and exit alike — hypothesis draws the command lines from the option table itself plus
the spellings click treats specially — and the common forms must in fact take the
plain path, in a process that never imports click.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from profiles import examples

from kernelindex_sdk.cli import main as cli_main
from kernelindex_sdk.cli.validate_cmd import OPTIONS, ValidateOptions, parse_plain

ROOT = Path(__file__).resolve().parent.parent
VALID = ROOT / "tests" / "examples" / "valid"
INVALID = ROOT / "tests" / "examples" / "invalid"
ONE_VALID = str(sorted(VALID.glob("*.json"))[0])
ONE_INVALID = str(INVALID / "bad-enum-unit.json")
MISSING = str(ROOT / "no-such-file.json")

#: Every spelling in the table, and ones click treats on its own.
NAMES = [
    *sorted({name for spec in OPTIONS for name in spec.names}),
    "-h", "--help", "--form", "--strict", "-x", "-vj2", "-j2", "-v=1", "--jobs=2",
    "--format=json", "--format=", "--strict-refs=1", "--refs-from=" + str(VALID), "--", "---v",
]  # fmt: skip
#: Values: good and bad for each kind, and ones click reads differently from Python.
VALUES = [
    *(choice for spec in OPTIONS for choice in spec.choices), "JSON", "", "0", "2", "007",
    "-1", "+2", " 3", "\u0663", "1_0", "9" * 5000, str(VALID), MISSING, "-",
]  # fmt: skip
PATHS = [ONE_VALID, ONE_INVALID, MISSING, "-", str(ROOT / "tests" / "examples" / "seeds")]


def _run(
    args: Sequence[str], *, plain: bool, raises: type[BaseException] | None = None
) -> tuple[int, bytes, bytes]:
    """``main(args)`` in a forked child: its exit status, stdout and stderr. With
    ``plain`` False the plain parser is switched off, so click parses everything; with
    ``raises``, validating raises it (as Ctrl-C does)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            code = 70
            try:
                stdin = os.open(os.devnull, os.O_RDONLY)
                os.dup2(stdin, 0)
                os.dup2(out.fileno(), 1)
                os.dup2(err.fileno(), 2)
                sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
                sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
                sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
                if not plain:
                    cli_main._plain_validate = lambda _args: None  # type: ignore[assignment]
                if raises is not None:
                    from kernelindex_sdk.cli import validate_click, validate_cmd

                    def interrupted(options: ValidateOptions) -> int:
                        raise raises()

                    validate_cmd.run_validate = interrupted  # type: ignore[assignment]
                    validate_click.run_validate = interrupted  # type: ignore[assignment]
                cli_main.main(list(args))
            except SystemExit as exit_:
                code = exit_.code if isinstance(exit_.code, int) else 71
            except BaseException:
                code = 72
            finally:
                for stream in (sys.stdout, sys.stderr):
                    with contextlib.suppress(Exception):
                        stream.flush()
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        out.seek(0)
        err.seek(0)
        return os.waitstatus_to_exitcode(status), out.read(), err.read()


def _same(args: list[str]) -> None:
    plain, click_ = _run(args, plain=True), _run(args, plain=False)
    assert plain == click_, args
    assert plain[0] in (0, 1, 2), (args, plain)


tokens = st.sampled_from(NAMES + VALUES + PATHS)


@settings(
    max_examples=examples(100),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.lists(tokens, max_size=6))
def test_the_plain_parser_and_click_answer_every_command_line_alike(args: list[str]) -> None:
    _same(["validate", *args])


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(PATHS),
            st.tuples(st.sampled_from(OPTIONS), st.sampled_from(VALUES + PATHS)).map(
                lambda pair: (
                    [pair[0].names[-1]]
                    if pair[0].kind == "flag"
                    else [pair[0].names[-1], _good_value(pair[0], pair[1])]
                )
            ),
        ),
        min_size=1,
        max_size=5,
    )
)
def test_plainly_spelled_command_lines_take_the_plain_path_and_agree(
    parts: list[str | list[str]],
) -> None:
    """Options spelled plainly with values click accepts: the plain parser takes the
    line whenever a PATH is given — and still answers as click does."""
    args = ["validate"]
    for part in parts:
        args.extend([part] if isinstance(part, str) else part)
    taken = parse_plain(args)
    assert (taken is not None) == any(part in PATHS for part in parts if isinstance(part, str))
    _same(args)


def _good_value(spec: object, fallback: str) -> str:
    """A value of ``spec``'s kind that click accepts."""
    kind = getattr(spec, "kind", "")
    if kind == "choice":
        return fallback if fallback in getattr(spec, "choices", ()) else "json"
    if kind == "count":
        return fallback if fallback.isascii() and fallback.isdigit() and len(fallback) < 9 else "1"
    return str(VALID)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["validate", "a.json"], ValidateOptions(("a.json",))),
        (
            ["validate", "-v", "a", "--format", "json", "--jobs=0", "b", "--strict-numbers"],
            ValidateOptions(("a", "b"), format="json", verbose=True, strict_numbers=True, jobs=0),
        ),
        (
            ["validate", "--refs-from", str(VALID), f"--refs-from={INVALID}", "-", "--", "-x"],
            ValidateOptions(("-", "-x"), refs_from=(str(VALID), str(INVALID))),
        ),
        (  # the last value of an option wins, as in click
            ["validate", "--format", "text", "--format=junit", "-j", "3", "a"],
            ValidateOptions(("a",), format="junit", jobs=3),
        ),
        (["validate", "--help", "a"], None),
        (["validate", "-vj2", "a"], None),
        (["validate", "--jobs", "+2", "a"], None),
        (["validate", "--refs-from", MISSING, "a"], None),
        (["validate", "--strict-refs"], None),
        (["digest", "a.json"], None),
        (["validate", "--format", "-v", "a"], None),
    ],
)
def test_what_the_plain_parser_takes(args: list[str], expected: ValidateOptions | None) -> None:
    assert parse_plain(args) == expected


@pytest.mark.parametrize(
    "args",
    [
        ["--strict-refs=1", ONE_VALID],
        ["-v=1", ONE_VALID],
        ["-vj2", ONE_VALID],
        ["--jobs=+2", ONE_VALID],
        ["--jobs", "\u0663", ONE_VALID],
        ["--format=", ONE_VALID],
        ["--format", "JSON", ONE_VALID],
        [f"--refs-from={MISSING}", ONE_VALID],
        ["--refs-from", "-", ONE_VALID],
        [ONE_VALID, "--jobs"],
        [ONE_VALID, "--", "--verbose"],
        ["--", "--format", "json"],
        ["---v", ONE_VALID],
    ],
    ids=repr,
)
def test_the_spellings_click_treats_on_its_own(args: list[str]) -> None:
    """The default profile's few draws may miss these; each is a way the plain parser
    could go wrong."""
    _same(["validate", *args])


@pytest.mark.parametrize("raises", [KeyboardInterrupt, EOFError])
def test_an_interruption_ends_alike_on_both_paths(raises: type[BaseException]) -> None:
    """click closes the terminal's ``^C`` with a blank line and counts EOFError as an
    interruption too; the plain path does the same."""
    args = ["validate", ONE_VALID]
    assert parse_plain(args) is not None
    plain = _run(args, plain=True, raises=raises)
    assert plain == _run(args, plain=False, raises=raises)
    assert plain == (130, b"", b"\nkernelindex: interrupted\n")


@pytest.mark.parametrize("command", [["validate", ONE_VALID], ["digest", ONE_VALID]], ids=str)
def test_ctrl_c_while_the_options_are_read_is_an_interruption(command: list[str]) -> None:
    """A SIGINT that arrives while ``main`` reads the options (which imports the
    command's modules: tens of milliseconds of every start) ends as any other
    interruption: one line, exit 130. It was a KeyboardInterrupt traceback."""
    code = (
        "import os, signal, sys\n"
        "from kernelindex_sdk.cli import main as m\n"
        "read = m._plain_validate\n"
        "def interrupted(args):\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    return read(args)\n"
        "m._plain_validate = interrupted\n"
        "m.main(sys.argv[1:])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *command],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "kernelindex: interrupted\n")


def _interrupted_while_importing(module: str) -> subprocess.CompletedProcess[str]:
    """``kernelindex validate ONE_VALID`` through the console script's entry
    (``kernelindex_console``), with SIGINT raised by an import hook as ``module`` starts
    to load: a Ctrl-C in the milliseconds of every start that imports take."""
    code = (
        "import os, signal, sys\n"
        "class CtrlC:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name == {module!r}:\n"
        "            os.kill(os.getpid(), signal.SIGINT)\n"
        "        return None\n"
        "sys.meta_path.insert(0, CtrlC())\n"
        "import kernelindex_console\n"
        "kernelindex_console.main()\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, "validate", ONE_VALID],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize(
    "module", ["kernelindex_sdk.base.recordformat", "kernelindex_sdk.cli.main"]
)
def test_ctrl_c_while_the_package_is_imported_is_an_interruption(module: str) -> None:
    """The console script's entry imports the package inside a ``try``: a SIGINT while
    ``module`` is being imported ends as one line, exit 130, the bytes ``main`` writes
    for an interruption."""
    done = _interrupted_while_importing(module)
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "kernelindex: interrupted\n")
    assert (
        importlib.metadata.entry_points(group="console_scripts", name="kernelindex")[
            "kernelindex"
        ].value
        == "kernelindex_console:main"
    )


def test_ctrl_c_while_jsonschema_rs_loads_is_an_interruption() -> None:
    """jsonschema-rs imports :mod:`decimal` from Rust as it loads, and panics when that
    import fails: a Ctrl-C there was a pyo3 ``PanicException`` traceback, exit 1. The
    SDK imports decimal first, in Python, so it is an interruption like any other.
    (``numbers`` is decimal's first import: the signal comes inside its load.)"""
    done = _interrupted_while_importing("numbers")
    assert (done.returncode, done.stdout, done.stderr.strip()) == (
        130,
        "",
        "kernelindex: interrupted",
    ), done.stderr


def test_a_shells_completion_request_is_left_to_click(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_KERNELINDEX_COMPLETE", "bash_complete")
    assert parse_plain(["validate", "a.json"]) is None


def test_validate_one_file_never_imports_click() -> None:
    """The point of the plain parser: ``kernelindex validate one.json`` (and its
    output) without click; ``--help`` still gets click's."""
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: sys.stderr.write(f'click {\"click\" in sys.modules}\\n'))\n"
        "from kernelindex_sdk.cli.main import main\n"
        "main(sys.argv[1:])\n"
    )

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", code, *args],
            capture_output=True, text=True, check=False, timeout=120,
        )  # fmt: skip

    plain = run("validate", ONE_VALID)
    assert (plain.returncode, plain.stderr) == (0, "click False\n")
    assert plain.stdout.endswith(" valid, 0 invalid in 1 file\n")
    helped = run("validate", "--help")
    assert helped.returncode == 0 and "Usage: kernelindex validate" in helped.stdout
    assert helped.stderr == "click True\n"


@pytest.mark.parametrize(
    "module", ["json", "json.decoder", "json.scanner", "json.encoder", "datetime", "_uuid"]
)
def test_ctrl_c_while_orjson_loads_is_an_interruption(module: str) -> None:
    """orjson's initialisation imports :mod:`json` from native code and crashes (SIGSEGV)
    when that import fails: a Ctrl-C there killed the process with no word. The SDK
    imports json first, in Python, so it is an interruption like any other."""
    done = _interrupted_while_importing(module)
    assert (done.returncode, done.stdout, done.stderr.strip()) == (
        130,
        "",
        "kernelindex: interrupted",
    ), done.stderr
