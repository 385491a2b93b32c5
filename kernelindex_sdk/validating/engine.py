"""The validation engine: a schema id and an instance in, problems out.

The rest of the SDK sees only :class:`ValidationEngine`, so a compiled validator
(jsonschema-rs, generated code, ...) can be swapped in for speed without touching
routing, semantic checks or reporting. :class:`JsonschemaEngine` is the reference:
python-jsonschema, one compiled validator per schema, built on first use and reused.

Schema errors become :class:`~kernelindex_sdk.errors.Problem` objects with an RFC 6901
pointer and a short message that never dumps a whole record back at the user.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from kernelindex_sdk.base.escaping import short_repr
from kernelindex_sdk.base.pointers import pointer_of
from kernelindex_sdk.base.recordformat import DRAFT_2020_12, json_type
from kernelindex_sdk.errors import Problem, UnresolvableReference
from kernelindex_sdk.schema.dialects import dialect_of, validator_class
from kernelindex_sdk.schema.registry import SchemaRegistry

if TYPE_CHECKING:  # imported when first used: jsonschema is slow to import
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

_T = TypeVar("_T")


class ValidationEngine(Protocol):
    """Checks instances against schemas of one registry."""

    def is_valid(self, schema_id: str, instance: Any) -> bool:
        """True when the instance satisfies the schema (the fast path)."""
        ...

    def problems(self, schema_id: str, instance: Any, pointer: str = "") -> list[Problem]:
        """Every schema violation, each located by a pointer under ``pointer``: empty
        exactly when :meth:`is_valid` is True, so a caller that needs the problems of
        an instance that may be valid asks this alone."""
        ...


def ecma_anchors(pattern: str) -> str:
    """A Python regex that matches like the ECMA-262 ``pattern`` JSON Schema specifies.

    In ECMA-262 (what ajv and the spec use) ``$`` matches only at the very end; in
    Python's ``re`` it also matches before a final newline, so ``"sm_80\\n"`` would
    pass ``^sm_[0-9]+$``. Every ``$`` outside a character class becomes ``\\Z``.
    """
    out: list[str] = []
    escaped = in_class = False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "$":
            out.append("\\Z")
            continue
        out.append(char)
    return "".join(out)


def python_regex(pattern: str) -> str:
    """:func:`ecma_anchors`, and the ECMA-262 spellings Python writes otherwise: a named
    group ``(?<name>…)`` as ``(?P<name>…)``, a reference to one ``\\k<name>`` as
    ``(?P=name)``, a control escape ``\\cJ`` as ``\\x0a``. What else Python cannot
    read (``\\p{L}``, a class ``[^]``) still fails to compile: a caller that cannot
    match it says so."""
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        char, rest = pattern[i], pattern[i + 1 :]
        if char == "\\" and rest[:1] == "c" and rest[1:2].isascii() and rest[1:2].isalpha():
            out.append(f"\\x{ord(rest[1]) % 32:02x}")
            i += 3
            continue
        if char == "\\" and rest[:2] == "k<" and not in_class and ">" in rest:
            name = rest[2 : rest.index(">")]
            out.append(f"(?P={name})")
            i += 4 + len(name)
            continue
        if char == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "$":
            char = "\\Z"
        elif pattern.startswith("(?<", i) and rest[2:3] not in ("=", "!"):
            char, i = "(?P<", i + 2
        out.append(char)
        i += 1
    return "".join(out)


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(ecma_anchors(pattern))


@cache
def _translated(pattern: str) -> re.Pattern[str]:
    return re.compile(python_regex(pattern))


@cache
def _ecma_validator_class(dialect: str = DRAFT_2020_12) -> Any:
    """Draft 2020-12 (or another :mod:`~kernelindex_sdk.schema.dialects` dialect's class), with
    ``pattern`` matched the ECMA-262 way (see :func:`ecma_anchors`)."""
    from jsonschema import ValidationError, validators

    def pattern(validator: Any, regex: str, instance: Any, schema: Any) -> Any:
        if validator.is_type(instance, "string") and not _compiled(regex).search(instance):
            yield ValidationError(f"{instance!r} does not match {regex!r}")

    return validators.extend(validator_class(dialect), {"pattern": pattern})  # type: ignore[no-untyped-call]


#: Enum arrays already turned into sets of equality keys (see :func:`_enum_members`): a
#: few at a time, the least recently used dropped first, each kept alive with its set
#: so its id stays its own.
_MEMBERS: dict[int, tuple[list[Any], frozenset[Any] | None]] = {}
_MEMBERS_KEPT = 64
#: Shorter enums are keyed afresh at each check (as cheap as one check member by
#: member) and not kept: a record with many small enums beside a large one would
#: otherwise push the large one out at every record, and key it again each time.
_KEPT_FROM = 32


def equality_key(value: Any) -> Any:
    """A hashable key that two JSON values share exactly when python-jsonschema's
    ``enum`` holds them equal (``1`` and ``1.0`` are, ``true`` and ``1`` are not, an
    array equals a tuple of the same items), or None for anything it cannot key the
    same way (NaN, bytes, a mapping with a key that is not a string, ...).

    Why: ``enum`` as python-jsonschema checks it compares the instance with every
    member in turn, so trying each value of an enum against it costs the square of its
    size; a set of these keys makes a check one look-up, with the same answers.
    """
    if isinstance(value, str):
        return ("s", value)
    if value is None:
        return ("z",)
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, (int, float)):
        # Equal numbers hash alike in Python, an int and a float included; NaN equals
        # nothing, not even itself, so it is left to the comparison one by one.
        return ("n", value) if value == value else None
    if type(value) in (list, tuple):
        items = tuple(equality_key(item) for item in value)
        return None if None in items else ("a", items)
    if type(value) is dict:
        pairs = [(k, equality_key(v)) for k, v in value.items()]
        if any(not isinstance(k, str) or v is None for k, v in pairs):
            return None
        return ("o", frozenset(pairs))
    return None


def _enum_members(enums: list[Any]) -> frozenset[Any] | None:
    """The equality keys of an ``enum`` array (None if one has none), made once for a
    long one (see :data:`_KEPT_FROM`)."""
    if len(enums) < _KEPT_FROM:
        return _keys(enums)
    kept = _MEMBERS.pop(id(enums), None)
    if kept is None or kept[0] is not enums:
        kept = (enums, _keys(enums))
        if len(_MEMBERS) >= _MEMBERS_KEPT:
            del _MEMBERS[next(iter(_MEMBERS))]
    _MEMBERS[id(enums)] = kept  # the most recently used last
    return kept[1]


def _keys(enums: list[Any]) -> frozenset[Any] | None:
    keys = [equality_key(each) for each in enums]
    return None if None in keys else frozenset(keys)


@cache
def _diff_validator_class(dialect: str = DRAFT_2020_12) -> Any:
    """:func:`_ecma_validator_class` with ``enum`` checked by a set of
    :func:`equality_key`\\ s: the schema diff tries every value of an enum against the
    other side and proves a witness record per value it finds (``JsonschemaEngine(...,
    keyed_enums=True)``), which python-jsonschema's member-by-member ``enum`` makes
    quadratic."""
    from jsonschema import ValidationError, validators

    from kernelindex_sdk.base.timebox import search  # (the schema diff's alone)

    by_comparison = validator_class(dialect).VALIDATORS["enum"]

    def pattern(validator: Any, regex: str, instance: Any, schema: Any) -> Any:
        # ECMA-262 spellings Python writes otherwise read (python_regex); one it cannot
        # read raises re.error. Each match a bounded step (timebox.search).
        if validator.is_type(instance, "string") and not search(_translated(regex), instance):
            yield ValidationError(f"{short_repr(instance)} does not match {regex!r}")

    def enum(validator: Any, enums: Any, instance: Any, schema: Any) -> Any:
        members = _enum_members(enums) if type(enums) is list else None
        key = None if members is None else equality_key(instance)
        if members is None or key is None:
            yield from by_comparison(validator, enums, instance, schema)
        elif key not in members:
            yield ValidationError(f"{short_repr(instance)} is not one of {short_repr(enums)}")

    extended = {"enum": enum, "pattern": pattern}
    return validators.extend(_ecma_validator_class(dialect), extended)  # type: ignore[no-untyped-call]


def _format_checker() -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator.FORMAT_CHECKER


def schema_validator(schema: Any, *, formats: bool = True) -> Draft202012Validator:
    """A validator for one self-contained schema (no ``$ref`` to another document), with
    this engine's ECMA-262 ``pattern`` and format checking (``formats=False``: ``format``
    an annotation, as Draft 2020-12 reads it by default): the schema diff checks
    candidate values with it before :class:`JsonschemaEngine` judges whole records.
    Its ``enum`` is a set look-up (:func:`_diff_validator_class`), with the same answers.
    A ``$ref`` to another document (a schema diff's external schema) is never fetched:
    the registry is empty, and reaching one raises referencing's ``Unresolvable``
    (python-jsonschema's default registry would fetch it)."""
    from referencing import Registry

    return _diff_validator_class()(  # type: ignore[no-any-return]
        schema, format_checker=_format_checker() if formats else None, registry=Registry()
    )


class JsonschemaEngine:
    """The reference engine: python-jsonschema Draft 2020-12 with format checking.

    Each schema is validated in its inlined form (:func:`~kernelindex_sdk.schema.bundled.
    inlined_schema`: every ``$ref`` replaced by its target), which python-jsonschema
    walks much faster than one whose references it resolves one by one through the
    registry, with the same errors; a schema that cannot be inlined exactly is resolved
    as written. ``inline=False`` resolves every schema as written (what the inlined
    form is tested against). A schema of another dialect (its ``$schema``: Draft 7, say,
    a side of a schema diff) is validated by that dialect's class and format checker.
    ``keyed_enums=True`` checks ``enum`` by a set look-up (:func:`_diff_validator_class`,
    same answers): the schema diff proves one witness per value of an enum, which the
    member-by-member ``enum`` makes quadratic (and matches ``pattern`` as
    :func:`python_regex` reads it, each match a bounded step: :func:`~kernelindex_sdk.
    timebox.search`). ``formats=False`` reads ``format`` as an annotation (the
    schema diff's default, as Draft 2020-12 reads it).
    """

    def __init__(
        self,
        registry: SchemaRegistry,
        *,
        inline: bool = True,
        keyed_enums: bool = False,
        formats: bool = True,
    ) -> None:
        self._registry = registry
        self._inline = inline
        self._formats = formats
        self._class = _diff_validator_class if keyed_enums else _ecma_validator_class
        self._validators: dict[str, Draft202012Validator] = {}
        self._resources: Any = None

    def _ecma_resources(self) -> Any:
        """The registry's schemas without their ``$schema`` keyword.

        python-jsonschema picks the validator class of a ``$ref`` target from its
        ``$schema``, which would swap our ECMA ``pattern`` back for Python's at the
        first cross-file ``$ref``. Without it, every target is read as Draft 2020-12
        (the registry's default) by our class.
        """
        if self._resources is None:
            from referencing import Registry, Resource
            from referencing.jsonschema import DRAFT202012

            pairs = []
            for entry in self._registry.all_entries:
                contents = dict(entry.contents)
                if dialect_of(contents) not in (DRAFT_2020_12, None):
                    # Another dialect (a schema diff's side): read as its $schema says.
                    resource = Resource.from_contents(contents, DRAFT202012)
                    pairs.append((entry.id, resource))
                    continue
                contents.pop("$schema", None)
                pairs.append((entry.id, DRAFT202012.create_resource(contents)))
            self._resources = Registry().with_resources(pairs).crawl()
        return self._resources

    def _validator(self, schema_id: str) -> Draft202012Validator:
        validator = self._validators.get(schema_id)
        if validator is None:
            from kernelindex_sdk.schema.bundled import inlined_schema

            inlined = inlined_schema(schema_id, self._registry) if self._inline else None
            if inlined is not None:
                # Without $schema, as in _ecma_resources: python-jsonschema picks the
                # class of a schema it descends into by its $schema (not ours).
                inlined.pop("$schema", None)
                checker = _format_checker() if self._formats else None
                validator = self._class()(inlined, format_checker=checker)
            else:
                resources = self._ecma_resources()
                contents = resources.contents(schema_id)
                dialect = dialect_of(contents) or DRAFT_2020_12
                validator = self._class(dialect)(
                    contents,
                    registry=resources,
                    format_checker=(
                        validator_class(dialect).FORMAT_CHECKER if self._formats else None
                    ),
                )
            self._validators[schema_id] = validator
        return validator

    def is_valid(self, schema_id: str, instance: Any) -> bool:
        return bool(self._validating(schema_id, lambda validator: validator.is_valid(instance)))

    def problems(self, schema_id: str, instance: Any, pointer: str = "") -> list[Problem]:
        found = list(dict.fromkeys(_problem(e, pointer) for e in self._errors(schema_id, instance)))
        found.sort(key=lambda p: p.pointer)
        return found

    def problem_pointers(self, schema_id: str, instance: Any) -> list[str]:
        """Where :meth:`problems` would place each problem, in order, each once, without
        the messages: the schema diff asks only where a record fails, and an ``enum``'s
        message lists every member (its size, paid per witness)."""
        errors = self._errors(schema_id, instance)
        return sorted({pointer_of(_path(error), "") for error in errors})

    def _errors(self, schema_id: str, instance: Any) -> list[ValidationError]:
        return self._validating(schema_id, lambda validator: list(validator.iter_errors(instance)))

    def _validating(self, schema_id: str, work: Callable[[Draft202012Validator], _T]) -> _T:
        """``work`` done with the validator of ``schema_id``; a ``$ref`` the registry
        cannot resolve, met on the way, raised as :class:`UnresolvableReference`."""
        try:
            return work(self._validator(schema_id))
        except Exception as error:
            unresolvable = _unresolvable(schema_id, error)
            if unresolvable is None:
                raise
            raise unresolvable from None


def _unresolvable(schema_id: str, error: Exception) -> UnresolvableReference | None:
    """The SDK's error for ``error``, raised while validating against ``schema_id``,
    when it is a ``$ref`` the registry cannot resolve (python-jsonschema raises
    referencing's ``Unresolvable``, wrapped, as it meets the reference); None for any
    other error, which is raised as it is. Caught, not checked before, so a valid
    record pays nothing."""
    from referencing.exceptions import Unresolvable

    if isinstance(error, Unresolvable):
        return UnresolvableReference(schema_id, str(getattr(error, "ref", error)))
    return None


def _problem(error: ValidationError, base: str) -> Problem:
    """Turn a jsonschema error into a located one-line problem."""
    return Problem(message=_message(error), code="schema", pointer=pointer_of(_path(error), base))


def _path(error: ValidationError) -> list[str | int]:
    """Where a problem is: the instance's place, or for unknown members the first of
    them (that is what the user must delete)."""
    path: list[str | int] = list(error.absolute_path)
    extra = _unknown_members(error)
    if extra:
        path.append(extra[0])
    return path


def _unknown_members(error: ValidationError) -> list[str]:
    """The members an ``additionalProperties`` error is about, sorted (else none)."""
    if error.validator != "additionalProperties" or not isinstance(error.instance, dict):
        return []
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    allowed = set(schema.get("properties", {}))
    return sorted(k for k in error.instance if k not in allowed)


def _message(error: ValidationError) -> str:
    """A short message per keyword; the schema's own description for combinators."""
    keyword = error.validator
    value: Any = error.validator_value
    instance = error.instance
    if keyword == "required":
        missing = [name for name in value if isinstance(instance, dict) and name not in instance]
        return f"missing required field {', '.join(repr(m) for m in missing)}"
    extra = _unknown_members(error)
    if extra:
        # Located at the first unknown key itself (see _path).
        more = f" (and {', '.join(repr(e) for e in extra[1:])})" if extra[1:] else ""
        return f"unknown field {extra[0]!r}{more}"
    if keyword == "type":
        expected = value if isinstance(value, str) else " or ".join(value)
        return f"expected {expected}, got {json_type(instance)} {short_repr(instance)}"
    if keyword == "enum":
        return f"{short_repr(instance)} is not one of {', '.join(repr(v) for v in value)}"
    if keyword == "const":
        return f"expected {value!r}, got {short_repr(instance)}"
    if keyword == "pattern":
        return f"{short_repr(instance)} does not match {value!r}"
    if keyword == "format":
        return f"{short_repr(instance)} is not a valid {value}"
    if keyword in ("oneOf", "anyOf", "not", "if", "then", "else"):
        combinator = error.schema
        description = combinator.get("description") if isinstance(combinator, Mapping) else None
        if description:
            return str(description)
        best = _deepest(error.context or [])
        if best is not None:
            return _message(best)
    if keyword == "propertyNames":
        return f"invalid key: {error.message}"
    return _trim(error.message)


def _deepest(errors: Sequence[ValidationError]) -> ValidationError | None:
    return max(errors, key=lambda e: len(e.absolute_path), default=None)


def _trim(message: str) -> str:
    message = " ".join(message.split())
    return message if len(message) <= 200 else message[:197] + "..."
