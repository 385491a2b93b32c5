"""RFC 8785 (JCS) canonical form and content digests.

``digest(record) = "sha256:" + hex(sha256(JCS({apiVersion, kind, spec})))``: metadata
is left out, so renaming or retitling a record never changes its identity.

Speed without a second definition of JCS
----------------------------------------
The reference implementation (the ``rfc8785`` package) is the definition of the
bytes. :func:`canonicalize` first runs one cheap pass over the value (:func:`_scan`)
that decides whether a C encoder (``orjson`` when installed, else the stdlib
``json`` C encoder with ``sort_keys=True, separators=(",", ":"),
ensure_ascii=False``) provably writes the same bytes; if not, or if the encoder
refuses the value, it calls ``rfc8785.dumps`` — so every value outside the fast
path gets the reference's bytes *or the reference's exception*.

The fast path is taken only when every part of the value is one of:

* ``dict`` / ``list`` (exact types: subclasses may override ``items``/``__iter__``,
  which the C encoders and the reference consult differently) with ``str`` keys
  (exact type: a subclass may override ``__lt__``/``encode``, used for sorting);
* ``str`` (exact). Escaping is identical: both write ``\\" \\\\ \\b \\t \\n \\f \\r``
  short forms, every other char below U+0020 as ``\\u00xx`` (lowercase hex), and
  everything else, U+007F, U+2028/9 and non-BMP included, as raw UTF-8 (checked for
  every code point in the tests). A lone surrogate makes ``str.encode`` (stdlib) or
  orjson fail, and the reference then raises its own error;
* ``bool``, ``None``;
* ``int`` (exact) with ``|n| <= 2**53 - 1``: decimal digits in all three; larger
  ints make the reference raise, so they go to it;
* ``float`` (exact) that is finite, not integral and ``1e-4 <= |x| < 1e16``.
  For those, ``repr(x)`` has no exponent and does not end in ``.0``, and the
  reference (ECMAScript Number::toString) writes exactly ``repr(x)``: the
  reference splits ``str(x)`` at ``e`` and ``.``, and only rewrites an exponent or a
  ``.0`` fraction. ``repr`` uses an exponent iff its shortest digits put the decimal
  point at ``decpt <= -4`` or ``decpt > 16``, i.e. iff ``|x| < 1e-4`` (the double
  nearest 10**-4 prints as ``0.0001``; every double below it prints below 10**-4)
  or ``|x| >= 1e16`` (> 2**53: integral). ``x.is_integer()`` catches ``0.0``,
  ``-0.0`` (JCS ``0``) and ``100.0`` (JCS ``100``); NaN and infinities fail the
  range test. The stdlib encoder writes ``float.__repr__(x)``; orjson's output
  for the value's floats is compared with ``float.__repr__`` at run time.

With orjson, two of these checks are left to orjson, which raises on them (and is
verified to at import, else the full scan is used): keys that are not exact ``str``,
and ints beyond ±(2**53 - 1) (``OPT_STRICT_INTEGER``). orjson also raises on lone
surrogates (verified at import, else orjson is not used). That short scan
(:func:`_scan_values`) has a twin in C, ``_canonical_scan.c``, built with the wheel
where a C compiler is: in Python the walk is the largest part of a digest's time
(figures: ``benchmarks/README.md``). It is used only where it gives the Python scan's
answers on a probe at import (:func:`_native_short_scan`; ``KERNELINDEX_NATIVE=0``
turns it off), and the tests hold the two to each other on drawn values. :data:`SCAN`
says which one runs.

Key order: JCS sorts by UTF-16 code units, both encoders by code points. The two
orders agree unless, at the first differing position of two keys, one has a
non-BMP char and the other a char in U+D800–U+FFFF. Such a char shows in UTF-8 as
a lead byte 0xEE–0xF4; only when the output contains one are the keys of every
object compared under both orders (:func:`_key_orders_agree`), and if any differ
the reference is used.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol

import rfc8785

from kernelindex_sdk.base.native import native_allowed

DIGEST_PREFIX = "sha256:"

#: Digests made with the interpreter's own SHA-256 before OpenSSL's is loaded, and the
#: largest input it takes. ``import hashlib`` loads OpenSSL's ``_hashlib``, which costs
#: more than the few digests of ``kernelindex validate one.json``; the built-in is
#: slower per byte, so a process that digests much switches early.
_BUILTIN_DIGESTS: Final = 64
_BUILTIN_MAX_BYTES: Final = 1 << 16
_builtin_left = _BUILTIN_DIGESTS


class _Hash(Protocol):
    """What a digest here asks of a hash object (``hashlib``'s or ``_sha256``'s)."""

    def hexdigest(self) -> str: ...


def _first_sha256(data: bytes) -> _Hash:
    """SHA-256 of ``data`` (the same bytes either way): the built-in ``_sha256`` for a
    process's first few small inputs, then — this function rebinds :data:`_sha256` —
    :func:`hashlib.sha256`."""
    global _sha256, _builtin_left
    _builtin_left -= 1
    if _builtin_left >= 0 and len(data) <= _BUILTIN_MAX_BYTES:
        try:  # the module is _sha256 up to Python 3.11, _sha2 from 3.12
            from _sha256 import sha256  # type: ignore[import-not-found,unused-ignore]
        except ImportError:  # pragma: no cover - depends on the interpreter
            try:
                from _sha2 import sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
            except ImportError:  # a build without the built-in hashes
                sha256 = None
        if sha256 is not None:
            built_in: _Hash = sha256(data)
            return built_in
    import hashlib

    _sha256 = hashlib.sha256
    return _sha256(data)


#: ``hashlib.sha256`` once :func:`_first_sha256` has had its few digests.
_sha256: Callable[[bytes], _Hash] = _first_sha256

#: Largest integer magnitude JCS (an IEEE-754 double) represents exactly.
_MAX_SAFE_INT: Final = 2**53 - 1

#: UTF-8 lead bytes of U+E000..U+FFFF (0xEE, 0xEF) and of non-BMP chars (0xF0..0xF4).
#: (U+D800..U+DFFF would be 0xED 0xA0.., but lone surrogates never reach the output.)
_HIGH_LEAD: Final = re.compile(rb"[\xee-\xf4]")


def _reject(obj: Any) -> Any:
    raise TypeError(f"not JSON: {type(obj).__name__}")


# ---------------------------------------------------------------------------
# Eligibility scan
# ---------------------------------------------------------------------------


def _scan_container(obj: Any, floats: list[float]) -> bool:
    """True if ``obj`` (an exact dict or list) holds only fast-path values.

    Appends every float it meets to ``floats`` (checked afterwards, in one go).
    """
    if type(obj) is dict:
        for key in obj:
            if type(key) is not str:
                return False
        obj = obj.values()
    for val in obj:
        t = type(val)
        if t is str:
            continue
        if t is dict or t is list:
            if not _scan_container(val, floats):
                return False
        elif t is int:
            if not -9007199254740991 <= val <= 9007199254740991:
                return False
        elif t is float:
            floats.append(val)
        elif t is not bool and val is not None:
            return False
    return True


def _scan_values(
    obj: Any,
    floats: list[float],
    _str: type = str,
    _int: type = int,
    _dict: type = dict,
    _list: type = list,
    _float: type = float,
    _bool: type = bool,
    _type: type = type,
    _abs: Callable[[float], float] = abs,
) -> bool:
    """:func:`_scan_container` less two checks that orjson makes itself (with
    ``OPT_STRICT_INTEGER``, raising): that keys are exact ``str`` and that ints are
    within ±(2**53 - 1); and appending only the floats JCS does not write as ``repr``
    (integral, ``|x| < 1e-4``, ``|x| >= 1e16``, NaN, infinities), the floats in range
    judged where they are met rather than gathered and judged again.

    Used only if orjson refuses all of ``_KEYS_AND_INTS``, and only once the broad
    probe (:func:`_orjson_floats_are_repr`) has found that this orjson writes the
    floats in that range as ``repr`` does (until then :func:`_scan_container`
    gathers every float, and the first one runs the probe).

    The hot loop of every digest: names bound as defaults (no global lookups), the
    commonest types, ``str`` and ``int``, tested first.
    """
    if _type(obj) is _dict:
        obj = obj.values()
    for val in obj:
        t = _type(val)
        if t is _str or t is _int:
            continue
        if t is _dict or t is _list:
            # A child's and a grandchild's values are walked here, not in calls of
            # their own: records nest three deep (a run's spec, its timing, the
            # summary), so a call is made only below that.
            for item in val.values() if t is _dict else val:
                u = _type(item)
                if u is _str or u is _int:
                    continue
                if u is _dict or u is _list:
                    for leaf in item.values() if u is _dict else item:
                        w = _type(leaf)
                        if w is _str or w is _int:
                            continue
                        if w is _dict or w is _list:
                            if not _scan_values(leaf, floats):
                                return False
                        elif w is _float:
                            if leaf.is_integer() or not 1e-4 <= _abs(leaf) < 1e16:
                                floats.append(leaf)
                        elif w is not _bool and leaf is not None:
                            return False
                elif u is _float:
                    if item.is_integer() or not 1e-4 <= _abs(item) < 1e16:
                        floats.append(item)
                elif u is not _bool and item is not None:
                    return False
        elif t is _float:
            if val.is_integer() or not 1e-4 <= _abs(val) < 1e16:
                floats.append(val)
        elif t is not _bool and val is not None:
            return False
    return True


def _scan(
    value: Any, scan_container: Callable[[Any, list[float]], bool] = _scan_container
) -> list[float] | None:
    """The floats in ``value`` if its structure, keys, ints and types allow the
    fast path (floats not yet judged), else ``None``."""
    t = type(value)
    if t is dict or t is list:
        floats: list[float] = []
        try:
            ok = scan_container(value, floats)
        except RecursionError:  # too deep (or cyclic): the reference decides
            return None
        return floats if ok else None
    if t is str or t is bool or value is None:
        return []
    if t is int:
        return [] if -_MAX_SAFE_INT <= value <= _MAX_SAFE_INT else None
    if t is float:
        return [value]
    return None


def jcs_number(value: float) -> str:
    """The text RFC 8785 writes for a finite double: ECMAScript's Number::toString.

    Python's ``repr`` gives the same shortest round-trip digits; only where the
    decimal point goes, and when an exponent is used, differ. With ``k`` digits and
    the point after ``n`` of them: ``k <= n <= 21`` → digits and zeros; ``0 < n <=
    21`` → a point inside; ``-6 < n <= 0`` → ``0.`` and zeros; else an exponent
    (``1e+30``, ``5e-324``, ``1.5e-7``). Zero (either sign) is ``0``.
    """
    if value == 0.0:
        return "0"
    text = repr(value)
    sign = ""
    if text[0] == "-":
        sign, text = "-", text[1:]
    mantissa, _, exponent = text.partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    point = len(whole) + (int(exponent) if exponent else 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k, n = len(digits), point
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    power = n - 1
    mark = "+" if power > 0 else "-"
    head = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{sign}{head}e{mark}{abs(power)}"


def _floats_print_as_repr(floats: list[float]) -> bool:
    """True if JCS writes each float exactly as ``float.__repr__`` does."""
    return all(not x.is_integer() and 1e-4 <= abs(x) < 1e16 for x in floats)


def _utf16_units(key: str) -> bytes:
    return key.encode("utf-16-be")


def _key_orders_agree(value: Any) -> bool:
    """True if in every object of ``value`` (already scanned) sorting the keys by
    code point gives the same order as sorting them by UTF-16 code units."""
    stack = [value]
    while stack:
        obj = stack.pop()
        if type(obj) is dict:
            keys = list(obj)
            if sorted(keys) != sorted(keys, key=_utf16_units):
                return False
            stack.extend(obj.values())
        elif type(obj) is list:
            stack.extend(obj)
    return True


# ---------------------------------------------------------------------------
# Encoders
# ---------------------------------------------------------------------------

_json_encoder = json.JSONEncoder(
    ensure_ascii=False,
    check_circular=False,  # the scan refuses cycles (RecursionError)
    allow_nan=False,
    sort_keys=True,
    separators=(",", ":"),
    default=_reject,
)


def _c_json_encode() -> Callable[[Any], str] | None:
    """``_json_encoder.encode`` with its C encoder built once instead of per call
    (``json.encoder.c_make_encoder`` is private: used only if it passes the probe)."""
    from json import encoder as json_encoder

    make = getattr(json_encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - CPython always has _json
        return None
    try:
        c_encode = make(
            None,  # markers: no circular check
            _reject,  # default
            json_encoder.encode_basestring,  # ensure_ascii=False (its C fast path)
            None,  # indent
            ":",  # key separator
            ",",  # item separator
            True,  # sort_keys
            False,  # skipkeys
            False,  # allow_nan
        )
    except Exception:  # pragma: no cover - a Python whose private API changed
        return None

    def encode(value: Any) -> str:
        return "".join(c_encode(value, 0))

    return encode


_json_encode: Callable[[Any], str] = _json_encoder.encode


def _canonicalize_json(value: Any) -> bytes | None:
    """The JCS bytes via the stdlib C encoder, or ``None`` if not provably equal."""
    floats = _scan(value)
    if floats is None or (floats and not _floats_print_as_repr(floats)):
        return None
    try:
        text = _json_encode(value)
        out = text.encode()
    except (UnicodeEncodeError, RecursionError):  # lone surrogate; too deep: reference decides
        return None
    if not text.isascii() and _HIGH_LEAD.search(out) and not _key_orders_agree(value):
        return None
    return out


_orjson_dumps: Callable[..., bytes] | None
try:
    import orjson

    _orjson_dumps = orjson.dumps
    _ORJSON_OPTIONS: Final = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER
except ImportError:  # pragma: no cover - depends on the environment
    _orjson_dumps = None


def _canonicalize_orjson(value: Any) -> bytes | None:
    """The JCS bytes via orjson, or ``None`` if not provably equal (or no orjson).

    The hot path of every digest: :func:`_scan` is inlined for containers, and the
    float rule is checked in one loop — over every float until the broad probe has
    run, then (the short scan, :data:`_short_scan`) over only those outside the rule.
    """
    if _orjson_dumps is None:
        return None
    floats: list[float] = []
    t = type(value)
    if t is dict or t is list:
        try:
            if not _orjson_scan(value, floats):
                return None
        except RecursionError:  # too deep (or cyclic): the reference decides
            return None
    elif t is float:
        floats.append(value)
    elif not (t is str or t is bool or value is None or t is int):
        return None
    if floats:
        for x in floats:  # _floats_print_as_repr, unrolled (NaN fails the range test)
            if x.is_integer() or not 1e-4 <= abs(x) < 1e16:
                return _canonicalize_with_fragments(value, floats)
        # orjson formats floats itself: use it only where it writes what repr writes —
        # checked once per process on a broad probe (ryu and repr both write the
        # shortest round-trip digits), else for every value.
        if (
            not _orjson_floats_are_repr()
            and _orjson_dumps(floats)
            != ("[" + ",".join(map(float.__repr__, floats)) + "]").encode()
        ):
            return _canonicalize_with_fragments(value, floats)
    try:
        out = _orjson_dumps(value, option=_ORJSON_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError: non-str key, big int, lone surrogate, depth
        return None
    if not out.isascii() and _HIGH_LEAD.search(out) and not _key_orders_agree(value):
        return None
    return out


_Fragment: Any = getattr(orjson, "Fragment", None) if _orjson_dumps is not None else None

#: Set once :func:`_orjson_floats_are_repr` has run: whether this orjson writes every
#: probed fast-path float exactly as ``float.__repr__`` does.
_FLOATS_ARE_REPR: list[bool] = []


def _orjson_floats_are_repr() -> bool:
    """Whether orjson writes floats as ``repr`` does, on the fast path's range
    (non-integral, ``1e-4 <= |x| < 1e16``): 1,024 doubles spread evenly (by the golden
    ratio) over every decade of the range, its edges and the probe's floats, compared
    in one call, once per process, at the first such float (not at import: a command
    that meets no float never pays for it). If any differs, every value's floats are
    compared instead."""
    global _orjson_scan
    if not _FLOATS_ARE_REPR:
        spread = (
            (-1.0 if i & 1 else 1.0) * 10.0 ** (-4.0 + 20.0 * ((i * 0.6180339887498949) % 1.0))
            for i in range(1, 1025)
        )
        probe = [1e-4, -1e-4, 0.00010000000000000002, 9999999999999998.0 + 0.5, 0.1, 0.2, 0.3]
        probe += [x for x in _PROBE["f"] if isinstance(x, float)]
        probe += [x for x in spread if not x.is_integer() and 1e-4 <= abs(x) < 1e16]
        ok = (
            _orjson_dumps is not None
            and _orjson_dumps(probe) == ("[" + ",".join(map(float.__repr__, probe)) + "]").encode()
        )
        _FLOATS_ARE_REPR.append(ok)
        if ok and _orjson_scan is _scan_container and _ORJSON_REFUSES_KEYS_AND_INTS:
            _orjson_scan = _short_scan
    return _FLOATS_ARE_REPR[0]


def _canonicalize_with_fragments(value: Any, floats: list[float]) -> bytes | None:
    """JCS bytes of a value whose floats orjson would not write as JCS does (integral
    ones such as ``56.0``, ``1e-27``, ``1e+30``): each float becomes an
    ``orjson.Fragment`` of :func:`jcs_number`'s text, written verbatim, so only the
    floats take Python time instead of the whole value going to the reference.
    None (the reference decides) without ``Fragment`` or for a non-finite float."""
    if _Fragment is None or _orjson_dumps is None:
        return None
    for x in floats:
        if x - x != 0.0:  # NaN, infinities: the reference raises its own error
            return None
    try:
        out = _orjson_dumps(_with_fragments(value), option=_ORJSON_OPTIONS)
    except (TypeError, RecursionError):
        return None
    if not out.isascii() and _HIGH_LEAD.search(out) and not _key_orders_agree(value):
        return None
    return out


#: Fragments of the floats :func:`_with_fragments` has met (imported records repeat
#: a few, such as an ``eps`` of 1e-06), at most 4,096. Keyed by the float: equal
#: floats are the same double but for 0.0 and -0.0, which JCS both writes as ``0``.
_FRAGMENTS: dict[float, Any] = {}


def _with_fragments(value: Any) -> Any:
    """A copy of ``value`` (already scanned: exact JSON types) with every float as a
    Fragment of its JCS text."""
    kind = type(value)
    if kind is float:
        fragment = _FRAGMENTS.get(value)
        if fragment is None:
            if len(_FRAGMENTS) >= 4096:
                _FRAGMENTS.clear()
            fragment = _FRAGMENTS[value] = _Fragment(jcs_number(value).encode())
        return fragment
    if kind is dict:
        return {k: _with_fragments(v) for k, v in value.items()}
    if kind is list:
        return [_with_fragments(v) for v in value]
    return value


class _StrKey(str):
    __slots__ = ()


def _orjson_refuses(values: list[Any]) -> bool:
    """True if orjson (with our options) raises on every one of ``values``."""
    if _orjson_dumps is None:  # pragma: no cover
        return False
    for value in values:
        try:
            _orjson_dumps(value, option=_ORJSON_OPTIONS)
        except TypeError:  # orjson.JSONEncodeError
            continue
        return False  # pragma: no cover - an orjson that changed
    return True


#: What the orjson path relies on orjson to refuse: lone surrogates (the reference
#: raises on them; no scan looks inside strings)...
_SURROGATES: Final[list[Any]] = ["\ud800", ["a\udfff"], {"\ud83d": 0}, {"k": "x\udc00y"}]
#: ...and, for the short scan (:func:`_scan_values`), keys that are not exact ``str``
#: (a subclass may sort differently) and ints the reference refuses.
_KEYS_AND_INTS: Final[list[Any]] = [
    {_StrKey("k"): 0},
    {1: 0},
    {None: 0},
    [2**53],
    [-(2**53)],
    {"k": 2**64},
]


_orjson_scan: Callable[[Any, list[float]], bool] = _scan_container
#: Whether orjson refuses every one of ``_KEYS_AND_INTS``, so that the orjson path
#: may take the short scan (set below, at import).
_ORJSON_REFUSES_KEYS_AND_INTS = False

#: The semantics of the native short scan this module expects (``SCAN_VERSION`` of
#: ``_canonical_scan.c``): a build of another version is left unused.
_NATIVE_SCAN_VERSION: Final = 1


def _native_short_scan() -> Callable[[Any, list[float]], bool] | None:
    """``_canonical_scan.scan_values``, the short scan in C, where it was built (the
    wheel's build compiles it where a C compiler is; without one, or with
    ``KERNELINDEX_NATIVE=0`` in the environment, :func:`_scan_values` runs) and gives
    :func:`_scan_values`' answers on :data:`_SCAN_PROBES`."""
    if not native_allowed():
        return None
    try:
        from kernelindex_sdk._canonical_scan import SCAN_VERSION, scan_values
    except ImportError:
        return None
    if SCAN_VERSION != _NATIVE_SCAN_VERSION:
        return None
    for value in _SCAN_PROBES:
        native: list[float] = []
        python: list[float] = []
        if scan_values(value, native) != _scan_values(value, python) or native != python:
            return None  # pragma: no cover - a build that is not this module's twin
    return scan_values


def _never(value: Any) -> bytes | None:  # pragma: no cover - only if both probes fail
    return None


# A fast-path value touching every rule above. An encoder that does not give the
# reference's bytes for it is not used at all: a guard against a changed orjson or
# a changed private json API (the tests check the rules themselves exhaustively).
_PROBE: Final[Any] = {
    "z": [None, True, False, 0, -1, 9007199254740991, -9007199254740991, 0.5, -2.25],
    "a": {"\U0001f600": 1, "\ud7ff": {"\ue000": 2, "\uffff": 0}, "é": 3, "e": "", "": {}},
    "s": "".join(map(chr, range(0x80))) + '\u2028\u2029\ufeff\U0010ffff é\\"/',
    "f": [70.51395416259766, 0.1, 1e-4, -123456789012345.67, 4503599627370495.5],
    "10": [[], {}, [{"B": 1, "a": 2, "A": 3, "b": 4}]],
    "1": "\u00b7",
}


#: What the native scan must answer as :func:`_scan_values` does before it is used:
#: the probe, each kind of value it refuses, and floats on each side of the rule.
_SCAN_PROBES: Final[list[Any]] = [
    _PROBE,
    [1.5, 2.0, 1e-5, 1e16, -0.0, 5e-324, 1e300, 0.1, float("nan"), float("-inf")],
    {"k": [{"a": _StrKey("s")}]},
    [(1, 2)],
    {"k": {"a": [True, None, 2**64, 1.0]}},
    [b"x"],
]


def _passes_probe(fast: Callable[[Any], bytes | None]) -> bool:
    try:
        return fast(_PROBE) == rfc8785.dumps(_PROBE)
    except Exception:  # pragma: no cover
        return False


_c_encode = _c_json_encode()
if _c_encode is not None:
    _json_encode = _c_encode
    if not _passes_probe(_canonicalize_json):  # pragma: no cover
        _json_encode = _json_encoder.encode
if _orjson_dumps is not None:
    _ORJSON_REFUSES_KEYS_AND_INTS = _orjson_refuses(_KEYS_AND_INTS)
    # The probe's own floats are compared one by one here (as when orjson's floats are
    # not known to be repr's), so that import does not run the broad float probe.
    _FLOATS_ARE_REPR.append(False)
    if not (_orjson_refuses(_SURROGATES) and _passes_probe(_canonicalize_orjson)):
        _orjson_dumps = None  # pragma: no cover
    _FLOATS_ARE_REPR.clear()

#: The short scan the orjson path takes once the broad float probe has passed: the
#: native one where it is built and agrees (:func:`_native_short_scan`), else
#: :func:`_scan_values`. Which one: :data:`SCAN`.
_short_scan: Callable[[Any, list[float]], bool] = _native_short_scan() or _scan_values

_fast: Callable[[Any], bytes | None]
if _orjson_dumps is not None:
    _fast = _canonicalize_orjson
elif _passes_probe(_canonicalize_json):
    _fast = _canonicalize_json
else:  # pragma: no cover
    _fast = _never

#: Which encoder the fast path uses: ``"orjson"``, ``"json"`` (stdlib) or ``"none"``.
BACKEND: Final[str] = {_canonicalize_orjson: "orjson", _canonicalize_json: "json"}.get(
    _fast, "none"
)
#: Which short scan the orjson path walks values with: ``"native"`` (C) or ``"python"``.
SCAN: Final[str] = "python" if _short_scan is _scan_values else "native"


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------


def canonicalize(value: Any) -> bytes:
    """The RFC 8785 bytes of any JSON value (exactly ``rfc8785.dumps(value)``,
    including the exceptions it raises for values JCS cannot represent)."""
    out = _fast(value)
    if out is None:
        return rfc8785.dumps(value)
    return out


def identity(record: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a record its digest covers: ``apiVersion``, ``kind`` and ``spec``."""
    return {"apiVersion": record["apiVersion"], "kind": record["kind"], "spec": record["spec"]}


def digest(record: Mapping[str, Any]) -> str:
    """``sha256:<hex>`` of the canonical form of the record's identity.

    :func:`identity` and :func:`canonicalize` written out, and, once the short scan
    is in use (orjson, and its floats found to be ``repr``'s), the orjson path too:
    this is the call every validation of a referenced record and every import makes,
    and three calls that repeat each other's checks would be a visible part of it.
    """
    api_version, kind, spec = record["apiVersion"], record["kind"], record["spec"]
    value = {"apiVersion": api_version, "kind": kind, "spec": spec}
    if _orjson_scan is _short_scan:
        # _canonicalize_orjson with the short scan: every float it gathers is outside
        # the rule, so any float at all takes the fragments' path. (A record's
        # apiVersion and kind are strings: then only its spec needs the walk.)
        floats: list[float] = []
        try:
            ok = _short_scan(
                spec
                if type(api_version) is str and type(kind) is str and type(spec) is dict
                else value,
                floats,
            )
        except RecursionError:  # too deep (or cyclic): the reference decides
            ok = False
        if not ok:
            out = None
        elif floats:
            out = _canonicalize_with_fragments(value, floats)
        else:
            try:
                out = _orjson_dumps(value, None, _ORJSON_OPTIONS)  # type: ignore[misc]
            except TypeError:  # orjson.JSONEncodeError: key, big int, surrogate, depth
                out = None
            else:
                if not out.isascii() and _HIGH_LEAD.search(out) and not _key_orders_agree(value):
                    out = None
    else:
        out = _fast(value)
    if out is None:
        out = rfc8785.dumps(value)
    return "sha256:" + _sha256(out).hexdigest()


class DigestMemo:
    """Digests of records a stream repeats, computed once (``validate`` on JSON Lines:
    every line embeds the same few protocols and environments).

    Keyed by orjson's bytes of the record's identity *as it is* (unsorted, no scan):
    cheap, and exact for values of JSON's own types — which is why only sessions whose
    values came from strict intake (``strict_json``) use it. Holds at most ``size``
    entries (then starts again), so memory stays flat on a stream of any length.
    Without orjson it computes every digest.
    """

    __slots__ = ("_memo", "_size")

    def __init__(self, size: int = 4096) -> None:
        self._memo: dict[bytes, str] = {}
        self._size = size

    def digest(self, record: Mapping[str, Any]) -> str:
        """:func:`digest` of ``record``, from the memo when it was seen before."""
        if _orjson_dumps is None:
            return digest(record)
        try:
            key = _orjson_dumps(identity(record))
        except TypeError:  # a value orjson refuses: no key, just the digest
            return digest(record)
        found = self._memo.get(key)
        if found is None:
            found = digest(record)
            if len(self._memo) >= self._size:
                self._memo.clear()
            self._memo[key] = found
        return found


def safe_digest(record: Mapping[str, Any], memo: DigestMemo | None = None) -> str | None:
    """The record's digest, or None when it lacks apiVersion, kind or spec (or cannot
    be canonicalized: a value JCS cannot write, or nesting too deep for its recursive
    encoder). ``memo``: for values from strict intake only (see DigestMemo)."""
    if "apiVersion" not in record or "kind" not in record or "spec" not in record:
        return None
    try:
        return memo.digest(record) if memo is not None else digest(record)
    except (TypeError, ValueError, RecursionError):
        return None
