"""Pointers placed on their line and column (kernelindex_sdk.reading.positions), for annotations."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples
from strategies import value_paths

from kernelindex_sdk.base.pointers import pointer_of
from kernelindex_sdk.reading.intake import MAX_DEPTH
from kernelindex_sdk.reading.positions import pointer_positions

_SCALARS = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=30,
)


def _offset(text: str, line: int, column: int) -> int:
    lines = text.split("\n")
    return sum(len(part) + 1 for part in lines[: line - 1]) + column - 1


@settings(max_examples=examples(300), deadline=None)
@given(value=_VALUES, indent=st.sampled_from([None, 0, 2]), ascii_=st.booleans())
def test_every_pointer_sits_on_its_member_or_element(
    value: Any, indent: int | None, ascii_: bool
) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_)
    paths = value_paths(value)
    pointers = {pointer_of(path): path for path in paths}
    found = pointer_positions(text, pointers)
    assert set(found) == set(pointers)
    for pointer, path in pointers.items():
        at = _offset(text, *found[pointer])
        node = value
        for step in path[:-1]:
            node = node[step]
        if path and isinstance(node, dict):  # an object member: placed at its key
            key = json.dumps(path[-1], ensure_ascii=ascii_)
            assert text.startswith(key, at), (pointer, text[at:])
        else:  # the root or an array element: placed at its value
            decoded, _ = json.JSONDecoder().raw_decode(text, at)
            expected = value
            for step in path:
                expected = expected[step]
            assert decoded == expected


def test_a_pointer_to_nothing_sits_on_its_nearest_value() -> None:
    text = '{\n  "a": [1, {"b": 2}],\n  "c": {}\n}\n'
    assert pointer_positions(text, ["/c/missing", "/a/1/x/y", "/nope", "/a/9"]) == {
        "/c/missing": (3, 3),
        "/a/1/x/y": (2, 12),
        "/nope": (1, 1),
        "/a/9": (2, 3),
    }
    assert pointer_positions("", ["/a"]) == {}


def test_deep_nesting_needs_no_recursion() -> None:
    depth = MAX_DEPTH  # the deepest document intake reads
    text = "[" * depth + "1" + "]" * depth
    pointer = "/0" * depth
    assert pointer_positions(text, [pointer]) == {pointer: (1, depth + 1)}
