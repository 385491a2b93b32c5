"""The tail memo (``kernelindex_sdk.reading.sharedtails``): a JSON Lines line that ends as an
earlier line ended is parsed only up to that end, and reads exactly as it reads whole.

The law, checked differentially over every writer of ``test_intake.WRITERS``: a stream
read through a :class:`TailMemo` yields the very documents (values and their types)
and errors that it yields without one, whatever the lines before primed the memo with,
for valid lines and for lines cut, merged or damaged around the tail.
"""

from __future__ import annotations

import dataclasses
import json
import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples
from test_intake import WRITERS, _written

from kernelindex_sdk.errors import IntakeError
from kernelindex_sdk.models.strategies import json_values
from kernelindex_sdk.reading import intake, sharedtails
from kernelindex_sdk.reading.intake import Document
from kernelindex_sdk.reading.intake.jsonl import jsonl_records
from kernelindex_sdk.reading.sharedtails import TailMemo

pytestmark = pytest.mark.skipif(
    not intake.RUST_PARSERS, reason="the fast intake (orjson, jiter) is not installed"
)

#: The members a tail starts with here, as ValidationSession.shared_tail_keys names a
#: bundle's (any names do: the memo knows nothing of bundles).
KEYS = ("protocol", "workload", "environment")

#: The writers that write a document on one line.
LINE_WRITERS = sorted(name for name in WRITERS if b"\n" not in WRITERS[name]({"a": [1, {}]}))


def _line(writer: str, value: Any) -> bytes:
    text = _written(writer, value)
    if text is None or b"\n" in text:
        text = WRITERS["json.dumps(d)"](value)
    return text + b"\n"


def _outcomes(lines: list[bytes], tails: TailMemo | None) -> list[Any]:
    """What ``jsonl_records`` yields for ``lines``: each document's line, value and
    types (``repr``), each error's type, line and problem."""
    found: list[Any] = []
    for item in jsonl_records(lines, "t.jsonl", 1, False, tails=tails):
        if isinstance(item, Document):
            found.append(("document", item.line, repr(item.value), json.dumps(item.value)))
        else:
            assert isinstance(item, IntakeError)
            found.append(("error", type(item).__name__, item.problem))
    return found


def _tail_of(line: bytes) -> bytes | None:
    """Where the memo cuts ``line``: from the ``,`` before the last ``"key":`` of the
    first of :data:`KEYS` in it."""
    for key in KEYS:
        at = line.rfind(b'"' + key.encode() + b'":')
        if at > 0:
            cut = line.rfind(b",", 0, at)
            return line[cut:] if cut > 0 else None
    return None


def _run(n: int) -> dict[str, Any]:
    return {"name": f"run-{n}", "title": f"GeGLU · {n} — ü", "values": [n, n / 7, None, True]}


_PROTOCOL = {"name": "p", "warmup": 25, "url": "https://example.com/a:b", "nested": {"a:b": []}}
_ENVIRONMENT = {"gpu": "NVIDIA H100 80GB HBM3", "labels": {"k": "v · w"}, "memory": 85e9}


@pytest.mark.parametrize("writer", LINE_WRITERS)
def test_a_repeated_tail_is_parsed_once_and_lines_read_as_whole(writer: str) -> None:
    """Bundles whose runs differ and whose protocol and environment repeat: every line
    after the tail's second sighting is read with it (its members the same objects
    from then on), and every value is the whole line's."""
    values = [
        {"run": _run(n), "protocol": _PROTOCOL, "environment": _ENVIRONMENT} for n in range(8)
    ]
    lines = [_line(writer, value) for value in values]
    memo = TailMemo(KEYS)
    documents = list(jsonl_records(lines, "t.jsonl", 1, False, tails=memo))
    assert _outcomes(lines, TailMemo(KEYS)) == _outcomes(lines, None)
    assert [d.value for d in documents if isinstance(d, Document)] == values
    shared = [d for d in documents if isinstance(d, Document) and d.shared is not None]
    if b'"protocol":' not in lines[0]:  # a space before the colon: the memo finds no key
        assert not shared
        return
    assert len(shared) == len(lines) - 2, "the tail is remembered at its second sighting"
    assert all(d.written is None for d in shared)
    first, *rest = shared
    for document in rest:
        assert document.shared is first.shared
        assert document.value["protocol"] is first.value["protocol"]
        assert document.value["environment"] is first.value["environment"]
    assert list(first.value) == ["run", "protocol", "environment"]  # the line's order


def _primed(tail_line: bytes) -> TailMemo:
    """A memo that has seen ``tail_line``'s tail twice (so it remembers it)."""
    memo = TailMemo(KEYS)
    list(jsonl_records([tail_line, tail_line], "t.jsonl", 1, False, tails=memo))
    return memo


@pytest.mark.parametrize(
    "head",
    [
        b"{",  # an empty head: "{," is no JSON
        b"{ ",
        b'{"run": {"a": 1}} ',  # a complete object before the tail: trailing data
        b'{"run": {"a": "1',  # cut inside a string
        b'{"run": [{"a": 1}',  # cut inside an array: a bracket left open
        b'{"run": {"a": 1',  # cut one level down: the outer object left open
        b'{"run": ',  # a key without its value
        b'{"run": 1,',  # a trailing comma
        b'{"protocol": 1',  # a key of the tail again: a duplicate
        b'{"run": 1, "environment": 2',  # ...after the cut's key is looked for
        b'{"run": 1, "run": 2',  # a duplicate within the head
        b'{"run": 1e400',  # a number beyond the double range
        b'{"run": 9007199254740993',  # an unsafe integer
        b'{"run": "\\ud800"',  # a lone surrogate
        b'\xef\xbb\xbf{"run": 1',  # a byte-order mark
        b'{"run": "\xff"',  # not UTF-8
        b'["run", 1',  # an array, not an object
        b'{"run": 1',  # valid: read with the tail
        b'{"run": {"a": 1}',  # valid too
    ],
)
def test_a_head_that_does_not_close_into_an_object_is_not_read_with_the_tail(
    head: bytes,
) -> None:
    """Each head, put before a remembered tail, reads as the whole line reads: an
    error wherever the line is no strict JSON object, whatever the tail."""
    whole = b'{"run": 0, "protocol": {"a": [1, 2]}, "environment": {"b": "c"}}\n'
    tail = _tail_of(whole)
    assert tail == b', "protocol": {"a": [1, 2]}, "environment": {"b": "c"}}\n'
    line = head + tail
    memo = _primed(whole)
    assert _outcomes([line], memo) == _outcomes([line], None)
    valid = head in (b'{"run": 1', b'{"run": {"a": 1}')
    assert (_outcomes([line], None)[0][0] == "document") is valid
    (document,) = jsonl_records([line], "t.jsonl", 1, False, tails=memo)
    assert (isinstance(document, Document) and document.shared is not None) is valid


def test_a_tail_that_is_not_an_object_end_is_never_remembered() -> None:
    """A "tail" cut inside a nested object (the key found there, as a string value)
    does not read as an object's end: it is never remembered, and its lines read whole.
    (Cut at the outermost level it is a tail like any: the cut need not be before the
    key itself.)"""
    line = b'{"run": {"m": 1, "kind": "protocol"}}\n'
    memo = TailMemo(KEYS)
    for _ in range(5):
        (document,) = jsonl_records([line], "t.jsonl", 1, False, tails=memo)
        assert isinstance(document, Document) and document.shared is None
    assert not memo._tails


_KEY = st.text(max_size=5).filter(lambda key: key not in KEYS)


@settings(max_examples=examples(300), deadline=None)
@given(st.data())
def test_any_stream_reads_with_a_memo_as_without(data: st.DataObject) -> None:
    """Lines of one writer sharing tails, and lines made from them by cutting the head
    anywhere, putting a tail's key in the head, or damaging a byte before the tail: read
    through one memo, in any order and repeated, as read without one."""
    writer = data.draw(st.sampled_from(LINE_WRITERS), label="writer")
    tails = data.draw(
        st.lists(
            st.dictionaries(st.sampled_from(KEYS), json_values, min_size=1, max_size=3),
            min_size=1,
            max_size=3,
        ),
        label="tails",
    )
    heads = data.draw(
        st.lists(
            st.dictionaries(_KEY, json_values, min_size=1, max_size=3), min_size=1, max_size=4
        ),
        label="heads",
    )
    lines = [_line(writer, {**head, **tail}) for head in heads for tail in tails]
    damaged: list[bytes] = []
    for line in lines:
        tail = _tail_of(line)
        if tail is None:
            continue
        head = line[: len(line) - len(tail)]
        cut = data.draw(st.integers(0, len(head)), label="cut")
        damaged.append(head[:cut] + tail)
        key = data.draw(st.sampled_from(KEYS), label="key")
        damaged.append(b'{"' + key.encode() + b'": 0, ' + line[1:])
        damaged.append(head + b', "' + key.encode() + b'": 0' + tail)
        if len(head) > 1:
            at = data.draw(st.integers(1, len(head) - 1), label="at")
            byte = data.draw(st.sampled_from(b'{}[],:"\\ 0a'), label="byte")
            damaged.append(head[:at] + bytes([byte]) + head[at + 1 :] + tail)
    pool = lines + damaged
    stream = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=30), label="stream")
    stream = lines + lines + stream  # the tails remembered first
    assert _outcomes(stream, TailMemo(KEYS)) == _outcomes(stream, None)


def test_a_stream_of_distinct_tails_is_read_whole_after_a_window() -> None:
    """Where no tail repeats, the memo stops looking after a window (and looks again
    later, after a longer pause each time); where tails repeat, it goes on."""
    window = sharedtails._WINDOW_LINES
    distinct = [b'{"run": %d, "protocol": {"n": %d}}\n' % (n, n) for n in range(window + 10)]
    memo = TailMemo(KEYS)
    assert _outcomes(distinct, memo) == _outcomes(distinct, None)
    assert memo._paused > 0 and memo._pause == 2 * window
    repeated = [b'{"run": %d, "protocol": {"n": 1}}\n' % n for n in range(window + 10)]
    memo = TailMemo(KEYS)
    documents = list(jsonl_records(repeated, "t.jsonl", 1, False, tails=memo))
    assert memo._paused == 0
    assert (
        sum(isinstance(d, Document) and d.shared is not None for d in documents)
        == len(repeated) - 2
    )


def test_memory_stays_bounded_by_the_tails_bytes() -> None:
    """Long lines make long tails: the memo keeps their bytes within a bound too."""
    memo = TailMemo(KEYS)
    pad = "x" * 60_000
    for n in range(80):
        line = b'{"run": 0, "protocol": {"n": %d, "pad": "%s"}}\n' % (n, pad.encode())
        list(jsonl_records([line, line, line], "t.jsonl", 1, False, tails=memo))
        assert memo._tail_bytes <= sharedtails._TAIL_BYTES
        assert memo._seen_once_bytes <= sharedtails._SEEN_ONCE_BYTES
        assert memo._tail_bytes == sum(map(len, memo._tails))
    assert 0 < len(memo._tails) < 40


def test_memory_stays_bounded_over_many_distinct_tails() -> None:
    """Tails are remembered up to a bound, then the memo starts again."""
    memo = TailMemo(KEYS)
    kept = sharedtails._TAILS_KEPT
    lines = [b'{"run": 0, "protocol": {"n": %d}}\n' % n for n in range(kept + 5)]
    for line in lines:  # each tail seen twice in a row: remembered, then read with it
        list(jsonl_records([line, line, line], "t.jsonl", 1, False, tails=memo))
        assert len(memo._tails) <= kept and len(memo._seen_once) <= sharedtails._SEEN_ONCE_KEPT
    assert 0 < len(memo._tails) <= kept


def test_without_keys_the_memo_reads_every_line_whole() -> None:
    lines = [b'{"run": 0, "protocol": {"n": 1}}\n'] * 3
    memo = TailMemo(())
    documents = list(jsonl_records(lines, "t.jsonl", 1, False, tails=memo))
    assert all(isinstance(d, Document) and d.shared is None for d in documents)
    assert _outcomes(lines, memo) == _outcomes(lines, None)


def test_strict_numbers_reads_without_the_memo() -> None:
    """``strict_numbers`` takes the stdlib path for every line: the memo is not asked."""
    lines = [b'{"run": %d, "protocol": {"n": 1.0}}\n' % n for n in range(4)]
    memo = TailMemo(KEYS)
    documents = list(jsonl_records(lines, "t.jsonl", 1, False, True, tails=memo))
    assert all(isinstance(d, Document) and d.shared is None for d in documents)
    assert not memo._tails and not memo._seen_once


def test_a_documents_tail_is_not_kept_by_copies() -> None:
    """``Document.shared`` is the intake's: a copy made by ``replace`` or pickling, or a
    Document built by hand, has none (and equality ignores it)."""
    line = b'{"run": 1, "protocol": {"n": 1}}\n'
    *_, document = jsonl_records([line] * 3, "t.jsonl", 1, False, tails=TailMemo(KEYS))
    assert isinstance(document, Document) and document.shared is not None
    assert dataclasses.replace(document).shared is None
    assert pickle.loads(pickle.dumps(document)).shared is None
    assert Document("t.jsonl", 3, document.value).shared is None
    assert document == Document("t.jsonl", 3, document.value)
    assert "shared" not in repr(document)


def test_a_stream_without_the_keys_pauses_longest_at_once() -> None:
    """Records, not bundles (no line holds a key the tails start with): after one
    window the memo stops looking for its longest pause."""
    window = sharedtails._WINDOW_LINES
    records = [b'{"kind": "BenchmarkRun", "spec": {"n": %d}}\n' % n for n in range(window + 10)]
    memo = TailMemo(KEYS)
    assert _outcomes(records, memo) == _outcomes(records, None)
    assert memo._paused > window and memo._pause == sharedtails._LONGEST_PAUSE
