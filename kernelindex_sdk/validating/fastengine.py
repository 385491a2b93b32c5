"""The fast validation engine: jsonschema-rs for verdicts, the reference for everything else.

:class:`FastEngine` implements :class:`~kernelindex_sdk.validating.engine.ValidationEngine` with a
compiled Rust validator (the ``jsonschema-rs`` package) as a *fast path for the valid
case*, and :class:`~kernelindex_sdk.validating.engine.JsonschemaEngine` (python-jsonschema, the
reference) for every other answer:

* ``is_valid`` returns ``True`` only when the compiled validator accepts the instance
  and every ``format`` the schema applies to it passes the *reference's own* format
  function. Anything else — the compiled validator rejects it, raises (a type it does
  not take, a lone surrogate, deep nesting), or the schema is outside what the fast
  path handles — is answered by the reference. So a record is never rejected because
  of the fast path, and the only way the fast path can change a verdict is by
  accepting something the reference rejects; what follows rules that out.
* ``problems`` always come from the reference, so messages and pointers are unchanged.

Why an accepted instance is accepted by the reference too
----------------------------------------------------------
The schema is compiled only when it keeps to what both engines provably read alike
(:func:`_prepare`; anything else leaves that schema to the reference):

* Every ``$ref`` is inlined by the one inliner (:func:`kernelindex_sdk.schema.inlining.inline`,
  which declines cycles, non-pointer fragments, embedded ``$id``,
  ``$dynamicRef``/``$anchor`` and their kin), and annotations (``title``,
  ``description``, ...) and ``$defs`` are dropped: none asserts anything, and the
  flat schema runs faster (nothing to resolve, nothing to skip).
* Only the keywords in :data:`_KEYWORDS` appear; ``multipleOf``, ``unevaluated*``,
  ``contains``, ``dependentSchemas`` and unknown keywords are left to the reference.
  ``enum``/``const`` values hold no floats (int/float equality is where two
  implementations could differ).
* Every ``pattern`` (and ``patternProperties`` key) is in a small regular syntax
  (:func:`_pattern_is_portable`: literals, ASCII classes and ranges, groups,
  alternation, quantifiers, ``^`` first and ``$`` last) that means the same in
  Python's ``re`` and Rust's ``regex``, except that Python's ``$`` also matches
  before a final newline: Rust is stricter there, which can only send an instance
  to the reference, never accept one the reference rejects.
* ``format`` is not checked by the Rust validator (its ``date-time`` allows leap
  seconds, python-jsonschema's does not, ...). Where a format sits at the end of a
  chain of ``properties`` (and ``allOf``) from the root — every format in the
  kernelindex schemas does — the value there is looked up after the Rust verdict and
  checked with the very function python-jsonschema's ``FORMAT_CHECKER`` uses in
  this environment (:func:`format_function`); a format anywhere else is checked by
  the Rust validator calling that same Python function. Where every format of a
  schema is so placed and has a pattern that matches only strings its function
  accepts (:data:`SUBSET_PATTERNS`: ``date-time``), a second validator, with those
  patterns beside the formats, runs first: what it accepts is valid with no call into
  Python; what it refuses gets the check above.

The verdicts are equal for JSON values — ``dict``, ``list``, ``str``, ``int``,
finite ``float``, ``bool``, ``None``, as :mod:`kernelindex_sdk.reading.intake` and
:func:`json.loads` produce them. For other Python objects (a ``tuple`` where an array
is expected, ``Decimal``, infinities) the Rust validator may accept what the reference
rejects: validate such values with :class:`~kernelindex_sdk.validating.engine.JsonschemaEngine`.
``tests/test_fast_engine.py`` checks the verdicts against the reference on the seeds,
the examples and generated valid and invalid instances.

``KERNELINDEX_ENGINE=jsonschema`` in the environment makes :func:`default_engine`
return the reference (for comparisons and debugging).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, TypeVar

from kernelindex_sdk.base.lightimport import jsonschema_rs
from kernelindex_sdk.errors import Problem
from kernelindex_sdk.schema.inlining import Declined, documents_of, inline, resolved
from kernelindex_sdk.schema.registry import SchemaRegistry
from kernelindex_sdk.validating.engine import JsonschemaEngine, ValidationEngine

_T = TypeVar("_T")
_K = TypeVar("_K", bound=Hashable)

__all__ = ["FastEngine", "available", "default_engine", "format_function"]

#: Keywords whose values hold subschemas, by shape.
_SCHEMA_MAPS = frozenset({"$defs", "properties", "patternProperties"})
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMAS = frozenset(
    {"not", "if", "then", "else", "items", "additionalProperties", "propertyNames"}
)
#: Keywords that assert nothing (Draft 2020-12 annotations): dropped before compiling.
_ANNOTATIONS = frozenset(
    {"title", "description", "$comment", "examples", "default", "deprecated",
     "readOnly", "writeOnly"}
)  # fmt: skip
#: Every keyword the fast path compiles; a schema with any other is left to the reference.
_KEYWORDS = (
    _SCHEMA_MAPS
    | _SCHEMA_LISTS
    | _SCHEMAS
    | _ANNOTATIONS
    | {
        "$schema", "$id", "$ref", "type", "enum", "const", "required",
        "dependentRequired", "minLength", "maxLength", "pattern", "format", "minimum",
        "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems",
        "uniqueItems", "minProperties", "maxProperties",
    }
)  # fmt: skip

#: A compiled check: True when the instance is valid (may raise on odd input).
Check = Callable[[Any], bool]
#: Where a format applies: the keys from the root, and the format's function.
Site = tuple[tuple[str, ...], Callable[[str], bool]]


class Unsupported(Exception):
    """The schema uses something the fast path does not handle (the reference will)."""


def available() -> bool:
    """True when the ``jsonschema_rs`` module can be imported."""
    try:
        jsonschema_rs()
    except ImportError:
        return False
    return True


def default_engine(registry: SchemaRegistry) -> ValidationEngine:
    """:class:`FastEngine` when jsonschema-rs is installed, else the reference engine.

    ``KERNELINDEX_ENGINE=jsonschema`` forces the reference. Engines hold only compiled
    schemas, so one is shared by every session on the same registry object.
    """
    reference = os.environ.get("KERNELINDEX_ENGINE", "").lower() in ("jsonschema", "reference")
    key = (id(registry), reference)
    cached = _ENGINES.get(key)
    if cached is not None and cached[0] is registry:
        return cached[1]
    fast = not reference and available()
    engine: ValidationEngine = FastEngine(registry) if fast else JsonschemaEngine(registry)
    if len(_ENGINES) > 16:
        _ENGINES.clear()
    _ENGINES[key] = (registry, engine)
    return engine


_ENGINES: dict[tuple[int, bool], tuple[SchemaRegistry, ValidationEngine]] = {}


class FastEngine:
    """Compiled verdicts for valid instances, the reference engine for everything else."""

    def __init__(self, registry: SchemaRegistry, reference: ValidationEngine | None = None) -> None:
        self._registry = registry
        self._reference = reference
        self._checks: dict[str, Check | None] = {}
        self._splits: dict[tuple[str, frozenset[str]], Split | None] = {}

    @property
    def reference(self) -> ValidationEngine:
        """The engine that answers whatever the fast path does not."""
        if self._reference is None:
            self._reference = JsonschemaEngine(self._registry)
        return self._reference

    def compiled(self, schema_id: str) -> bool:
        """True when ``schema_id`` runs on the fast path (False: the reference runs it)."""
        return self._check(schema_id) is not None

    def quick_check(self, schema_id: str) -> Check | None:
        """The :func:`quick_part` of ``schema_id``'s compiled check (None: no fast path):
        one call into Rust that accepts a subset of what :meth:`accepts` accepts (True
        is exact, False only "ask :meth:`accepts`"); it may raise on values of no JSON
        type, which means False too."""
        check = self._check(schema_id)
        return quick_part(check) if check is not None else None

    def _check(self, schema_id: str) -> Check | None:
        return _remembered(self._checks, schema_id, lambda: _compile(self._registry, schema_id))

    def fast_verdict(self, schema_id: str, instance: Any) -> bool | None:
        """The fast path's own answer: True, False, or None (no fast path, or it raised).

        The one place the compiled check runs. Only True is ever trusted without the
        reference: :meth:`is_valid`, :meth:`accepts` and :meth:`problems` differ only
        in what they make of the rest.
        """
        check = self._checks.get(schema_id) or self._check(schema_id)
        if check is None:
            return None
        try:
            return bool(check(instance))
        except Exception:  # a type jsonschema-rs does not take, a lone surrogate, ...
            return None

    def is_valid(self, schema_id: str, instance: Any) -> bool:
        return self.fast_verdict(schema_id, instance) or self.reference.is_valid(
            schema_id, instance
        )

    def accepts(self, schema_id: str, instance: Any) -> bool:
        """:meth:`is_valid` without the reference's second opinion on a refusal: True
        is exact, False means only "not known to be valid" (a caller that goes on to
        :meth:`problems` then runs the reference once, not twice). Where the fast path
        has no answer (no fast path for the schema, or it raised), the reference's."""
        verdict = self.fast_verdict(schema_id, instance)
        return self.reference.is_valid(schema_id, instance) if verdict is None else verdict

    def problems(self, schema_id: str, instance: Any, pointer: str = "") -> list[Problem]:
        # What the fast path accepts, the reference accepts: no problems. Anything else
        # is the reference's to explain (asking it is_valid first would run it twice).
        if self.fast_verdict(schema_id, instance):
            return []
        return self.reference.problems(schema_id, instance, pointer)

    def split(self, schema_id: str, keep: frozenset[str] = frozenset()) -> Split | None:
        """The schema taken apart, when it is an object whose members are ``$ref``s.

        ``(shell, members)``: ``members`` are the ``(property, schema id)`` pairs of
        every property whose schema is just a ``$ref`` to a registry schema, and
        ``shell`` checks the schema with each of those replaced by ``true``. When the
        schema has nothing but ``type``, ``required``, ``properties``,
        ``additionalProperties`` and annotations (the bundle schema), an instance is
        valid exactly when ``shell`` accepts it and each member it has is valid against
        its schema: so a caller may validate a member it has seen before from memory
        (``ValidationSession.passes``). ``shell`` is a fast path like the others: True
        is trusted, False only means "ask :meth:`is_valid`". None for any other
        schema, or without jsonschema-rs.

        Members named in ``keep`` are not taken out: the shell checks them in its own
        call (one call into Rust instead of one per member), and they are not listed.
        """
        key = (schema_id, keep)
        return _remembered(self._splits, key, lambda: _split(self._registry, schema_id, keep))


def _remembered(made: dict[_K, _T | None], key: _K, make: Callable[[], _T | None]) -> _T | None:
    """``made[key]``, made first if need be; None, remembered too, for a schema
    :class:`Unsupported` by the fast path (its answers are then the reference's)."""
    try:
        return made[key]
    except KeyError:
        pass
    try:
        found = make()
    except Unsupported:
        found = None
    made[key] = found
    return found


#: A schema taken apart (:meth:`FastEngine.split`): its shell, and (member, schema id).
Split = tuple[Check, tuple[tuple[str, str], ...]]

#: The keywords a schema that :meth:`FastEngine.split` takes apart may have.
_SPLIT_KEYWORDS = _ANNOTATIONS | {
    "$schema", "$id", "type", "required", "properties", "additionalProperties",
}  # fmt: skip


def _documents(registry: SchemaRegistry) -> dict[str, Any]:
    """Every schema document of the registry (its kinds' and the support schemas
    they reference) by ``$id``: what a ``$ref`` may point into."""
    return documents_of(registry)


def _split(registry: SchemaRegistry, schema_id: str, keep: frozenset[str]) -> Split | None:
    documents = _documents(registry)
    schema = documents.get(schema_id)
    if not isinstance(schema, dict) or not set(schema) <= _SPLIT_KEYWORDS:
        return None
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return None
    base = schema.get("$id", schema_id)
    members: list[tuple[str, str]] = []
    shell_properties: dict[str, Any] = {}
    for name, sub in properties.items():
        ref = sub.get("$ref") if isinstance(sub, dict) else None
        target = resolved(base, ref) if isinstance(ref, str) else None
        if (
            name not in keep
            and target is not None
            and not target.fragment
            and target.document in documents
            and set(sub) <= _ANNOTATIONS | {"$ref"}
        ):
            members.append((name, target.document))
            shell_properties[name] = True
        else:
            shell_properties[name] = sub
    if not members:
        return None
    shell_id = f"{schema_id}#shell"
    shell = {**schema, "$id": shell_id, "properties": shell_properties}
    # Compiled as any schema is: the same keywords, portability rules and formats.
    flat, formats = _flatten({**documents, shell_id: shell}, shell_id)
    return _compile_flat(shell_id, flat, formats), tuple(members)


# --------------------------------------------------------------------------- formats


def format_function(name: str) -> Callable[[str], bool] | None:
    """The check python-jsonschema's ``FORMAT_CHECKER`` applies to a string, here.

    Mirrors ``jsonschema._format``: ``uri`` is ``rfc3987.parse`` when ``rfc3987`` is
    installed, else ``rfc3986_validator``; ``date-time`` is ``rfc3339_validator`` on
    the upper-cased string. A format whose library is missing is not checked by
    python-jsonschema either (``lambda s: True``). ``None`` for any other format:
    the fast path does not know how the reference checks it.
    """
    if name == "date-time":
        if importlib.util.find_spec("rfc3339_validator") is None:
            return _always
        return _rfc3339()
    if name == "uri":
        try:
            import rfc3987  # type: ignore[import-not-found, unused-ignore]
        except ImportError:
            pass
        else:
            return _uri_rfc3987(rfc3987)
        if importlib.util.find_spec("rfc3986_validator") is None:
            return _always
        return _cached(_uri_rfc3986)
    return None


#: A subset of RFC 3986 ``URI`` (scheme "://" reg-name, then a path of unreserved
#: characters): ``scheme ":" "//" authority path-abempty`` with every character
#: ``unreserved``, so every match is a URI under the ``URI`` rule that
#: ``rfc3986_validator`` implements (used when ``rfc3987`` is not installed, as
#: python-jsonschema does). Most URIs in records (a harness repository on GitHub)
#: match, and are accepted without importing ``rfc3986_validator``, whose import
#: compiles a large set of regexes. ``tests/test_fast_engine.py`` checks generated matches
#: against the library.
SIMPLE_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[A-Za-z0-9._~-]+(?:/[A-Za-z0-9._~-]*)*")


def _uri_rfc3986(value: str) -> bool:
    if SIMPLE_URI.fullmatch(value):
        return True
    from rfc3986_validator import validate_rfc3986  # type: ignore[import-untyped]

    return bool(validate_rfc3986(value, rule="URI"))


#: For a format, a regular expression (in the portable syntax, see
#: :func:`_pattern_is_portable`) whose every match the format's reference function
#: accepts. Put beside the format as a ``pattern``, it lets the Rust validator accept
#: the common strings itself, with no call into Python (:func:`_compile_flat`).
#: ``date-time``: what ``rfc3339_validator`` accepts, less February 29th (which needs
#: the year), year 0000 (refused), non-ASCII digits and lower-case ``t``/``z`` (which
#: the reference reads after ``upper()``). ``tests/test_fast_engine.py`` checks
#: generated matches against the reference's function.
SUBSET_PATTERNS: Mapping[str, str] = {
    "date-time": (
        "^([1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])"
        "-((0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])|(0[13-9]|1[0-2])-(29|30)|(0[13578]|1[02])-31)"
        "T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]([.][0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$"
    ),
}

#: Days of each month of a common year (index 0 unused).
_MONTH_DAYS: tuple[int, ...] = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _rfc3339() -> Callable[[str], bool]:
    """``rfc3339_validator.validate_rfc3339(value.upper())``, with its own regex, minus
    ``calendar.monthrange`` (which computes a weekday to find a month's length): the
    hot format check of every run (``observedAt``). Same verdict on every string
    (tests/test_fast_engine.py compares the two).

    The library (and ``six``, which it imports) is imported at the first call:
    ``SUBSET_PATTERNS`` lets the Rust validator accept most timestamps without one,
    so most runs of ``validate`` never pay for the import."""
    match: Callable[[str], re.Match[str] | None] | None = None

    def check(value: str) -> bool:
        nonlocal match
        if match is None:
            from rfc3339_validator import RFC3339_REGEX  # type: ignore[import-untyped]

            match = RFC3339_REGEX.match
        found = match(value.upper())
        if found is None:
            return False
        # Matched ASCII text has its date at fixed places (YYYY-MM-DD): every month
        # has days 1-28, so only days 00 and 29-31 and year 0 need numbers (\d is any
        # Unicode digit, hence int() for other text).
        if "01" <= value[8:10] <= "28" and value.isascii():
            return value[:4] != "0000"
        year, month, day = int(found[1]), int(found[2]), int(found[3])
        if not year:
            return False
        leap = month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        return 1 <= day <= _MONTH_DAYS[month] + leap

    return check


def _always(value: str) -> bool:
    return True


def _uri_rfc3987(module: Any) -> Callable[[str], bool]:
    def check(value: str) -> bool:
        try:
            module.parse(value, rule="URI")
        except ValueError:
            return False
        return True

    return check


def _cached(check: Callable[[str], bool], size: int = 4096) -> Callable[[str], bool]:
    """``check`` with a bounded memo (a pure function of the string, so exact)."""
    memo: dict[str, bool] = {}

    def cached(value: str) -> bool:
        try:
            return memo[value]
        except KeyError:
            pass
        verdict = check(value)
        if len(memo) >= size:
            memo.clear()
        memo[value] = verdict
        return verdict

    return cached


# --------------------------------------------------------------------------- compile


def _compile(registry: SchemaRegistry, schema_id: str) -> Check:
    """The fast check of one schema; :class:`Unsupported` if it has no fast path."""
    flat, formats = _prepare(registry, schema_id)
    return _compile_flat(schema_id, flat, formats)


def _compile_flat(schema_id: str, flat: Any, formats: set[str]) -> Check:
    """The fast check of a schema :func:`_prepare` has flattened."""
    try:
        rs = jsonschema_rs()
    except ImportError as error:
        raise Unsupported("jsonschema-rs is not installed") from error
    sites = _format_sites(flat, ())
    functions = {name: _function(name) for name in formats}
    options = rs.RegexOptions()
    try:
        if sites is not None:
            # Formats at fixed property paths: checked in Python after the Rust verdict.
            validator = rs.Draft202012Validator(
                flat, validate_formats=False, pattern_options=options
            )
        else:
            # Formats elsewhere: the Rust validator calls the reference's functions.
            validator = rs.Draft202012Validator(
                flat, validate_formats=True, formats=dict(functions), pattern_options=options
            )
    except Exception as error:  # a pattern Rust's regex refuses, ...
        raise Unsupported(f"jsonschema-rs cannot compile {schema_id}: {error}") from error
    rust: Check = validator.is_valid
    if not sites:
        return rust
    full = _with_sites(rust, [(path, functions[name]) for path, name in sites])
    if not all(name in SUBSET_PATTERNS for _, name in sites):
        return full
    # Every format has a subset pattern: the schema with those patterns beside the
    # formats is stronger than schema and formats together (the formats are reached by
    # properties and allOf alone, which add no negation), so what it accepts is
    # valid, in Rust alone; the rest (a 29th of February, an invalid instance) gets the
    # full check.
    try:
        stronger = rs.Draft202012Validator(
            _with_subset_patterns(flat), validate_formats=False, pattern_options=options
        ).is_valid
    except Exception as error:  # pragma: no cover - the patterns are ours and compile
        raise Unsupported(f"jsonschema-rs cannot compile {schema_id}: {error}") from error
    return _either(stronger, full)


def _either(quick: Check, full: Check) -> Check:
    """``quick``'s acceptance, else ``full``'s verdict (``quick`` accepts a subset)."""

    def check(instance: Any) -> bool:
        return quick(instance) or full(instance)

    check.quick = quick  # type: ignore[attr-defined]  # (for quick_part)
    return check


def quick_part(check: Check) -> Check:
    """The part of a fast check that accepts a subset of what it accepts in one call
    into Rust (the schema with a subset pattern beside each format), or ``check``
    itself. A caller that asks it first and ``check`` only on a refusal has the
    verdict of ``check`` without its Python frame a call: that is most calls, for
    most instances are valid."""
    quick: Check = getattr(check, "quick", check)
    return quick


def _with_subset_patterns(schema: Any) -> Any:
    """``schema`` with :data:`SUBSET_PATTERNS` beside each format that ``properties``
    and ``allOf`` lead to (where :func:`_format_sites` finds every format)."""
    if not isinstance(schema, dict):
        return schema
    stronger = dict(schema)
    if isinstance(schema.get("properties"), dict):
        stronger["properties"] = {
            name: _with_subset_patterns(sub) for name, sub in schema["properties"].items()
        }
    conjuncts = [_with_subset_patterns(sub) for sub in schema.get("allOf", ())]
    if isinstance(schema.get("format"), str):
        conjuncts.append({"pattern": SUBSET_PATTERNS[schema["format"]]})
    if conjuncts:
        stronger["allOf"] = conjuncts
    return stronger


def _function(name: str) -> Callable[[str], bool]:
    function = format_function(name)
    if function is None:
        raise Unsupported(f"format {name!r}: no known reference check")
    return function


def _with_sites(rust: Check, sites: list[Site]) -> Check:
    """The Rust verdict, then each format site looked up and checked."""

    def check(instance: Any) -> bool:
        if not rust(instance):
            return False
        for path, function in sites:
            value = instance
            for key in path:
                # Exactly when "properties" applies: an object that has the key.
                if not isinstance(value, dict) or key not in value:
                    break
                value = value[key]
            else:
                if isinstance(value, str) and not function(value):
                    return False
        return True

    return check


def _format_sites(schema: Any, path: tuple[str, ...]) -> list[tuple[tuple[str, ...], str]] | None:
    """Each format with the property path it applies at, or None if one is elsewhere.

    A format is a *site* when only ``properties`` (and ``allOf``) lead to it from the
    root: then it applies to the value at that path whenever the path exists, with
    nothing that could discount its failure (no ``not``, ``anyOf``, ``if``, ...).
    """
    if not isinstance(schema, dict):
        return []
    sites: list[tuple[tuple[str, ...], str]] = []
    if isinstance(schema.get("format"), str):
        sites.append((path, schema["format"]))
    for keyword, value in schema.items():
        if keyword == "properties":
            for name, sub in value.items():
                found = _format_sites(sub, (*path, name))
                if found is None:
                    return None
                sites.extend(found)
        elif keyword == "allOf":
            for sub in value:
                found = _format_sites(sub, path)
                if found is None:
                    return None
                sites.extend(found)
        elif any(_has_format(sub) for sub in _subschemas(keyword, value)):
            return None
    return sites


def _has_format(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    if "format" in schema:
        return True
    return any(
        _has_format(sub) for keyword, value in schema.items() for sub in _subschemas(keyword, value)
    )


def _subschemas(keyword: str, value: Any) -> Iterable[Any]:
    """The schemas a keyword's value holds (none for a keyword that holds data)."""
    if keyword in _SCHEMA_MAPS:
        return value.values()  # type: ignore[no-any-return]
    if keyword in _SCHEMA_LISTS:
        return value  # type: ignore[no-any-return]
    if keyword in _SCHEMAS:
        return (value,)
    return ()


# --------------------------------------------------------------------------- prepare


def _prepare(registry: SchemaRegistry, schema_id: str) -> tuple[Any, set[str]]:
    """The schema with every ``$ref`` inlined and annotations dropped, and its formats.

    Raises :class:`Unsupported` for anything outside the fast path (see the module
    docstring).
    """
    documents = _documents(registry)
    if schema_id not in documents:
        raise Unsupported(f"unknown schema {schema_id}")
    return _flatten(documents, schema_id)


def _flatten(documents: Mapping[str, Any], schema_id: str) -> tuple[Any, set[str]]:
    """The one inliner (:func:`kernelindex_sdk.schema.inlining.inline`) with the fast path's
    rules: annotations dropped, the target of a ``$ref`` beside ``allOf`` appended to
    it, and every schema object checked by :func:`_fast_keywords`; and the formats seen.
    """
    formats: set[str] = set()
    try:
        flat = inline(
            documents,
            schema_id,
            dropped=_DROPPED,
            visit=functools.partial(_fast_keywords, formats=formats),
            ref_beside="appended",
        )
    except Declined as error:
        raise Unsupported(str(error)) from error
    return flat, formats


#: The keywords :func:`_fast_keywords` looks into.
_CHECKED = _SCHEMA_MAPS | _SCHEMA_LISTS | _SCHEMAS | {"pattern", "format", "enum", "const"}
#: Left out of the flat schema: they assert nothing.
_DROPPED = _ANNOTATIONS | {"$schema", "$id"}


def _fast_keywords(node: dict[str, Any], formats: set[str]) -> None:
    """Raise :class:`Unsupported` unless every keyword of ``node`` is one both engines
    provably read alike (see the module docstring); add its ``format`` to ``formats``."""
    if not _KEYWORDS.issuperset(node):
        unknown = sorted(set(node) - _KEYWORDS)
        raise Unsupported(f"keywords {unknown} are left to the reference")
    for keyword in _CHECKED.intersection(node):
        value = node[keyword]
        if keyword in _SCHEMA_MAPS:
            if not isinstance(value, dict):
                raise Unsupported(f"{keyword} is not an object")
            if keyword == "patternProperties" and not all(map(_pattern_is_portable, value)):
                raise Unsupported("patternProperties pattern")
        elif keyword in _SCHEMA_LISTS:
            if not isinstance(value, list):
                raise Unsupported(f"{keyword} is not an array")
        elif keyword in _SCHEMAS:
            if not isinstance(value, dict | bool):
                raise Unsupported(f"not a schema: {value!r:.40}")
        elif keyword == "pattern":
            if not isinstance(value, str) or not _pattern_is_portable(value):
                raise Unsupported(f"pattern {value!r}")
        elif keyword == "format":
            if isinstance(value, str):
                formats.add(value)
        elif keyword in ("enum", "const") and not _plain_data(value):
            raise Unsupported(f"{keyword} with floats or large integers")


def _plain_data(value: Any) -> bool:
    """JSON data with no floats and no integers beyond ±2**53 (enum/const values)."""
    if value is None or isinstance(value, bool | str):
        return True
    if isinstance(value, int):
        return -(2**53) <= value <= 2**53
    if isinstance(value, list):
        return all(_plain_data(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain_data(v) for k, v in value.items())
    return False


# --------------------------------------------------------------------------- patterns

_PATTERN_LITERALS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:/,;@#%&=!~<>'\"- "
)
#: Characters that mean themselves after a backslash in both dialects.
_ESCAPABLE = frozenset(".-+*?()[]{}|\\/^$")
#: Literal characters allowed inside a class (besides escapes and ranges).
_CLASS_LITERALS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:/,;@#%=!<>'\"+.*?()|{}$ "
)
_BOUNDS = re.compile(r"\{([0-9]{1,3})(?:(,)([0-9]{0,3}))?\}")


def _pattern_is_portable(pattern: str) -> bool:
    """True if ``pattern`` is in the syntax Python ``re`` and Rust ``regex`` read alike.

    Allowed: ASCII letters, digits and ``_:/,;@#%&=!~<>'"- `` as literals; ``\\``
    before one of ``.-+*?()[]{}|\\/^$``; ``.``; classes ``[...]`` / ``[^...]`` of
    such literals, escapes and ASCII ranges (no nested ``[``, no ``&``/``~``, which
    Rust reads as set operations); groups ``(...)`` and ``(?:...)``; ``|``;
    quantifiers ``? * + {n} {n,} {n,m}`` with an optional lazy ``?``; ``^`` only
    first and ``$`` only last. Everything else (``\\d``, ``\\w``, flags, lookaround,
    POSIX classes, ...) is left to the reference.
    """
    end = len(pattern)
    i = 1 if pattern.startswith("^") else 0
    if pattern.endswith("$") and not _escaped(pattern, end - 1):
        end -= 1
    depth = 0
    atom = False  # the previous token can take a quantifier
    while i < end:
        c = pattern[i]
        if c == "\\":
            if i + 1 >= end or pattern[i + 1] not in _ESCAPABLE:
                return False
            i, atom = i + 2, True
        elif c == "[":
            i = _class_end(pattern, i + 1, end)
            if i < 0:
                return False
            atom = True
        elif c == "(":
            if pattern.startswith("(?", i):
                if not pattern.startswith("(?:", i):
                    return False
                i += 3
            else:
                i += 1
            depth, atom = depth + 1, False
        elif c == ")":
            if depth == 0:
                return False
            depth, i, atom = depth - 1, i + 1, True
        elif c == "|":
            i, atom = i + 1, False
        elif c in "*+?" or c == "{":
            if not atom:
                return False
            if c == "{":
                m = _BOUNDS.match(pattern, i)
                if m is None or m.end() > end:
                    return False
                if m.group(3) and int(m.group(3)) < int(m.group(1)):
                    return False
                i = m.end()
            else:
                i += 1
            if i < end and pattern[i] == "?":  # lazy: same matches exist either way
                i += 1
            atom = False
        elif c == "." or c in _PATTERN_LITERALS:
            i, atom = i + 1, True
        else:
            return False
    return depth == 0


def _escaped(pattern: str, index: int) -> bool:
    """True if the character at ``index`` follows an odd number of backslashes."""
    count = 0
    while index - count - 1 >= 0 and pattern[index - count - 1] == "\\":
        count += 1
    return count % 2 == 1


def _class_end(pattern: str, i: int, end: int) -> int:
    """The index after the ``]`` closing a class whose body starts at ``i``; -1 if not portable."""
    if i < end and pattern[i] == "^":
        i += 1
    items = 0
    previous: str | None = None  # the last single character, for a range
    while i < end:
        c = pattern[i]
        if c == "]":
            return i + 1 if items else -1
        if c == "\\":
            if i + 1 >= end or pattern[i + 1] not in _ESCAPABLE:
                return -1
            previous, i = pattern[i + 1], i + 2
        elif c == "-":
            nxt = pattern[i + 1] if i + 1 < end else ""
            if nxt == "]" or items == 0:  # a literal '-' first or last
                previous, i = "-", i + 1
            elif previous is not None and nxt in _CLASS_LITERALS and nxt >= previous:
                previous, i = None, i + 2  # a range previous-nxt
            else:
                return -1
        elif c in _CLASS_LITERALS:
            previous, i = c, i + 1
        else:
            return -1
        items += 1
    return -1
