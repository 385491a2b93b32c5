"""Without its speed wheels (orjson, jiter, jsonschema-rs) ``kernelindex validate`` runs
its pure-Python paths — the stdlib JSON intake and encoder, python-jsonschema — and
must say exactly what it says with them: the same lines, the same exit status.

Each path is held to the other by differential tests of its own module; this holds the
whole command to it, end to end, on every example file the project ships (valid,
invalid, unreadable, JSON Lines), in real processes where the wheels cannot be imported.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from profiles import variants

from .support import EXAMPLES, SEEDS, assert_no_traceback

WHEELS = ("orjson", "jiter", "jsonschema_rs")

#: The CLI's entry point with the wheels made unimportable (``import`` raises
#: ImportError for a module whose ``sys.modules`` entry is None), and a check that
#: every fast path really is off.
_WITHOUT_WHEELS = f"""
import sys
for name in {WHEELS!r}:
    sys.modules[name] = None
from kernelindex_sdk import canonical
from kernelindex_sdk.validating import fastengine
from kernelindex_sdk.reading import intake
assert canonical.BACKEND == "json" and not intake.RUST_PARSERS
assert not fastengine.available()
from kernelindex_sdk.cli.main import main
sys.argv[0] = "kernelindex"
main()
"""

INPUTS = [EXAMPLES / "valid", EXAMPLES / "invalid", EXAMPLES / "intake", SEEDS]


def _validate(*args: str | Path, wheels: bool) -> tuple[int, bytes, bytes]:
    head = ["-m", "kernelindex_sdk.cli.main"] if wheels else ["-c", _WITHOUT_WHEELS]
    done = subprocess.run(
        [sys.executable, *head, "validate", *map(str, args)],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert_no_traceback(done.stderr.decode("utf-8", "replace"))
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize(
    "options",
    variants(
        [["--jobs", "1"], ["--jobs", "2"], ["--jobs", "1", "--strict-refs"], ["--format", "json"]],
        quick={0, 1},
        ids=["text", "forked", "strict-refs", "json"],
    ),
)
def test_every_example_gets_the_same_report_without_the_wheels(options: list[str]) -> None:
    for wheel in WHEELS:
        pytest.importorskip(wheel)
    with_wheels = _validate(*options, *INPUTS, wheels=True)
    without = _validate(*options, *INPUTS, wheels=False)
    assert without == with_wheels
    status, stdout, stderr = with_wheels
    # Not vacuous: the inputs hold valid, invalid and unreadable documents.
    assert status == 2
    report = (stdout + stderr).decode()
    assert "valid" in report and "unreadable" in report and "duplicate" in report
