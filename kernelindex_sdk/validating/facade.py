"""The life cycle of a record, for library users: build, link, validate, digest, write.

A tool holds records as model instances (:mod:`kernelindex_sdk.models`) or as plain
JSON values; every function here takes either, with identical results::

    import kernelindex_sdk as ki
    from kernelindex_sdk import models as m

    protocol = m.BenchmarkProtocol(metadata=..., spec=...)
    run = m.BenchmarkRun(metadata=..., spec=m.RunSpec(
        status="passed", observed_at=ki.timestamp(datetime.now(timezone.utc)),
        timing=m.Timing(latency_ns={"median": ki.nanoseconds(ms=1.25)}, primary_statistic="median"),
        protocol_digest="", workload_digest="", environment_digest="", implementation_digest="",
    ))
    run = ki.link(run, protocol=protocol, environment=env, workload=w, implementation=impl)
    assert ki.validate(m.Bundle(run=run, protocol=protocol)) == []
    path.write_text(ki.dumps(run, indent=2))

Misuse is a ``TypeError`` (a Python type that is no JSON value, a non-mapping given as
a record) or a documented :class:`~kernelindex_sdk.errors.KernelIndexError` —
:class:`~kernelindex_sdk.errors.NotARecord`, :class:`~kernelindex_sdk.errors.NotJSON` —
never a ``KeyError``, ``RecursionError`` or an encoder's exception from deep inside:
a value is walked iteratively (:func:`~kernelindex_sdk.reading.intake.json_problems`) before
recursive code sees it, or, where that would cost every record (the digest), when
the recursive code fails.
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Mapping
from datetime import datetime, timezone
from fractions import Fraction
from typing import Any, TypeVar

from kernelindex_sdk import canonical, checks
from kernelindex_sdk.base.escaping import int_text, short_repr
from kernelindex_sdk.base.prettyjson import pretty
from kernelindex_sdk.base.recordformat import json_type
from kernelindex_sdk.errors import NotARecord, NotJSON, Problem
from kernelindex_sdk.reading.intake import (
    MAX_SAFE_INTEGER,
    has_raw_surrogate,
    is_strict_json,
    json_problems,
)

__all__ = [
    "MAX_INDENT",
    "as_json",
    "canonicalize",
    "digest",
    "dumps",
    "is_strict_json",
    "json_problems",
    "link",
    "nanoseconds",
    "timestamp",
    "validate",
]

R = TypeVar("R")


def _is_model(value: Any) -> bool:
    return hasattr(type(value), "__attrs_attrs__")


def as_json(value: Any) -> Any:
    """The plain JSON of a model instance (wire names, absent fields left out); any
    other value unchanged. A model holding wrong types (``Hardware(vendor=1)``) comes
    out as it is, for :func:`validate` to report with pointers."""
    if _is_model(value):
        from kernelindex_sdk.models import unstructure

        return unstructure(value)
    return value


def _plain(value: Any) -> Any:
    """``as_json``, then refuse anything that is not strict JSON (:class:`NotJSON`)."""
    plain = as_json(value)
    if not is_strict_json(plain):
        problems = json_problems(plain)
        if problems:
            raise NotJSON(problems)
    return plain


def _not_json(plain: Any, error: Exception) -> NotJSON:
    """What to raise when canonicalizing ``plain`` failed with ``error``:
    :func:`json_problems` says why; should it find nothing, the encoder's own words,
    still as a :class:`NotJSON`."""
    problems = json_problems(plain) or [
        Problem(f"cannot be canonicalized (RFC 8785): {error}", "not-json")
    ]
    return NotJSON(problems)


def canonicalize(value: Any) -> bytes:
    """The RFC 8785 bytes of a JSON value or model."""
    plain = as_json(value)
    try:
        return canonical.canonicalize(plain)
    except (ValueError, TypeError, RecursionError) as error:
        raise _not_json(plain, error) from None


def digest(record: Any) -> str:
    """``sha256:<hex>`` of a record's ``{apiVersion, kind, spec}``, dict or model.

    Raises ``TypeError`` for a value that is not a mapping, :class:`NotARecord` for one
    without ``apiVersion``, ``kind`` or ``spec``, :class:`NotJSON` for one whose
    identity is no strict JSON.
    """
    if type(record) is dict:
        # The common case, a plain record: no model to convert, nothing to check
        # first. Whatever fails here (a member missing, a value that is no strict
        # JSON) is asked again of digest_any, whose answer or error stands: the two
        # agree on every value (tests/test_lifecycle.py draws them).
        try:
            return _canonical_digest(record)
        except (KeyError, ValueError, TypeError, RecursionError):
            pass
    return digest_any(record)


_canonical_digest = canonical.digest


def digest_any(record: Any) -> str:
    """:func:`digest` of any value, every step taken: a model converted, a value that
    is no mapping or lacks a member of the identity refused, by name."""
    plain = as_json(record)
    if not isinstance(plain, Mapping):
        raise TypeError(f"digest() takes a record (a mapping or a model), not {json_type(plain)}")
    missing = [key for key in ("apiVersion", "kind", "spec") if key not in plain]
    if missing:
        raise NotARecord(f"not a record: no {', '.join(missing)} (a digest covers all three)")
    # The fast path first: strict JSON is the normal case; only a failure is examined.
    try:
        return canonical.digest(plain)
    except (ValueError, TypeError, RecursionError) as error:
        raise _not_json(canonical.identity(plain), error) from None


def validate(value: Any, *, source: str = "<input>", strict_refs: bool = False) -> list[Problem]:
    """Every problem of one record, bundle or array of them (dicts or models); [] if valid.

    A value that is not strict JSON (a cycle, nesting beyond the limit, a non-string
    key, a ``set``, ``NaN``) is reported as problems, not raised, and not validated
    further.
    """
    from kernelindex_sdk.validating.validation import validate as validate_json

    plain = as_json(value)
    if isinstance(plain, list):
        plain = [as_json(element) for element in plain]
    if not is_strict_json(plain):
        problems = json_problems(plain)
        if problems:
            return [p._replace(source=source) for p in problems]
    return validate_json(plain, source=source, strict_refs=strict_refs)


#: The widest ``indent`` :func:`dumps` takes (jq stops at 7; 16 leaves room).
MAX_INDENT = 16


def dumps(value: Any, *, indent: int | None = None) -> str:
    """JSON text of a value or model, as kernelindex writes records: UTF-8 text (no
    ``\\u`` escapes), compact on one line, or indented by ``indent`` spaces (0 to
    :data:`MAX_INDENT`; 2 is how bundle files are written); strict JSON only
    (:class:`NotJSON` otherwise: a lone surrogate too, which no UTF-8 text can hold),
    so what it writes reads back through :func:`~kernelindex_sdk.reading.intake.loads`
    unchanged."""
    if indent is not None:
        if isinstance(indent, bool) or not hasattr(type(indent), "__index__"):
            raise TypeError(f"dumps(indent=...) takes an int or None, not {type(indent).__name__}")
        indent = operator.index(indent)  # an int, or one of numpy's
        if not 0 <= indent <= MAX_INDENT:
            raise ValueError(f"dumps(indent=...) takes 0 to {MAX_INDENT} spaces")
    plain = _plain(value)
    if indent is None:
        text = json.dumps(plain, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    elif indent == 2:
        text = pretty(plain)
    else:
        text = json.dumps(plain, ensure_ascii=False, indent=indent, allow_nan=False)
    # Strings are not searched on the way in (that would cost every value); the text is,
    # at C speed, and only when it is not ASCII.
    if not text.isascii() and has_raw_surrogate(text):
        raise NotJSON(json_problems(plain))
    return text


def link(
    run: R,
    *,
    protocol: Any,
    environment: Any,
    workload: Any = None,
    implementation: Any = None,
) -> R:
    """``run`` with each given record's digest in its reference field.

    ``run`` and the records may be dicts or models; the result has the type of ``run``
    (a new dict or model: nothing is changed in place). The reference fields are the
    run's apiVersion's (``protocolDigest``, ... in v1alpha1).
    """
    plain = as_json(run)
    if not isinstance(plain, Mapping) or "spec" not in plain:
        raise NotARecord("link() takes a BenchmarkRun (dict or model) as its first argument")
    module = checks.for_version(str(plain.get("apiVersion")))
    references: Mapping[str, tuple[str, str]] = getattr(module, "REFERENCES", {})
    given = {
        "protocol": protocol,
        "environment": environment,
        "workload": workload,
        "implementation": implementation,
    }
    fields: dict[str, str] = {}
    for member, record in given.items():
        if record is None:
            continue
        if member not in references:
            raise NotARecord(f"apiVersion {plain.get('apiVersion')!r} has no {member} reference")
        kind, field = references[member]
        found = as_json(record)
        if isinstance(found, Mapping) and found.get("kind") not in (kind, None):
            raise NotARecord(f"{member}= must be a {kind}, not a {found.get('kind')}")
        fields[field] = digest(found)
    if _is_model(run):
        import attrs

        from kernelindex_sdk.models import wire_name

        spec = run.spec  # type: ignore[attr-defined]
        by_wire = {wire_name(a.name): a.name for a in attrs.fields(type(spec))}
        changes = {by_wire[field]: value for field, value in fields.items()}
        return attrs.evolve(run, spec=attrs.evolve(spec, **changes))  # type: ignore[misc]
    linked = dict(plain)
    linked["spec"] = {**plain["spec"], **fields}
    return linked  # type: ignore[return-value]


def timestamp(moment: datetime) -> str:
    """An ``observedAt`` from an aware ``datetime``: RFC 3339 in UTC with milliseconds,
    ``2024-09-03T15:38:37.000Z`` (what the importers write). A naive datetime is a
    ``ValueError``: its time zone would be a guess."""
    if not isinstance(moment, datetime):
        raise TypeError(f"timestamp() takes a datetime, not {type(moment).__name__}")
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("timestamp() needs an aware datetime (give it a tzinfo)")
    utc = moment.astimezone(timezone.utc)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


_NS_PER = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def nanoseconds(*, ns: float = 0, us: float = 0, ms: float = 0, s: float = 0) -> int:
    """A duration as whole nanoseconds (how records store latency), rounded to the
    nearest: ``nanoseconds(ms=0.2501)`` is ``250100``. Negative, NaN or infinite
    durations, and ones beyond ±(2**53 − 1) ns, are a ``ValueError``."""
    total = Fraction(0)
    for unit, amount in (("ns", ns), ("us", us), ("ms", ms), ("s", s)):
        if isinstance(amount, bool) or not isinstance(amount, (int, float)):
            raise TypeError(f"nanoseconds({unit}=...) takes a number, not {type(amount).__name__}")
        # An int is finite (and math.isfinite would overflow converting a huge one).
        if (isinstance(amount, float) and not math.isfinite(amount)) or amount < 0:
            raise ValueError(
                f"nanoseconds({unit}={short_repr(amount)}): a duration is finite and >= 0"
            )
        if amount > MAX_SAFE_INTEGER:  # beyond the limit in any unit: no huge arithmetic
            total = Fraction(amount)
            break
        total += Fraction(amount) * _NS_PER[unit]  # exact: no float error on the way
    result = round(total)
    if result > MAX_SAFE_INTEGER:
        raise ValueError(
            f"{int_text(result)} ns is beyond 2**53 - 1: no record can hold it exactly"
        )
    return result
