"""Output that cannot be written whole: a closed pipe, a full device, a disk that fills.

``write(2)`` may take part of what it is given and report success; Python's buffered
streams passed that on, so ``canonicalize BIG.json | head -c 100`` exited 0 and a file
written on a filling disk was renamed into place truncated, with exit 0. Every writer
now goes through ``kernelindex_sdk.base.writes``: a reader gone is a quiet 141, a full
disk one line and exit 2, and no file is left half written. Real processes, a real
pipe closed after 100 bytes, ``/dev/full``, and a real 64 KiB tmpfs (mounted in a
private mount namespace; skipped where mounting is not permitted).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from liger_rows import good_rows, write_csv
from profiles import variants

from bench_adapters.liger import import_csv

from .support import SEEDS, finish

COMMAND = [sys.executable, "-m", "kernelindex_sdk.cli.main"]
TIMEOUT = 60
#: Far more than a pipe holds (64 KiB on Linux), so the writer is mid-write when the
#: reader leaves.
ROWS = 800


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """big.json (one 20 MB document), many.jsonl (records), rows.csv and records/ (its import)."""
    root = tmp_path_factory.mktemp("output")
    (root / "big.json").write_text(json.dumps({"a": ["x" * 100] * 200_000}), "utf-8")
    seed = json.dumps(json.loads(sorted(SEEDS.glob("*.json"))[0].read_text("utf-8")))
    (root / "many.jsonl").write_text((seed + "\n") * 5_000, "utf-8")
    write_csv(root / "rows.csv", good_rows(ROWS))
    import_csv([root / "rows.csv"], root / "records", layout="jsonl")  # type: ignore[arg-type]
    return root


#: Commands writing much to standard output, and what they read (under ``data``).
STDOUT_WRITERS = [
    pytest.param(["canonicalize", "big.json"], id="canonicalize"),
    pytest.param(["digest", "many.jsonl"], id="digest"),
    pytest.param(["digest", "--format", "json", "many.jsonl"], id="digest-json"),
    pytest.param(["export", "liger", "records", "--out", "-"], id="export"),
]


def _environment(unbuffered: bool) -> dict[str, str]:
    """Under ``PYTHONUNBUFFERED=1`` (containers, CI) the interpreter's standard output
    hands a short write on as success; buffered, it raised. Both must hold."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return {**env, "PYTHONUNBUFFERED": "1"} if unbuffered else env


def _start(
    args: Sequence[str], cwd: Path, stdout: object = subprocess.PIPE, unbuffered: bool = True
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*COMMAND, *args],
        cwd=cwd,
        stdout=stdout,  # type: ignore[arg-type]
        stderr=subprocess.PIPE,
        start_new_session=True,
        env=_environment(unbuffered),
    )


@pytest.mark.parametrize(
    ("args", "unbuffered"),
    # Each writer in the quick run once, buffered and unbuffered in turn; both under slow.
    variants(
        [
            pytest.param(*writer.values, unbuffered, id=f"{writer.id}-{name}")
            for writer in STDOUT_WRITERS
            for unbuffered, name in ((True, "unbuffered"), (False, "buffered"))
        ],
        quick={2 * i + i % 2 for i in range(len(STDOUT_WRITERS))},
    ),
)
def test_a_reader_that_leaves_is_a_quiet_141(args: list[str], unbuffered: bool, data: Path) -> None:
    """As ``| head -c 100``: read 100 bytes, close the pipe, and the writer must see it."""
    process = _start(args, data, unbuffered=unbuffered)
    assert process.stdout is not None
    assert len(process.stdout.read(100)) == 100
    process.stdout.close()
    status, _, err = finish(process, TIMEOUT)
    assert (status, err) == (141, "")


@pytest.mark.parametrize("args", [*STDOUT_WRITERS, pytest.param(["schema", "show", "Bundle"])])
def test_a_full_stdout_is_one_line_and_exit_2(args: list[str], data: Path) -> None:
    with open("/dev/full", "wb") as full:
        status, _, err = finish(_start(args, data, stdout=full), TIMEOUT)
    assert status == 2
    assert err == "kernelindex: error: cannot write output: No space left on device\n"


# ----------------------------------------------------------------------- a full disk

#: Mounts a 64 KiB tmpfs on $FULL in a private mount namespace, runs the command (its
#: standard output to $STDOUT_TO when set), copies
#: what it left there to $KEPT (the mount vanishes with the namespace) and exits with
#: the command's status; 99 when the tmpfs cannot be mounted.
_ON_A_FULL_DISK = """
mount -t tmpfs -o size=64k kernelindex-full "$FULL" 2>/dev/null || exit 99
if [ -n "$STDOUT_TO" ]; then "$@" > "$STDOUT_TO"; else "$@"; fi
status=$?
cp -a "$FULL"/. "$KEPT"/ || exit 98
exit $status
"""


def _on_a_full_disk(
    args: Sequence[str], data: Path, tmp_path: Path, stdout_to: str = ""
) -> tuple[int, str, Path]:
    """Run ``args`` with ``tmp_path/full`` a nearly empty 64 KiB file system; what it
    left there is returned as a copy."""
    if shutil.which("unshare") is None:
        pytest.skip("needs util-linux unshare to mount a small tmpfs")
    full, kept = tmp_path / "full", tmp_path / "kept"
    full.mkdir()
    kept.mkdir()
    namespace = ["unshare", "--mount", "--propagation", "private"]
    process = subprocess.Popen(
        [*namespace, "sh", "-c", _ON_A_FULL_DISK, "sh", *COMMAND, *args],
        cwd=data,
        env={**_environment(True), "FULL": str(full), "KEPT": str(kept), "STDOUT_TO": stdout_to},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    status, _, err = finish(process, TIMEOUT)
    if status in (98, 99) or "unshare:" in err:
        pytest.skip(f"cannot mount a tmpfs here (not root, or no mount namespaces): {err}")
    return status, err, kept


def _files(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*"))


@pytest.mark.parametrize("args", STDOUT_WRITERS)
def test_stdout_to_a_file_on_a_full_disk_is_one_line_and_exit_2(
    args: list[str], data: Path, tmp_path: Path
) -> None:
    """``> FILE`` on a disk that fills partway: the file is the shell's, the exit ours."""
    stdout_to = str(tmp_path / "full" / "out")
    status, err, kept = _on_a_full_disk(args, data, tmp_path, stdout_to=stdout_to)
    assert (status, err) == (
        2,
        "kernelindex: error: cannot write output: No space left on device\n",
    )
    assert 0 < (kept / "out").stat().st_size <= 64 << 10  # it did fill partway


def test_export_to_a_full_disk_leaves_no_truncated_file(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "full" / "liger.csv"
    args = ["export", "liger", "records", "--out", str(out)]
    status, err, kept = _on_a_full_disk(args, data, tmp_path)
    assert status == 2, err
    assert err == (
        f"kernelindex export liger: error: {out}: cannot write: No space left on device\n"
    )
    assert _files(kept) == []  # neither the CSV cut short nor its temporary file


def test_import_to_a_full_disk_leaves_no_truncated_file(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "full" / "records"
    args = ["import", "liger", "rows.csv", "--out", str(out), "--layout", "jsonl"]
    status, err, kept = _on_a_full_disk(args, data, tmp_path)
    assert status == 2, err
    assert err.splitlines() == [
        f"kernelindex import liger: error: {out}: cannot write: No space left on device"
    ]
    assert _files(kept) == ["records"]  # the folder it made, and nothing in it


def test_schema_export_to_a_full_disk_writes_only_whole_files(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "full" / "schemas"
    args = ["schema", "export", "--bundled", str(out)]
    status, err, kept = _on_a_full_disk(args, data, tmp_path)
    assert status == 2, err
    assert err == f"kernelindex schema export: {out}: No space left on device\n"
    files = [path for path in kept.rglob("*") if path.is_file()]
    assert not any(path.name.startswith(".") for path in files), _files(kept)
    for path in files:  # those that fitted are whole: a cut one would not parse
        assert isinstance(json.loads(path.read_bytes()), dict), path
