"""Where documents come from: the one walking rule, special files, size limits."""

from __future__ import annotations

import io
import os
import pickle
import re
from pathlib import Path
from typing import Any

import pytest

from kernelindex_sdk.errors import (
    DocumentTooLarge,
    IntakeError,
    MalformedJSON,
    NotARegularFile,
    SymlinkLoop,
    UnreadableFile,
)
from kernelindex_sdk.reading.intake import Document
from kernelindex_sdk.reading.sources import (
    FileSource,
    StdinSource,
    documents,
    expand,
    iter_documents,
    load_file,
    read_bytes,
    read_stdin,
    walk,
)


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _names(found: list[FileSource | IntakeError], root: Path) -> list[str]:
    out = []
    for entry in found:
        path = entry.path if isinstance(entry, FileSource) else entry.problem.source
        assert path is not None
        out.append(os.path.relpath(path, root))
    return out


def test_walk_order_suffixes_and_hidden_entries(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "b.json": "{}",
            "A.JSON": "{}",
            "c.Jsonl": "{}",
            "d.NDJSON": "{}",
            "notes.txt": "x",
            ".hidden.json": "{}",
            ".git/x.json": "{}",
            "sub/z.json": "{}",
            "sub/deeper/y.json": "{}",
            "aa/q.json": "{}",
        },
    )
    found = list(walk(str(tmp_path)))
    # Each directory's files (sorted), then its subdirectories (sorted), depth first.
    assert _names(found, tmp_path) == [
        "A.JSON",
        "b.json",
        "c.Jsonl",
        "d.NDJSON",
        "aa/q.json",
        "sub/z.json",
        "sub/deeper/y.json",
    ]
    jsonl = {os.path.basename(e.path): e.jsonl for e in found if isinstance(e, FileSource)}
    assert jsonl["c.Jsonl"] and jsonl["d.NDJSON"] and not jsonl["A.JSON"]


def test_named_files_are_read_whatever_their_name(tmp_path: Path) -> None:
    (tmp_path / "record.txt").write_text("{}", encoding="utf-8")
    (tmp_path / "x.JSONL").write_text("{}\n{}\n", encoding="utf-8")
    found = list(expand([str(tmp_path / "record.txt"), str(tmp_path / "x.JSONL"), "-"]))
    assert found[0] == FileSource(str(tmp_path / "record.txt"), False, 2)
    assert isinstance(found[1], FileSource) and found[1].jsonl
    assert found[2] == StdinSource()


def test_symlinks_are_followed_and_loops_refused(tmp_path: Path) -> None:
    _tree(tmp_path, {"real/r.json": "{}", "top.json": "{}"})
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "real" / "back").symlink_to(tmp_path)
    (tmp_path / "dangling.json").symlink_to(tmp_path / "nowhere")
    (tmp_path / "self.json").symlink_to(tmp_path / "self.json")
    found = list(walk(str(tmp_path)))
    names = _names(found, tmp_path)
    assert "link/r.json" in names and "real/r.json" in names
    errors = {
        os.path.relpath(str(e.problem.source), tmp_path): e
        for e in found
        if isinstance(e, IntakeError)
    }
    assert isinstance(errors["dangling.json"], UnreadableFile)
    assert "dangling symbolic link" in str(errors["dangling.json"])
    assert isinstance(errors["self.json"], SymlinkLoop)
    assert isinstance(errors["real/back"], SymlinkLoop)
    assert isinstance(errors["link/back"], SymlinkLoop)


def test_special_files_are_refused_never_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "p.json"
    os.mkfifo(fifo)
    (walked,) = walk(str(tmp_path))  # reading a FIFO would block this test forever
    assert isinstance(walked, NotARegularFile)
    assert "FIFO" in str(walked)
    (named,) = expand([str(fifo)])
    assert isinstance(named, NotARegularFile)
    assert "use - for standard input" in str(named)
    (device,) = expand(["/dev/null"])
    assert isinstance(device, NotARegularFile) and "character device" in str(device)
    with pytest.raises(NotARegularFile):
        read_bytes(fifo)
    with pytest.raises(NotARegularFile):
        load_file("/dev/zero")


def test_paths_that_name_nothing(tmp_path: Path) -> None:
    (missing, nul, through_file) = expand(
        [str(tmp_path / "nope.json"), "a\x00b", str(tmp_path / "f.json" / "x")]
    )
    assert isinstance(missing, UnreadableFile) and "no such file" in str(missing)
    assert isinstance(nul, UnreadableFile) and "NUL" in str(nul)
    assert isinstance(through_file, UnreadableFile)
    with pytest.raises(UnreadableFile):
        load_file("a\x00b")
    with pytest.raises(UnreadableFile, match="is a directory"):
        load_file(tmp_path)
    with pytest.raises(TypeError):
        load_file(3)  # type: ignore[arg-type]


def test_a_whole_file_above_the_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with open(path, "wb") as handle:
        handle.truncate(300 << 20)  # sparse: nothing is written or read
    (error,) = iter_documents(str(path))
    assert isinstance(error, DocumentTooLarge)
    assert "300 MiB" in str(error) and "256 MiB" in str(error)
    small = tmp_path / "small.json"
    small.write_text('{"a": 1}', encoding="utf-8")
    with pytest.raises(DocumentTooLarge):
        read_bytes(small, max_bytes=4)


def test_an_overlong_json_lines_line_is_one_problem_and_reading_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"a": 1}\n{"long": "' + b"x" * 5000 + b'"}\n\n{"b": 2}\n' + b"y" * 100)
    found = list(iter_documents(str(path), max_bytes=100))
    assert isinstance(found[0], Document) and found[0].line == 1
    assert isinstance(found[1], DocumentTooLarge) and found[1].problem.line == 2
    assert isinstance(found[2], Document) and found[2].line == 4
    assert isinstance(found[3], MalformedJSON) and found[3].problem.line == 5


def test_an_overlong_line_of_a_file_is_refused_without_being_held(tmp_path: Path) -> None:
    """docs/cli.md: a line past the limit is refused *before* it is held in memory (#32:
    a 257–300 MiB line peaked at 283–550 MB). Measured first, a step at a time; a long
    line within the limit is then read whole, and reading goes on after either."""
    import tracemalloc

    from kernelindex_sdk.reading.intake.jsonl import OverlongLine
    from kernelindex_sdk.reading.sources import bounded_lines

    mib = 1 << 20
    path = tmp_path / "long.jsonl"
    within = b'{"a": "' + b"w" * (10 * mib) + b'"}\n'
    path.write_bytes(b'{"x": "' + b"x" * (20 * mib) + b'"}\n' + within + b'{"b": 2}\n')
    with open(path, "rb") as handle:
        tracemalloc.start()
        try:
            lines = bounded_lines(handle, max_bytes=16 * mib)
            overlong = next(lines)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert isinstance(overlong, OverlongLine) and overlong.size == 20 * mib + 10
        # A few 1 MiB steps at most, never the 16 MiB the limit would allow.
        assert peak < 6 * mib, f"{peak / mib:.1f} MiB held for a line that is refused"
        assert list(lines) == [within, b'{"b": 2}\n']


@pytest.mark.slow  # writes nothing (a sparse file) but reads 260 MiB
def test_a_260_mib_line_is_refused_in_little_memory(tmp_path: Path) -> None:
    import shutil
    import subprocess
    import sys

    timer = shutil.which("time") or "/usr/bin/time"
    if not os.path.exists(timer):
        pytest.skip("needs /usr/bin/time to measure the peak memory")
    path = tmp_path / "long.jsonl"
    with open(path, "wb") as handle:
        handle.truncate(260 << 20)  # a hole: one 260 MiB line of NUL bytes
        handle.seek(260 << 20)
        handle.write(b'\n{"a": 1}\n')
    done = subprocess.run(
        [timer, "-v", sys.executable, "-m", "kernelindex_sdk.cli.main", "validate", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "line longer than 256 MiB" in done.stderr + done.stdout
    peak_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)[1])
    assert peak_kb < 128 * 1024, f"peak {peak_kb} kB"


def test_stdin_above_the_limit(tmp_path: Path) -> None:
    pretty = b'{\n  "a": "' + b"x" * 500 + b'"\n}\n'
    (whole,) = read_stdin(io.BytesIO(pretty), max_bytes=100)
    assert isinstance(whole, DocumentTooLarge)
    (forced,) = read_stdin(io.BytesIO(pretty), jsonl=False, max_bytes=100)
    assert isinstance(forced, DocumentTooLarge)
    # A stream (no descriptor of a regular file) is read no further than the limit:
    # it may never send the line's end (a pipe from /dev/zero).
    lines = b'{"a": 1}\n' + b'{"b": "' + b"x" * 500 + b'"}\n{"c": 3}\n'
    found = list(read_stdin(io.BytesIO(lines), max_bytes=100))
    assert [type(f).__name__ for f in found] == ["Document", "DocumentTooLarge"]
    assert "nothing after it either" in str(found[1])
    first = b'{"b": "' + b"x" * 500 + b'"}\n{"c": 3}\n'
    found = list(read_stdin(io.BytesIO(first), max_bytes=100))
    assert [type(f).__name__ for f in found] == ["DocumentTooLarge"]
    # A regular file given as standard input (`- < file`) ends: read on past the line.
    path = tmp_path / "lines.jsonl"
    path.write_bytes(lines)
    with open(path, "rb") as handle:
        found = list(read_stdin(handle, max_bytes=100))
    assert [type(f).__name__ for f in found] == ["Document", "DocumentTooLarge", "Document"]
    assert "nothing after it" not in str(found[1])


def test_documents_streams_errors_in_input_order(tmp_path: Path) -> None:
    _tree(tmp_path, {"a.json": "{}", "b.json": "{", "c.jsonl": "{}\n[]\n"})
    found = list(documents([str(tmp_path / "a.json"), str(tmp_path / "gone"), str(tmp_path)]))
    kinds = [type(f).__name__ for f in found]
    assert kinds == [
        "Document",
        "UnreadableFile",
        "Document",
        "MalformedJSON",
        "Document",
        "Document",
    ]


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
@pytest.mark.parametrize("size", [None, 0, 3_900])
def test_a_file_source_pickles_by_its_fields(protocol: int, size: int | None) -> None:
    """The parallel pipeline sends file sources to its workers: every field survives."""
    source = FileSource("dir/a b.jsonl", True, size)
    again = pickle.loads(pickle.dumps(source, protocol=protocol))
    assert again == source and type(again) is FileSource
    assert (again.path, again.jsonl, again.size) == ("dir/a b.jsonl", True, size)


def _kernelindex(*args: str, data: bytes | None = None, closed_stdin: bool = False) -> Any:
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "kernelindex_sdk.cli.main", *args],
        input=data,
        capture_output=True,
        preexec_fn=(lambda: os.close(0)) if closed_stdin else None,
        timeout=120,
        check=False,
    )


def test_json_lines_piped_in_are_read_whole_across_the_read_buffer() -> None:
    """``validate -`` reads a pipe through ``standard_input()``'s 256 KiB buffer: every
    line, numbered, whatever the buffer's edges cut (a real pipe, a real process)."""
    import json

    from kernelindex_sdk.reading.sources import LINE_BUFFER_BYTES

    bundle = Path(__file__).parent / "examples" / "valid" / "bundle-all-five.json"
    line = json.dumps(json.loads(bundle.read_text(encoding="utf-8"))).encode() + b"\n"
    count = 3 * LINE_BUFFER_BYTES // len(line) + 7
    bad = count - 3  # past two buffers' worth of lines
    lines = [line] * count
    lines[bad - 1] = b'{"a":\n'
    done = _kernelindex("validate", "--jobs", "1", "-", data=b"".join(lines))
    out = done.stdout.decode()
    assert done.returncode == 2, out
    assert out.splitlines()[0].startswith(f"<stdin>:{bad}:"), out
    assert f"{count - 1} valid, 0 invalid, 1 unreadable" in out


@pytest.mark.parametrize(("command", "reported_on"), [("validate", "stdout"), ("digest", "stderr")])
def test_standard_input_closed_is_one_line_and_exit_2(command: str, reported_on: str) -> None:
    """Started with standard input closed (``<&-``), ``-`` is unreadable: one line
    naming ``<stdin>``, exit 2, no traceback (it used to be an AttributeError)."""
    done = _kernelindex(command, "-", closed_stdin=True)
    report = getattr(done, reported_on).decode()
    assert done.returncode == 2, report
    assert "Traceback" not in done.stderr.decode()
    line = "<stdin>: cannot read: standard input is closed (no byte stream)"
    assert report.splitlines()[0] == line
