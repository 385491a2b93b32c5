"""kernelindex_sdk.canonical: byte-identical to the rfc8785 reference, but fast.

Every fast path (stdlib ``json`` C encoder, and orjson when installed) is checked
against ``rfc8785.dumps``: differentially on generated JSON, exhaustively on every
code point for string escaping and key order, and on floats around every boundary
the fast path relies on. A fast path may decline (``None``), never differ.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import enum
import functools
import hashlib
import importlib.util
import json
import math
import os
import random
import struct
import subprocess
import sys
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import rfc8785
import shared_data
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from profiles import examples, variants
from strategies import shuffle_keys

from kernelindex_sdk import canonical
from kernelindex_sdk.base.native import NATIVE_VARIABLE, native_allowed
from kernelindex_sdk.canonical import DIGEST_PREFIX, canonicalize, digest, identity

MAX_SAFE = 2**53 - 1

FastFn = Callable[[Any], "bytes | None"]

#: Every fast path present here: the stdlib one always, orjson's when installed.
FAST_PATHS: list[Any] = [pytest.param(canonical._canonicalize_json, id="json")]


def _orjson_with_full_scan(value: Any) -> bytes | None:
    """The orjson path with the stdlib path's full scan (what an orjson that stopped
    refusing str-subclass keys or unsafe ints would get)."""
    saved = canonical._orjson_scan
    canonical._orjson_scan = canonical._scan_container
    try:
        return canonical._canonicalize_orjson(value)
    finally:
        canonical._orjson_scan = saved


def _orjson_with_scan(scan: Callable[[Any, list[float]], bool]) -> FastFn:
    """The orjson path with ``scan`` as its walk, whichever the process has chosen by
    now (the full scan, gathering every float, until the broad float probe has run;
    the short one, gathering only the floats outside the rule, after it)."""

    def fast(value: Any) -> bytes | None:
        saved = canonical._orjson_scan
        canonical._orjson_scan = scan
        try:
            return canonical._canonicalize_orjson(value)
        finally:
            canonical._orjson_scan = saved

    return fast


if canonical._orjson_dumps is not None:
    FAST_PATHS.append(pytest.param(canonical._canonicalize_orjson, id="orjson"))
    FAST_PATHS.append(pytest.param(_orjson_with_full_scan, id="orjson-full-scan"))
    if canonical._orjson_floats_are_repr():  # the short scan is used only then
        FAST_PATHS.append(
            pytest.param(_orjson_with_scan(canonical._scan_values), id="orjson-short-scan")
        )
        if canonical.SCAN == "native":
            FAST_PATHS.append(
                pytest.param(_orjson_with_scan(canonical._short_scan), id="orjson-native-scan")
            )


def _outcome(fn: Callable[[Any], bytes], value: Any) -> tuple[str, Any]:
    try:
        return ("ok", fn(value))
    except Exception as exc:  # the exception's type is what must match
        return ("raised", type(exc))


# ---------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------

EDGE_FLOATS = [
    1e21,
    1e-7,
    5e-324,
    1.7976931348623157e308,
    -0.0,
    0.0,
    0.1,
    100.0,
    1e16,
    123456789012345680.0,
    1e-4,
    math.nextafter(1e-4, 0.0),
    math.nextafter(1e-4, 1.0),
    1e-5,
    1e-6,
    2.5e-5,
    0.000123,
    1e15 + 0.5,
    4503599627370495.5,
    9007199254740991.0,
    9007199254740992.0,
    math.nextafter(1e16, 0.0),
    1e20,
    1e22,
    70.51395416259766,
    2.0**-1074,
    2.0**-1022,
]
EDGE_FLOATS += [-x for x in EDGE_FLOATS]

#: Characters where the encoders' escaping or ordering could plausibly differ.
SPECIAL_CHARS = (
    "\x00\x01\x07\x08\t\n\x0b\x0c\r\x0e\x1f \"'\\/\x7f\x80\x9f\xa0\xb7\xff"
    "\u0100\u2028\u2029\ud7ff\ue000\uf8ff\ufeff\uffee\ufffd\uffff"
    "\U00010000\U0001f600\U0001f680\U0010ffff"
)

json_floats = st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(EDGE_FLOATS)
json_ints = st.integers(-MAX_SAFE, MAX_SAFE) | st.sampled_from(
    [0, 1, -1, MAX_SAFE, -MAX_SAFE, 10**15, 2**31, -(2**63) // 2**11]
)
json_chars = st.characters(codec="utf-8") | st.sampled_from(SPECIAL_CHARS)
json_text = st.text(json_chars, max_size=12)
# Small alphabets make keys that share prefixes and differ right at a BMP-high /
# non-BMP char, where UTF-16 and code-point order part ways.
KEY_CHARS = "aAbZ_0é\ud7ff\ue000\uffff\U00010000\U0001f600"
json_keys = st.text(st.sampled_from(KEY_CHARS), max_size=4) | json_text
json_scalars = st.none() | st.booleans() | json_ints | json_floats | json_text


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(children, max_size=5) | st.dictionaries(json_keys, children, max_size=6)


json_values = st.recursive(json_scalars, _containers, max_leaves=40)

# The fast path's own domain: it must be taken there (not decline) and be exact.
fast_floats = st.floats(min_value=1e-4, max_value=1e15).filter(lambda x: not x.is_integer())
fast_floats = fast_floats | fast_floats.map(lambda x: -x)
fast_keys = st.text(
    st.characters(codec="utf-8", max_codepoint=0xD7FF)
    | st.sampled_from("\U00010000\U0001f600\U0010ffff"),
    max_size=8,
)
fast_values = st.recursive(
    st.none() | st.booleans() | st.integers(-MAX_SAFE, MAX_SAFE) | fast_floats | json_text,
    lambda ch: st.lists(ch, max_size=5) | st.dictionaries(fast_keys, ch, max_size=6),
    max_leaves=40,
)


class Color(str, enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class Plain(enum.Enum):
    A = "a"


@dataclasses.dataclass
class Point:
    x: int = 1


#: Values orjson writes natively (their value, an ISO date, a UUID's text, a dataclass
#: as an object, a fragment verbatim) where the reference raises: a walk that let one
#: through at any depth would give bytes for what has none.
ORJSON_NATIVE_ONLY: list[Any] = [
    Plain.A,
    datetime.date(2024, 1, 2),
    datetime.datetime(2024, 1, 2, 3, 4, 5),
    uuid.UUID(int=1),
    Point(),
]
if importlib.util.find_spec("orjson") is not None:
    import orjson

    if hasattr(orjson, "Fragment"):
        ORJSON_NATIVE_ONLY.append(orjson.Fragment(b"1"))


class LyingDict(dict):  # type: ignore[type-arg]
    def items(self) -> Any:
        return [("lie", 1)]


class LyingList(list):  # type: ignore[type-arg]
    def __iter__(self) -> Any:
        return iter(["lie"])


class LoudStr(str):
    def __lt__(self, other: object) -> bool:
        return False


class HalfFloat(float):
    pass


# Values a strict JSON reader never yields: the reference either handles them or
# raises, and canonicalize must do exactly the same.
odd_scalars = (
    st.sampled_from(
        [
            float("nan"),
            float("inf"),
            float("-inf"),
            2**53,
            -(2**53),
            2**64,
            "\ud800",
            "a\udfffb",
            b"bytes",
            Color.RED,
            Level.HIGH,
            HalfFloat(0.5),
            HalfFloat(3.0),
            LoudStr("x"),
            object(),
            {1, 2},
            1 + 2j,
            *ORJSON_NATIVE_ONLY,
        ]
    )
    | st.integers()
)
odd_keys = json_keys | st.sampled_from([1, None, 2.5, b"k", "\ud800", LoudStr("b"), Color.RED])


def _odd_containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return (
        st.lists(children, max_size=4)
        | st.lists(children, max_size=4).map(tuple)
        | st.lists(children, max_size=4).map(LyingList)
        | st.dictionaries(odd_keys, children, max_size=4)
        | st.dictionaries(json_keys, children, max_size=4).map(OrderedDict)
        | st.dictionaries(json_keys, children, max_size=4).map(LyingDict)
    )


odd_values = st.recursive(json_scalars | odd_scalars, _odd_containers, max_leaves=20)


# ---------------------------------------------------------------------------
# Differential properties
# ---------------------------------------------------------------------------


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_canonicalize_equals_reference(value: Any) -> None:
    assert canonicalize(value) == rfc8785.dumps(value)


@pytest.mark.parametrize("fast", FAST_PATHS)
@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=json_values)
def test_each_fast_path_declines_or_equals_reference(fast: FastFn, value: Any) -> None:
    out = fast(value)
    assert out is None or out == rfc8785.dumps(value)


@pytest.mark.parametrize("fast", FAST_PATHS)
@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=fast_values)
def test_each_fast_path_is_taken_and_exact_on_its_domain(fast: FastFn, value: Any) -> None:
    assert fast(value) == rfc8785.dumps(value)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(odd_values)
def test_non_json_values_behave_like_reference(value: Any) -> None:
    assert _outcome(canonicalize, value) == _outcome(rfc8785.dumps, value)


@pytest.mark.parametrize("fast", FAST_PATHS)
@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=odd_values)
def test_each_fast_path_declines_non_json_or_equals_reference(fast: FastFn, value: Any) -> None:
    out = fast(value)
    if out is not None:
        assert out == rfc8785.dumps(value)


@pytest.mark.skipif(canonical._orjson_dumps is None, reason="orjson not installed")
def test_orjson_refuses_what_the_short_scan_leaves_to_it() -> None:
    assert canonical._orjson_refuses(canonical._KEYS_AND_INTS)
    assert canonical._orjson_refuses(canonical._SURROGATES)
    assert canonical._ORJSON_REFUSES_KEYS_AND_INTS
    assert canonical._orjson_scan in (canonical._scan_container, canonical._short_scan)
    for value in ({LoudStr("k"): 1}, {Color.RED: 1}, {1: 1}, [2**53], {"a": [-(2**53)]}):
        assert canonical._canonicalize_orjson(value) is None
        assert _outcome(canonicalize, value) == _outcome(rfc8785.dumps, value)


@pytest.mark.parametrize(
    "value",
    [
        float("nan"),
        float("inf"),
        -float("inf"),
        2**53,
        -(2**53),
        "\ud83d",
        {"\udc00": 1},
        {1: 2},
        {"a": {None: 1}},
        [b"x"],
        {1.5},
        object(),
    ],
    # repr of object() holds its address: ids must be the same in every process
    # (pytest-xdist collects in each worker and compares).
    ids=lambda value: "object()" if type(value) is object else repr(value),
)
def test_rejected_like_reference(value: Any) -> None:
    with pytest.raises(Exception) as ours:
        canonicalize(value)
    with pytest.raises(Exception) as ref:
        rfc8785.dumps(value)
    assert type(ours.value) is type(ref.value)
    assert isinstance(ours.value, ValueError)  # CanonicalizationError, UnicodeEncodeError


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.0, b"1"),
        (100.0, b"100"),
        (-0.0, b"0"),
        (0.0, b"0"),
        (1e16, b"10000000000000000"),
        (123456789012345680.0, b"123456789012345680"),
        (1e21, b"1e+21"),
        (1e-7, b"1e-7"),
        (1e-6, b"0.000001"),
        (5e-324, b"5e-324"),
        (1.7976931348623157e308, b"1.7976931348623157e+308"),
        (0.1, b"0.1"),
        (MAX_SAFE, b"9007199254740991"),
        (True, b"true"),
        (None, b"null"),
        ([1, True, 1.5], b"[1,true,1.5]"),
        ('\x7f\u2028\x1f\t"\\', b'"\x7f\xe2\x80\xa8\\u001f\\t\\"\\\\"'),
        ({"\ue000": 1, "\U00010000": 2}, b'{"\xf0\x90\x80\x80":2,"\xee\x80\x80":1}'),
        ({"b": [], "a": {}, "": 0}, b'{"":0,"a":{},"b":[]}'),
        (Level.HIGH, b"3"),
        (Color.RED, b'"red"'),
        ((1, "x"), b'[1,"x"]'),
        (OrderedDict([("b", 1), ("a", 2)]), b'{"a":2,"b":1}'),
    ],
    ids=repr,
)
def test_known_bytes(value: Any, expected: bytes) -> None:
    assert rfc8785.dumps(value) == expected  # the fixture itself is right
    assert canonicalize(value) == expected


def test_subclasses_that_lie_get_the_reference_bytes() -> None:
    value: Any = {"d": LyingDict(x=1), "l": LyingList([1, 2]), LoudStr("k"): LoudStr("v"), "a": 0}
    assert canonicalize(value) == rfc8785.dumps(value)
    for fast in (canonical._canonicalize_json, canonical._canonicalize_orjson):
        assert fast(value) is None
    assert _orjson_with_full_scan(value) is None


def test_nesting_beyond_the_recursion_limit_behaves_like_reference() -> None:
    value: Any = 0
    for _ in range(300):  # deeper than orjson's 255: must fall back, still exact
        value = [value]
    assert canonicalize(value) == rfc8785.dumps(value) == b"[" * 300 + b"0" + b"]" * 300
    for _ in range(sys.getrecursionlimit() * 2):
        value = {"k": value}
    assert _outcome(canonicalize, value) == _outcome(rfc8785.dumps, value)


def test_cycles_behave_like_reference() -> None:
    value: list[Any] = [1]
    value.append(value)
    assert _outcome(canonicalize, value) == _outcome(rfc8785.dumps, value)


# ---------------------------------------------------------------------------
# Exhaustive checks of the rules the fast paths rest on
# ---------------------------------------------------------------------------

ALL_CHARS = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]

# The code-point checks below run once per fast path on the same values; the reference
# (pure Python) writes each value once, shared by all. Over every code point that takes
# the reference ~6 s, so plain pytest checks every STEP-th one (a different residue
# each time a chunk boundary is crossed, as STEP is odd) and .ci/run's slow run all.
STEP = 13
EVERY = [pytest.param(1, id="every", marks=pytest.mark.slow), pytest.param(STEP, id="sample")]


def _with_reference(value: Any) -> tuple[Any, bytes]:
    return value, rfc8785.dumps(value)


@functools.cache
def _escaping_cases(step: int) -> list[tuple[Any, bytes]]:
    chars = ALL_CHARS[::step]
    # One string per code point, so each is escaped on its own...
    cases = [_with_reference(chars)]
    # ...and in context, at every offset of a long string (SIMD chunk boundaries).
    text = "".join(ALL_CHARS[:0x800]) + "".join(chars[0x800 // step :: 97])
    for start in range(0, 40):
        cases.append(_with_reference([text[start:], "a" * start + text, text[: start * 50]]))
    return cases


@pytest.mark.parametrize("step", EVERY)
@pytest.mark.parametrize("fast", FAST_PATHS)
def test_every_code_point_escapes_like_reference(fast: FastFn, step: int) -> None:
    for value, expected in _escaping_cases(step):
        assert fast(value) == expected


@functools.cache
def _key_order_cases(step: int) -> dict[str, tuple[Any, bytes]]:
    chars = ALL_CHARS[::step]
    low = [c for c in chars if ord(c) < 0xD800]
    astral = [c for c in chars if ord(c) >= 0x10000][::5]
    return {
        # No non-BMP: orders agree.
        "bmp": _with_reference({c: 0 for c in chars if ord(c) < 0x10000}),
        # Below U+D800 and non-BMP: orders agree, so the fast path is taken.
        "low_and_astral": _with_reference(dict.fromkeys(low + astral, 0)),
        # Two-char keys sharing a prefix: the order is decided at the second char.
        "prefixed": _with_reference(dict.fromkeys(["k" + c for c in low[::3] + astral[::50]], 0)),
        # With U+E000..U+FFFF beside non-BMP keys the orders differ.
        "mixed": _with_reference(dict.fromkeys(["k" + c for c in ALL_CHARS[:: 101 * step]], 0)),
    }


@pytest.mark.parametrize("step", EVERY)
@pytest.mark.parametrize("fast", FAST_PATHS)
def test_key_order_over_every_code_point(fast: FastFn, step: int) -> None:
    cases = _key_order_cases(step)
    for name in ("bmp", "low_and_astral", "prefixed"):
        value, expected = cases[name]
        assert fast(value) == expected, name
    # Where the orders differ: declined, never wrong.
    mixed, expected = cases["mixed"]
    assert fast(mixed) is None
    assert canonicalize(mixed) == expected


@pytest.mark.parametrize(
    "keys",
    [
        ["\ue000", "\U00010000"],
        ["\uffff", "\U0001f600", "a"],
        ["x\uff01", "x\U0001f600y", "x"],
        ["\ufeff", "\U0010ffff"],
    ],
)
def test_keys_where_utf16_and_code_point_order_differ_fall_back(keys: list[str]) -> None:
    value = {"outer": {k: i for i, k in enumerate(keys)}}
    assert sorted(keys) != sorted(keys, key=lambda k: k.encode("utf-16-be"))
    for fast in (canonical._canonicalize_json, canonical._canonicalize_orjson):
        assert fast(value) is None
    assert canonicalize(value) == rfc8785.dumps(value)


def _interesting_floats() -> list[float]:
    rng = random.Random(8785)
    out = [struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(15000)]
    out += [rng.uniform(-1e6, 1e6) for _ in range(5000)]
    floats32 = (
        struct.unpack("<f", rng.getrandbits(32).to_bytes(4, "little"))[0] for _ in range(5000)
    )
    out += [float(x) for x in floats32]
    for exp in range(-330, 309):  # every power of ten and its neighbours
        for base in (1.0, 2.5, 9.999999999999999, 5.0):
            x = base * 10.0**exp if exp >= -308 else base * 1e-300 * 10.0 ** (exp + 300)
            out += [x, math.nextafter(x, 0.0), math.nextafter(x, math.inf)]
    for p in range(-1074, 1024):  # every power of two and its neighbours
        x = math.ldexp(1.0, p)
        out += [x, math.nextafter(x, 0.0), math.nextafter(x, math.inf)]
    x = 1e-4
    for _ in range(1000):  # the fast path's lower edge, both sides
        out += [x]
        x = math.nextafter(x, 0.0)
    x = 1e-4
    for _ in range(1000):
        out += [x]
        x = math.nextafter(x, 1.0)
    out = [x for x in out if math.isfinite(x)]
    return out + [-x for x in out]


INTERESTING_FLOATS = _interesting_floats()


def test_float_rule_is_exactly_repr_without_exponent_or_dot_zero() -> None:
    for x in INTERESTING_FLOATS:
        r = repr(x)
        plain = "e" not in r and not r.endswith(".0")
        assert canonical._floats_print_as_repr([x]) == plain, r


def test_floats_in_the_fast_rule_print_as_reference() -> None:
    fast = [x for x in INTERESTING_FLOATS if canonical._floats_print_as_repr([x])]
    assert len(fast) > 10000
    # The stdlib encoder writes float.__repr__: the reference must agree.
    assert rfc8785.dumps(fast) == ("[" + ",".join(map(repr, fast)) + "]").encode()


@functools.cache
def _float_cases() -> tuple[tuple[Any, bytes], tuple[Any, bytes]]:
    """All the interesting floats, and those the fast rule takes, with their reference bytes."""
    eligible = [x for x in INTERESTING_FLOATS if canonical._floats_print_as_repr([x])]
    return _with_reference(INTERESTING_FLOATS), _with_reference(eligible)


@pytest.mark.parametrize("fast", FAST_PATHS)
def test_all_interesting_floats_through_each_fast_path(fast: FastFn) -> None:
    (floats, expected), (eligible, expected_eligible) = _float_cases()
    out = fast(floats)
    # Exponent/integral floats among them: a path either declines them or, where it
    # prints them itself (orjson with fragments), prints exactly what the reference does.
    assert out is None or out == expected
    if fast is canonical._canonicalize_orjson and canonical._Fragment is not None:
        assert out == expected  # the fragment path must take them, or it is dead code
    assert fast(eligible) == expected_eligible
    assert canonicalize(floats) == expected


def test_the_broad_float_probe_waits_for_a_float_and_its_fallback_is_exact() -> None:
    # Import does not pay for the probe (every `kernelindex` start would); the first
    # float on the fast path runs it. Where it fails, each value's floats are compared.
    code = (
        "from kernelindex_sdk import canonical as c\n"
        "assert c._FLOATS_ARE_REPR == [], c._FLOATS_ARE_REPR\n"
        "c.canonicalize({'a': [1, 'x', None]})\n"
        "assert c._FLOATS_ARE_REPR == [], c._FLOATS_ARE_REPR\n"
        "c.canonicalize({'a': 70.51395416259766})\n"
        "ran = [True] if c.BACKEND == 'orjson' else []\n"
        "assert c._FLOATS_ARE_REPR == ran, c._FLOATS_ARE_REPR\n"
        "assert c.BACKEND != 'orjson' or c._orjson_scan is c._short_scan\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    (_, _), (eligible, expected) = _float_cases()
    saved = list(canonical._FLOATS_ARE_REPR)
    saved_scan = canonical._orjson_scan
    try:
        canonical._FLOATS_ARE_REPR[:] = [False]  # as if orjson's floats were not repr's
        canonical._orjson_scan = canonical._scan_container  # it gathers every float
        assert canonicalize(eligible) == expected
        assert canonicalize({"k": eligible[:50], "m": 0.1}) == rfc8785.dumps(
            {"k": eligible[:50], "m": 0.1}
        )
    finally:
        canonical._FLOATS_ARE_REPR[:] = saved
        canonical._orjson_scan = saved_scan


@pytest.mark.parametrize(
    "floats",
    [
        [-0.0, 0.0, 1e-06, 1e-06, 56.0, 5e-324, 1e21, -1e-07],
        [0.0, -0.0, -1e-07, 1e21, 5e-324, 56.0, 1e-06],
    ],
)
def test_floats_the_fragments_remember_print_as_reference(floats: list[float]) -> None:
    # The fragment of each float is kept (0.0 and -0.0 share one: JCS writes both 0);
    # in either order, alone and among others, the bytes stay the reference's.
    for value in ([*floats], {"a": floats, "b": {"c": floats[::-1]}}, *floats):
        assert canonicalize(value) == rfc8785.dumps(value)
        assert canonicalize(value) == rfc8785.dumps(value)


def test_stdlib_path_is_used_without_orjson() -> None:
    code = (
        "import sys; sys.modules['orjson'] = None\n"
        "import rfc8785\n"
        "from kernelindex_sdk import canonical as c\n"
        "assert c.BACKEND == 'json', c.BACKEND\n"
        "v = {'b': [1, 0.5, 'x\\u2028'], 'a': None}\n"
        "assert c.canonicalize(v) == rfc8785.dumps(v)\n"
        "assert c._canonicalize_json(v) is not None\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_backend_is_reported() -> None:
    expected = "orjson" if canonical._orjson_dumps is not None else "json"
    assert expected == canonical.BACKEND


# ---------------------------------------------------------------------------
# Digests
# ---------------------------------------------------------------------------

FIXTURE: dict[str, Any] = {
    "apiVersion": "kernelindex.dev/v1alpha1",
    "kind": "ExecutionEnvironment",
    "metadata": {"name": "fixture-env", "title": "Fixture · host"},
    "spec": {
        "hardware": {
            "vendor": "nvidia",
            "product": "NVIDIA H100",
            "formFactor": "80GB HBM3",
            "architecture": "sm_90",
        },
        "software": {"cuda": "12.4", "driver": "550.54.15"},
        "notes": "tab\there, é, \U0001f680",
        "scale": 0.5,
        "count": 3,
        "flags": [True, False, None],
    },
}
FIXTURE_DIGEST = "sha256:ca42c52e3638e1653487a03f10d1f7ad96355600670d20c7030af48b73c4a6d8"


def _reference_digest(record: Any) -> str:
    ident = {"apiVersion": record["apiVersion"], "kind": record["kind"], "spec": record["spec"]}
    return "sha256:" + hashlib.sha256(rfc8785.dumps(ident)).hexdigest()


def test_fixture_digest() -> None:
    assert digest(FIXTURE) == FIXTURE_DIGEST == _reference_digest(FIXTURE)
    assert DIGEST_PREFIX == "sha256:"
    assert (
        DIGEST_PREFIX + hashlib.sha256(canonicalize(identity(FIXTURE))).hexdigest()
        == FIXTURE_DIGEST
    )


def test_identity_is_api_version_kind_and_spec() -> None:
    assert identity(FIXTURE) == {
        "apiVersion": FIXTURE["apiVersion"],
        "kind": FIXTURE["kind"],
        "spec": FIXTURE["spec"],
    }


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=st.dictionaries(json_keys, json_values, max_size=4), seed=st.integers())
def test_digest_ignores_key_order(spec: dict[str, Any], seed: int) -> None:
    record = {"spec": spec, "metadata": {"name": "x"}, "kind": "K", "apiVersion": "v"}
    shuffled = shuffle_keys(record, random.Random(seed))
    assert digest(shuffled) == digest(record) == _reference_digest(record)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    spec=json_values | odd_values | fast_values,
    api=json_scalars | odd_scalars | st.just("kernelindex.dev/v1alpha1"),
    kind=st.just("BenchmarkRun") | json_values | odd_values,
)
@example(spec={"a": 1}, api=1.0, kind="BenchmarkRun")  # JCS writes 1, orjson 1.0
@example(spec={"a": 0.5}, api="v", kind=float("nan"))  # the reference raises
@example(spec={"a": 1}, api=LoudStr("v"), kind="BenchmarkRun")
@example(spec={"a": 1}, api="v", kind=2**53)
@example(spec=[1.0], api="v", kind="BenchmarkRun")
def test_digest_is_the_reference_digest_or_raises_alike(spec: Any, api: Any, kind: Any) -> None:
    """``digest`` runs the orjson path written out (no ``canonicalize``): the same
    digest as the reference, or the reference's exception, for any identity (its
    walk skips an apiVersion and a kind that are exact strings: the examples are
    those that are not)."""
    assert canonical._orjson_dumps is None or canonical._orjson_scan is canonical._short_scan
    record = {"metadata": {"name": "x"}, "spec": spec, "kind": kind, "apiVersion": api}
    assert _outcome(digest, record) == _outcome(_reference_digest, record)


def test_digest_ignores_metadata() -> None:
    renamed = dict(FIXTURE, metadata={"name": "other", "title": "Other", "labels": {"a": "b"}})
    assert digest(renamed) == FIXTURE_DIGEST
    assert digest({k: v for k, v in FIXTURE.items() if k != "metadata"}) == FIXTURE_DIGEST


@pytest.mark.parametrize(
    "change",
    [
        lambda s: s.update(scale=0.5000000000000001),
        lambda s: s.update(count=4),
        lambda s: s.update(extra=None),
        lambda s: s["flags"].reverse(),
        lambda s: s["hardware"].update(architecture="sm_90a"),
        lambda s: s.update(notes=s["notes"] + " "),
    ],
)
def test_digest_changes_with_spec(change: Callable[[dict[str, Any]], None]) -> None:
    record = json.loads(json.dumps(FIXTURE))
    change(record["spec"])
    assert digest(record) != FIXTURE_DIGEST
    assert digest(record) == _reference_digest(record)


def test_digest_changes_with_kind_and_api_version() -> None:
    assert digest(dict(FIXTURE, kind="Workload")) != FIXTURE_DIGEST
    assert digest(dict(FIXTURE, apiVersion="kernelindex.dev/v1beta1")) != FIXTURE_DIGEST


def _seed_files() -> list[Path]:
    seeds = shared_data.find("seeds")
    return sorted(seeds.glob("*.json")) if seeds is not None else []


SEEDS = _seed_files()


@pytest.mark.skipif(not SEEDS, reason="shared/seeds not present (see tests/shared_data.py)")
@pytest.mark.parametrize("path", SEEDS, ids=lambda p: p.name)
def test_seed_digests(path: Path) -> None:
    bundle = json.loads(path.read_text(encoding="utf-8"))
    run_spec = bundle["run"]["spec"]
    assert digest(bundle["protocol"]) == run_spec["protocolDigest"]
    assert digest(bundle["environment"]) == run_spec["environmentDigest"]
    for member in ("run", "protocol", "environment"):
        ident = identity(bundle[member])
        for fast in (canonical._canonicalize_json, canonical._canonicalize_orjson):
            if fast is canonical._canonicalize_orjson and canonical._orjson_dumps is None:
                continue
            assert fast(ident) == rfc8785.dumps(ident)  # taken, not declined
        assert canonicalize(bundle) == rfc8785.dumps(bundle)


def test_the_digest_memo_gives_what_digest_gives() -> None:
    """Same digests, whatever the key order or repetition; bounded memory."""
    from kernelindex_sdk.canonical import DigestMemo

    memo = DigestMemo(size=3)
    records = [
        {"apiVersion": "a", "kind": "K", "spec": {"n": i % 5, "f": 0.5 * i, "s": "é"}}
        for i in range(20)
    ]
    shuffled = [{"spec": dict(reversed(r["spec"].items())), "kind": "K", "apiVersion": "a"}
                for r in records]  # fmt: skip
    for record in records + shuffled + records:
        assert memo.digest(record) == digest(record)
    assert len(memo._memo) <= 3


def test_the_digest_benchmark_checks_every_imported_liger_record(tmp_path: Path) -> None:
    # bench_digest --liger (the measurement) asserts each digest equals the
    # reference's before it times anything: run it on a small CSV end to end.
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, str(root / "benchmarks" / "bench_digest.py"), "--repeats", "5", "--json",
         "--liger", str(root / "tests" / "examples" / "liger" / "good.csv"),
         "--tree", f"same={root}"],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    # Runs, protocols, environments, workloads and implementations, every one digested.
    assert report["corpus"]["records"] > 6
    assert report["corpus"]["fast_path_taken"] == report["corpus"]["records"]
    assert {"rfc8785 reference", f"kernelindex digest ({canonical.BACKEND})"} <= set(
        report["records_per_s"]
    )
    reference = report["records_per_s"]["rfc8785 reference"]
    assert reference["cpu"]["ratio"] == reference["cpu"]["paired_ratio"] == 1.0
    # --tree: another checkout's digest (here this one again), checked and timed beside.
    assert "kernelindex digest, same" in report["records_per_s"]
    assert set(report["tree_over_here_cpu"]) == {"kernelindex digest, same"}


def test_the_digest_benchmark_interleaves_its_contenders() -> None:
    """Each repeat times every contender once, the order rotating, so a slow minute of
    a shared machine falls on all of them (the ratio is then the same run's)."""
    spec = importlib.util.spec_from_file_location(
        "bench_digest", Path(__file__).resolve().parents[1] / "benchmarks" / "bench_digest.py"
    )
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    calls: list[str] = []

    def contender(name: str) -> Any:
        def run(record: Any) -> str:
            calls.append(name)
            return ""

        return run

    corpus = [{}] * 2
    found = bench.rates({"a": contender("a"), "b": contender("b"), "c": contender("c")}, corpus, 4)
    timed = calls[3 * len(corpus) :]  # after each one's warm-up
    per_pass = [timed[i] for i in range(0, len(timed), len(corpus))]
    assert per_pass == ["a", "b", "c", "b", "c", "a", "c", "a", "b", "a", "b", "c"]
    assert {name: len(by["cpu"]) for name, by in found.items()} == {"a": 4, "b": 4, "c": 4}


# ---------------------------------------------------------------------------
# SHA-256: the interpreter's own for a process's first digests, then OpenSSL's
# ---------------------------------------------------------------------------


#: Inputs either side of the built-in's size limit (64 KiB): a drawn unit repeated to a
#: drawn length (drawing 60 KB of random bytes made this test ~40 times slower).
_NEAR_THE_LIMIT = st.builds(
    lambda unit, size: (unit * (size // len(unit) + 1))[:size],
    st.binary(min_size=1, max_size=64),
    st.integers(min_value=60_000, max_value=70_000),
)


def _digest_bytes(data: bytes) -> str:
    """``sha256:`` of bytes through the digest's own hash (``canonical._sha256``, read
    at each call: it replaces itself with hashlib's)."""
    return DIGEST_PREFIX + canonical._sha256(data).hexdigest()


@settings(max_examples=examples(200))
@given(st.binary(max_size=300) | _NEAR_THE_LIMIT)
def test_both_sha256s_give_hashlibs_digest(data: bytes) -> None:
    """The built-in (while the process has few digests left) and OpenSSL's (after, or
    for an input over the size limit) both make ``hashlib.sha256``'s digest."""
    expected = DIGEST_PREFIX + hashlib.sha256(data).hexdigest()
    for left in (1, 0):
        # Start canonical._sha256 afresh, with `left` built-in digests
        canonical._sha256 = canonical._first_sha256
        canonical._builtin_left = left
        assert _digest_bytes(data) == expected
        assert _digest_bytes(data) == expected  # the second is always hashlib's
        assert canonical._sha256 is hashlib.sha256


def test_the_built_in_sha256_gives_way_to_openssl(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(canonical, "_sha256", canonical._first_sha256)
    monkeypatch.setattr(canonical, "_builtin_left", 3)
    record = {"apiVersion": "v", "kind": "K", "spec": {"a": 1}}
    expected = DIGEST_PREFIX + hashlib.sha256(rfc8785.dumps(identity(record))).hexdigest()
    for _ in range(3):
        assert digest(record) == expected
        assert canonical._sha256 is canonical._first_sha256
    assert digest(record) == expected
    assert canonical._sha256 is hashlib.sha256
    monkeypatch.setattr(canonical, "_sha256", canonical._first_sha256)
    monkeypatch.setattr(canonical, "_builtin_left", 3)
    big = b"x" * (canonical._BUILTIN_MAX_BYTES + 1)
    assert _digest_bytes(big) == DIGEST_PREFIX + hashlib.sha256(big).hexdigest()
    assert canonical._sha256 is hashlib.sha256


def test_validating_one_file_loads_no_openssl_hash() -> None:
    one = sorted((Path(__file__).parent / "examples" / "valid").glob("*.json"))[0]
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: print(sorted(m for m in ('hashlib', '_hashlib')"
        " if m in sys.modules)))\n"
        "from kernelindex_sdk.cli.main import main\n"
        "main(sys.argv[1:])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, "validate", str(one)],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    assert done.stdout.endswith("[]\n"), done.stdout


@pytest.mark.parametrize("odd", ORJSON_NATIVE_ONLY, ids=lambda odd: type(odd).__name__)
def test_values_orjson_writes_but_the_reference_refuses_are_refused_at_any_depth(
    odd: Any,
) -> None:
    """Each of them, as the value itself and as the only value of a spec nested one to
    six deep in objects, arrays or both: every fast path declines it (or gives the
    reference's bytes), and ``canonicalize`` and ``digest`` raise as the reference does.
    The walk is written out by levels, so each depth is a place of its own."""
    assert canonical._orjson_dumps is None or canonical._orjson_scan is canonical._short_scan
    for wrap in (lambda v: {"k": v}, lambda v: [v], lambda v: {"k": [v]}):
        nested = odd
        for _ in range(6):
            nested = wrap(nested)
            for fast in FAST_PATHS:
                out = fast.values[0](nested)
                assert out is None or out == rfc8785.dumps(nested)
            assert _outcome(canonicalize, nested) == _outcome(rfc8785.dumps, nested)
            record = {"apiVersion": "v", "kind": "BenchmarkRun", "spec": nested}
            assert _outcome(digest, record) == _outcome(_reference_digest, record)


# ---------------------------------------------------------------------------
# The native short scan (_canonical_scan.c) and its twin, _scan_values
# ---------------------------------------------------------------------------

#: The native scan where it is built, else None: the module's own function, not what
#: canonical chose (a build its import probe refused would be left out, and its laws
#: skipped, rather than failing here).
NATIVE_SCAN: Callable[[Any, list[float]], bool] | None
try:
    from kernelindex_sdk._canonical_scan import scan_values as NATIVE_SCAN
except ImportError:
    NATIVE_SCAN = None
needs_native = pytest.mark.skipif(NATIVE_SCAN is None, reason="the native scan is not built")


def _scan_outcome(scan: Callable[[Any, list[float]], bool], value: Any) -> tuple[Any, ...]:
    """A scan's verdict and the floats it gathered (by identity: NaN is not equal to
    itself), or the exception it raised."""
    floats: list[float] = []
    try:
        verdict = scan(value, floats)
    except RecursionError:
        return ("raised", RecursionError)
    return ("ok", verdict, [id(x) for x in floats])


@contextlib.contextmanager
def _short_scan(scan: Callable[[Any, list[float]], bool]) -> Iterator[None]:
    """The process's short scan replaced by ``scan`` (for ``digest`` and the orjson
    path alike), for the block."""
    saved_short, saved_walk = canonical._short_scan, canonical._orjson_scan
    canonical._short_scan = scan
    if saved_walk is saved_short:
        canonical._orjson_scan = scan
    try:
        yield
    finally:
        canonical._short_scan, canonical._orjson_scan = saved_short, saved_walk


#: Each short scan present: the Python one always, the native one where it is built.
SHORT_SCANS = [pytest.param(canonical._scan_values, id="python-scan")]
if NATIVE_SCAN is not None:
    SHORT_SCANS.append(pytest.param(NATIVE_SCAN, id="native-scan"))

#: Containers to walk: every kind of value drawn above, in an object or an array.
scanned_values = st.one_of(json_values, odd_values, fast_values).flatmap(
    lambda v: st.sampled_from([[v], {"k": v}, {"k": [v], "m": {"n": v}}])
)


@needs_native
@settings(max_examples=examples(500), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scanned_values)
@example([[1.5, 2.0], {"a": [1e-5, 1e16, float("nan")]}, HalfFloat(0.5)])
@example({"k": [LoudStr("s"), (1,), Level.HIGH, True, None, 2**64]})
@example({"k": {"a": {"b": {"c": {"d": [float("inf"), -0.0, 5e-324, 0.1]}}}}})
def test_the_native_scan_answers_as_the_python_scan(value: Any) -> None:
    """The law of the native scan: on every value drawn (JSON, odd types, subclasses,
    floats on both sides of the rule, at every depth the encoders write), the same
    verdict and the same floats gathered, in the same order."""
    assert NATIVE_SCAN is not None
    assert _scan_outcome(NATIVE_SCAN, value) == _scan_outcome(canonical._scan_values, value)


@needs_native
@pytest.mark.parametrize(
    # Each depth the walk inlines and the edges of orjson's limit in the quick run.
    "depth",
    variants([1, 2, 3, 4, 5, 64, 253, 254, 255, 256, 600], quick={0, 3, 4, 7, 8, 10}),
)
@pytest.mark.parametrize("leaf", [0.5, 1.0, "s", Plain.A], ids=["repr", "integral", "str", "enum"])
def test_the_native_scan_agrees_at_every_depth_orjson_writes_and_beyond(
    depth: int, leaf: Any
) -> None:
    """Nested objects and arrays: the same answer as the Python scan at each depth up to
    and past orjson's limit (255), and the same digest as the reference either way."""
    assert NATIVE_SCAN is not None
    for wrap in (lambda v: {"k": v}, lambda v: [v]):
        nested = leaf
        for _ in range(depth):
            nested = wrap(nested)
        assert _scan_outcome(NATIVE_SCAN, nested) == _scan_outcome(canonical._scan_values, nested)
        record = {"apiVersion": "v", "kind": "K", "spec": {"deep": nested}}
        with _short_scan(NATIVE_SCAN):
            assert _outcome(digest, record) == _outcome(_reference_digest, record)


@needs_native
def test_the_native_scan_stops_at_cycles_and_deep_nesting_as_its_twin_ends() -> None:
    """A cycle, or nesting far past the recursion limit: the native scan raises
    RecursionError, and ``digest`` and ``canonicalize`` then end as the reference does
    (the Python scan's outcome too)."""
    assert NATIVE_SCAN is not None
    cyclic: dict[str, Any] = {"a": [1]}
    cyclic["a"].append(cyclic)
    deep: Any = 0.5
    for _ in range(sys.getrecursionlimit() * 3):
        deep = [deep]
    for value in (cyclic, deep):
        assert _scan_outcome(NATIVE_SCAN, value) == ("raised", RecursionError)
        record = {"apiVersion": "v", "kind": "K", "spec": {"x": value}}
        outcomes = set()
        for scan in (NATIVE_SCAN, canonical._scan_values):
            with _short_scan(scan):
                outcomes.add((_outcome(digest, record), _outcome(canonicalize, value)))
        assert outcomes == {(_outcome(_reference_digest, record), _outcome(rfc8785.dumps, value))}


@pytest.mark.parametrize("scan", SHORT_SCANS)
@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=json_values | odd_values | fast_values)
def test_digest_with_each_short_scan_is_the_reference_digest(
    scan: Callable[[Any, list[float]], bool], spec: Any
) -> None:
    """``digest`` walking with the Python scan and with the native one: the reference's
    digest, or its exception, on every drawn spec."""
    record = {"apiVersion": "kernelindex.dev/v1alpha1", "kind": "BenchmarkRun", "spec": spec}
    with _short_scan(scan):
        assert _outcome(digest, record) == _outcome(_reference_digest, record)


def _scan_in_a_process(env: dict[str, str]) -> str:
    code = "from kernelindex_sdk import canonical; print(canonical.SCAN)"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_kernelindex_native_0_turns_the_native_scan_off() -> None:
    """``KERNELINDEX_NATIVE=0``: the Python scan, whether or not the native one is built;
    without it, the native one wherever it is built."""
    env = {k: v for k, v in os.environ.items() if k != NATIVE_VARIABLE}
    assert _scan_in_a_process({**env, NATIVE_VARIABLE: "0"}) == "python"
    native_built = importlib.util.find_spec("kernelindex_sdk._canonical_scan") is not None
    assert _scan_in_a_process(env) == ("native" if native_built else "python")


def test_a_native_scan_of_another_version_is_left_unused(monkeypatch: pytest.MonkeyPatch) -> None:
    """An old build (an editable install compiled before the C source changed) names
    another SCAN_VERSION: the Python scan runs instead."""
    monkeypatch.setattr(canonical, "_NATIVE_SCAN_VERSION", -1)
    assert canonical._native_short_scan() is None


@pytest.mark.skipif(
    not os.environ.get("CI") or sys.platform == "win32",
    reason="CI's machine has a C compiler; elsewhere the Python scan is a fallback",
)
def test_ci_builds_and_uses_the_native_scan() -> None:
    """On CI (a C compiler, the README's install command), the build hook compiled the
    native scan and this process walks with it: a build that silently fell back would
    leave digests several times slower, and this test red."""
    if not native_allowed():
        pytest.skip("KERNELINDEX_NATIVE=0 turns it off")
    assert canonical.SCAN == "native", "hatch_build.py did not build _canonical_scan.c"


cli_floats = st.sampled_from(EDGE_FLOATS) | st.floats(allow_nan=False, allow_infinity=False)
cli_specs = st.recursive(
    st.none() | st.booleans() | json_ints | cli_floats | json_text,
    _containers,
    max_leaves=25,
)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs=st.lists(cli_specs, min_size=1, max_size=25))
def test_kernelindex_digest_is_the_same_with_either_scan(tmp_path_factory: Any, specs: Any) -> None:
    """Through the CLI: ``kernelindex digest`` of drawn records, one per line, prints
    the same lines with the native scan and with ``KERNELINDEX_NATIVE=0``, and each
    digest is the reference's."""
    folder = tmp_path_factory.mktemp("scan")
    records = [
        {"apiVersion": "kernelindex.dev/v1alpha1", "kind": "K", "metadata": {"name": f"r{i}"},
         "spec": spec}
        for i, spec in enumerate(specs)
    ]  # fmt: skip
    lines = folder / "records.jsonl"
    lines.write_text("".join(json.dumps(r, allow_nan=False) + "\n" for r in records))
    env = {k: v for k, v in os.environ.items() if k != NATIVE_VARIABLE}
    printed = []
    for switch in ({}, {NATIVE_VARIABLE: "0"}):
        done = subprocess.run(
            [sys.executable, "-m", "kernelindex_sdk.cli.main", "digest", str(lines)],
            env={**env, **switch}, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        printed.append(done.stdout)
    assert printed[0] == printed[1]
    read_back = [json.loads(json.dumps(r)) for r in records]
    assert [line.split()[0] for line in printed[0].splitlines()] == [
        _reference_digest(r) for r in read_back
    ]
