"""A staging folder's journal is checked before it is acted on (#29).

A ``.kernelindex-batch-*`` folder holding ``journal.json`` is a committed batch that
the next writer completes by renaming files into place. Such a folder can also be left
by someone else, holding anything: garbage, or names that reach outside the folder.
Before #29 garbage gave every later import a traceback, and ``../`` names moved files
from outside the output folder into it. Now the writer refuses in one line (exit 2)
naming the journal and what is wrong, and moves nothing. Real commands on real files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from liger_rows import good_rows, write_csv

from kernelindex_sdk.base.fileio import JOURNAL, STAGING_PREFIX, UnsafeJournal, atomic_write_bytes

COMMAND = [sys.executable, "-m", "kernelindex_sdk.cli.main", "import", "liger"]


def leave_batch(out: Path, journal: bytes | object, staged: dict[str, bytes] | None = None) -> Path:
    """A committed-looking staging folder in ``out``: its journal and staged files."""
    staging = out / f"{STAGING_PREFIX}left"
    staging.mkdir(parents=True)
    for name, data in (staged or {}).items():
        (staging / name).write_bytes(data)
    text = journal if isinstance(journal, bytes) else json.dumps(journal).encode()
    (staging / JOURNAL).write_bytes(text)
    return staging / JOURNAL


def import_into(tmp_path: Path, out: Path) -> tuple[int, list[str]]:
    source = write_csv(tmp_path / "a.csv", good_rows(2))
    done = subprocess.run(
        [*COMMAND, str(source), "--out", str(out)], capture_output=True, text=True, timeout=60
    )
    assert "Traceback" not in done.stderr
    return done.returncode, done.stderr.splitlines()


def visible(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))


@pytest.mark.parametrize(
    ("journal", "said"),
    [
        (b"\x00garbage{", "not JSON"),
        ({"a": "b"}, "not a list of pairs"),
        ([["a", "b", "c"]], "entry 0 is not a [staged file, target] pair"),
        ([["x", "ok.json"], ["y", 1]], "entry 1 is not a [staged file, target] pair"),
    ],
)
def test_a_garbage_journal_is_one_line_and_exit_2(
    tmp_path: Path, journal: bytes | object, said: str
) -> None:
    out = tmp_path / "out"
    path = leave_batch(out, journal)
    status, err = import_into(tmp_path, out)
    assert status == 2
    assert len(err) == 1, err
    assert str(path) in err[0] and said in err[0] and "nothing was moved" in err[0]
    assert visible(out) == [], "the import wrote nothing"
    assert path.exists(), "the folder is left for a person to look at"


def test_a_journal_reaching_outside_the_folder_moves_nothing(tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("mine", "utf-8")
    out = tmp_path / "work" / "out"
    journal = leave_batch(out, [["../../../secret.txt", "stolen.txt"]])
    status, err = import_into(tmp_path, out)
    assert status == 2 and len(err) == 1, err
    assert "'../../../secret.txt' is not a plain file name" in err[0] and str(journal) in err[0]
    assert outside.read_text("utf-8") == "mine", "the file outside DIR stays where it is"
    assert visible(out) == []


@pytest.mark.parametrize(
    "entry",
    [
        ["f", "../escaped.json"],
        ["f", "ABSOLUTE"],
        ["f", ".."],
        ["f", ""],
        ["/etc/hostname", "copied"],
        ["sub/f", "x.json"],
    ],
)
def test_no_name_leaves_the_folder(tmp_path: Path, entry: list[str]) -> None:
    out = tmp_path / "out"
    entry = [str(tmp_path / "escaped.json") if name == "ABSOLUTE" else name for name in entry]
    path = leave_batch(out, [entry], {"f": b"staged"})
    with pytest.raises(UnsafeJournal) as caught:
        atomic_write_bytes(out / "mine.json", b"{}")
    assert caught.value.filename == str(path)
    assert "is not a plain file name" in str(caught.value.strerror)
    assert not (tmp_path / "escaped.json").exists()
    assert visible(out) == []


def test_a_staged_symlink_is_not_followed_out(tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("mine", "utf-8")
    out = tmp_path / "out"
    path = leave_batch(out, [["link", "in.json"]])
    os.symlink(outside, path.parent / "link")
    status, err = import_into(tmp_path, out)
    assert status == 2 and len(err) == 1, err
    assert "staged 'link' is not a regular file" in err[0]
    assert outside.read_text("utf-8") == "mine" and visible(out) == []


def test_a_journal_that_is_no_regular_file_is_not_read(tmp_path: Path) -> None:
    """A FIFO would block the writer forever, a link to /dev/zero fill its memory."""
    for name, make in (("fifo", os.mkfifo), ("zero", lambda p: os.symlink("/dev/zero", p))):
        out = tmp_path / name
        staging = out / f"{STAGING_PREFIX}left"
        staging.mkdir(parents=True)
        make(staging / JOURNAL)
        status, err = import_into(tmp_path, out)
        assert status == 2 and len(err) == 1, err
        assert f"{staging / JOURNAL}: cannot write: " in err[0] and "not a regular file" in err[0]


def test_a_good_journal_is_still_completed(tmp_path: Path) -> None:
    """What a killed writer left — a journal as this module writes it — is finished."""
    out = tmp_path / "out"
    leave_batch(out, [["tmp1", "kept.json"]], {"tmp1": b"{}\n"})
    status, err = import_into(tmp_path, out)
    assert status == 0, err
    assert "kept.json" in visible(out) and (out / "kept.json").read_bytes() == b"{}\n"
    assert not [p for p in out.iterdir() if p.name.startswith(STAGING_PREFIX)]
