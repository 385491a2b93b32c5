"""Python values and text made in Python, held to what strict intake accepts from bytes:
why a value is not one strict JSON document (:func:`json_problems`), the fast yes or no
(:func:`is_strict_json`), and whether text holds a lone surrogate
(:func:`has_raw_surrogate`).

The encoders (``dumps``, ``canonicalize``) and the models' converter ask these of what a
caller built; a document read by the intake needs none of them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from kernelindex_sdk.base.escaping import int_text, short_repr
from kernelindex_sdk.base.pointers import escape_token
from kernelindex_sdk.base.recordformat import MAX_DEPTH, MAX_SAFE_INTEGER
from kernelindex_sdk.errors import (
    InvalidEncoding,
    NestingTooDeep,
    NonFiniteNumber,
    NumberOutOfRange,
    Problem,
)
from kernelindex_sdk.reading.intake._patterns import RE
from kernelindex_sdk.reading.intake._problems import lone_surrogate_message


def has_raw_surrogate(text: str) -> bool:
    """Whether str input holds a surrogate code point (e.g. from ``surrogateescape``).

    Encoding is C-fast, and faster than a regex search over non-ASCII text.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def json_problems(value: Any, *, pointer: str = "") -> list[Problem]:
    """Why a Python value is not one strict JSON document, each problem located.

    Walked iteratively, so any depth and cycles are safe: nesting deeper than
    :data:`MAX_DEPTH` (a cycle is infinitely deep), keys that are not strings, values
    of no JSON type, non-finite floats, integers beyond ±(2**53 − 1), and strings or
    keys holding a lone surrogate — what strict intake refuses in text, refused in
    objects too. The one walk over Python values that any depth is safe in: code that
    recurses over a value (cattrs, an encoder) catches its ``RecursionError`` and asks
    this why.
    """
    problems: list[Problem] = []
    on_path: set[int] = set()
    # (value, pointer, depth, leaving): containers are pushed again to leave them.
    stack: list[tuple[Any, str, int, bool]] = [(value, pointer, 0, False)]
    while stack:
        item, at, depth, leaving = stack.pop()
        if leaving:
            on_path.discard(id(item))
            continue
        kind = type(item)
        if kind is dict or kind is list or isinstance(item, (dict, list, tuple)):
            if id(item) in on_path:
                problems.append(Problem("cycle: the value contains itself", "not-json", at))
                continue
            if depth >= MAX_DEPTH:
                message = f"arrays/objects nested deeper than {MAX_DEPTH} levels"
                problems.append(Problem(message, NestingTooDeep.code, at))
                continue
            on_path.add(id(item))
            stack.append((item, at, depth, True))
            if isinstance(item, dict):
                for key, child in reversed(list(item.items())):
                    if not isinstance(key, str):
                        problems.append(
                            Problem(
                                f"object key {short_repr(key)} is a {type(key).__name__}, "
                                "not a string",
                                "not-json",
                                at,
                            )
                        )
                        continue
                    surrogate = RE.surrogate_char.search(key)
                    if surrogate is not None:
                        message = lone_surrogate_message(surrogate.group(), "object key")
                        problems.append(Problem(message, InvalidEncoding.code, at))
                        continue
                    stack.append((child, f"{at}/{escape_token(key)}", depth + 1, False))
            else:
                for index in range(len(item) - 1, -1, -1):
                    stack.append((item[index], f"{at}/{index}", depth + 1, False))
        elif isinstance(item, str):
            surrogate = RE.surrogate_char.search(item)
            if surrogate is not None:
                message = lone_surrogate_message(surrogate.group(), "string")
                problems.append(Problem(message, InvalidEncoding.code, at))
        elif isinstance(item, (bool, type(None))):
            continue
        elif isinstance(item, int):
            if not -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:
                message = (
                    f"integer {int_text(item)} is outside ±(2**53 - 1): JCS cannot write it exactly"
                )
                problems.append(Problem(message, NumberOutOfRange.code, at))
        elif isinstance(item, float):
            if not math.isfinite(item):
                problems.append(Problem(f"{item!r} is not a JSON number", NonFiniteNumber.code, at))
        elif hasattr(type(item), "__attrs_attrs__"):
            continue  # a model nested in plain JSON: as_json at the top takes care of it
        else:
            problems.append(Problem(f"{type(item).__name__} is not a JSON value", "not-json", at))
    problems.sort(key=lambda p: p.pointer)
    return problems


def is_strict_json(value: Any) -> bool:
    """Whether :func:`json_problems` finds nothing, decided fast: one iterative walk
    that builds no pointers (a cycle shows as nesting beyond the limit). The precise
    problems are worked out only when this says no.

    Strings are not searched for lone surrogates here: that would cost every string of
    every record, and the encoders meet them anyway (``dumps`` and ``canonicalize``
    then ask :func:`json_problems`, which looks)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    pop, push = stack.pop, stack.append
    limit = MAX_DEPTH
    while stack:
        item, depth = pop()
        if type(item) is dict:
            for key in item:
                if type(key) is not str:
                    return False
            children: Iterable[Any] = item.values()
        elif type(item) is list:
            children = item
        else:  # only the top level is not a container here
            children = (item,)
            depth -= 1
        if depth >= limit:
            return False
        for child in children:
            kind = type(child)
            if kind is str or kind is bool or child is None:
                continue
            if kind is int:
                if not -MAX_SAFE_INTEGER <= child <= MAX_SAFE_INTEGER:
                    return False
            elif kind is float:
                if child - child != 0.0:  # NaN and the infinities
                    return False
            elif kind is dict or kind is list:
                push((child, depth + 1))
            else:
                return False  # a tuple, a subclass, a model, anything else: look closely
    return True
