"""Writes that are whole or raise, on real pipes: what every writer of the SDK uses."""

from __future__ import annotations

import io
import os
import threading

import pytest

from kernelindex_sdk.base.writes import WholeWrites, whole_text_stream, write_all

BIG = b"x" * (1 << 20)  # far more than a pipe holds


def _reader_that_leaves(read_fd: int, after: int) -> threading.Thread:
    """Read ``after`` bytes, then close the pipe, as ``head -c`` does."""

    def run() -> None:
        got = 0
        while got < after:
            got += len(os.read(read_fd, after - got))
        os.close(read_fd)

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def _reader_that_drains(read_fd: int, into: bytearray, step: int) -> threading.Thread:
    """Read to the pipe's end, ``step`` bytes at most at a time, into ``into``."""

    def run() -> None:
        while chunk := os.read(read_fd, step):
            into.extend(chunk)

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_a_reader_that_leaves_mid_write_raises() -> None:
    read_fd, write_fd = os.pipe()
    reader = _reader_that_leaves(read_fd, 100)
    try:
        with pytest.raises(BrokenPipeError):
            write_all(write_fd, BIG)
    finally:
        reader.join()
        os.close(write_fd)


def test_a_buffered_text_stream_over_it_raises_too() -> None:
    read_fd, write_fd = os.pipe()
    reader = _reader_that_leaves(read_fd, 100)
    stream = io.TextIOWrapper(io.BufferedWriter(WholeWrites(write_fd)), encoding="utf-8")
    try:
        with pytest.raises(BrokenPipeError):
            stream.write(BIG.decode())
            stream.flush()
    finally:
        reader.join()
        stream.detach()
        os.close(write_fd)


def test_everything_is_written_through_a_pipe_that_fills() -> None:
    read_fd, write_fd = os.pipe()
    received = bytearray()
    reader = _reader_that_drains(read_fd, received, 1 << 16)
    assert write_all(write_fd, memoryview(BIG)) == len(BIG)
    os.close(write_fd)
    reader.join()
    os.close(read_fd)
    assert received == BIG


def test_a_stream_without_a_descriptor_is_left_as_it_is() -> None:
    stream = io.StringIO()
    assert whole_text_stream(stream) is stream  # type: ignore[arg-type]


def test_a_non_blocking_descriptor_is_waited_on_not_failed() -> None:
    """A pipe left non-blocking by whoever shares it: a full pipe is EAGAIN, not an end."""
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    received = bytearray()
    reader = _reader_that_drains(read_fd, received, 1 << 12)
    try:
        assert write_all(write_fd, BIG) == len(BIG)
    finally:
        os.close(write_fd)
        reader.join()
        os.close(read_fd)
    assert received == BIG
