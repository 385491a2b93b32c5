"""A worker killed while it checks a file with a control character in its name.

Every line from input is escaped (``printable.one_line``); the ``worker process …
while checking NAME`` line is no exception: a name holding ``\\n`` must not forge a
second line. A real run on two workers, one killed with SIGKILL mid-file.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from kernelindex_sdk.base.escaping import one_line

from .support import finish
from .test_faults import _gone, _start, _wait_for_workers, big_jsonl

__all__ = ["big_jsonl"]  # the fixture, shared with test_faults


def test_a_killed_worker_names_its_file_in_one_escaped_line(
    big_jsonl: Path, tmp_path: Path
) -> None:
    name = tmp_path / "big\nkernelindex validate: all good\x1b[2K.jsonl"
    name.symlink_to(big_jsonl)  # the name is what is printed; the bytes are the fixture's
    process = _start(["validate", "--jobs", "2", str(name)])
    victim = _wait_for_workers(process)[0]
    os.kill(victim, signal.SIGKILL)
    status, _, err = finish(process)
    assert status == 2
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith(f"kernelindex validate: worker process {victim} was killed by"), err
    assert one_line(str(name)) in err and "\x1b" not in err, err
    assert _gone(process.pid)
