"""The cattrs converter between wire JSON and the models.

Wire names are camelCase (``latency_ns`` ↔ ``latencyNs``; ``pass_`` ↔ ``pass``),
unknown keys are errors, ``None`` fields are left out, and primitives are strict: a
string is never coerced into an int, nor an int into a string. Structuring errors
come back as the same :class:`~kernelindex_sdk.errors.Problem` objects schema errors
do (pointer + message), via :class:`ModelError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from types import UnionType
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

import attrs
import cattrs
from cattrs.errors import (
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
    IterableValidationNote,
    StructureHandlerNotFoundError,
)
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from kernelindex_sdk.base.escaping import short_repr
from kernelindex_sdk.base.pointers import pointer_of
from kernelindex_sdk.base.recordformat import json_type
from kernelindex_sdk.errors import KernelIndexError, NestingTooDeep, NotJSON, Problem
from kernelindex_sdk.reading.intake import json_problems

T = TypeVar("T")


#: The order a record's members are written in, whatever the model's field order.
_ENVELOPE = ("$schema", "apiVersion", "kind", "metadata", "spec")

#: Attributes whose wire name is not their camelCase form.
_WIRE_EXCEPTIONS = {"json_schema": "$schema"}


def wire_name(attribute: str) -> str:
    """``primary_statistic`` → ``primaryStatistic``; ``pass_`` → ``pass``;
    ``json_schema`` → ``$schema``."""
    special = _WIRE_EXCEPTIONS.get(attribute)
    if special is not None:
        return special
    head, *rest = attribute.rstrip("_").split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


class ModelError(KernelIndexError):
    """Wire data does not fit the model; ``problems`` holds every reason, located."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{p.pointer or '/'}: {p.message}" for p in problems))


def _strict(kind: type[Any], name: str) -> Any:
    def structure(value: Any, _: Any) -> Any:
        # bool is an int in Python but not a number on the wire.
        if isinstance(value, bool) and kind is not bool:
            raise TypeError(f"expected {name}, got boolean")
        if not isinstance(value, kind):
            raise TypeError(f"expected {name}, got {json_type(value)}")
        return value

    return structure


_SCALARS: dict[type[Any], str] = {int: "number", float: "number", str: "string", bool: "boolean"}


def _is_scalar_union(tp: Any) -> bool:
    """``int | float``, ``int | float | str | bool``, ... (``None`` allowed among them)."""
    args = get_args(tp)
    return (
        getattr(tp, "__origin__", None) in (Union, UnionType) or isinstance(tp, UnionType)
    ) and all(a in _SCALARS or a is type(None) for a in args)


def _scalar_union(value: Any, tp: Any) -> Any:
    """Check a value against a union of scalars without converting it."""
    args = get_args(tp)
    if value is None and type(None) in args:
        return None
    if isinstance(value, bool):
        if bool in args:
            return value
    elif any(isinstance(value, a) for a in args if a in _SCALARS and a is not bool):
        return value
    names = [_SCALARS[a] for a in args if a in _SCALARS]
    if int in args and float not in args:
        names[names.index("number")] = "integer"  # int | None: 1.5 is a number, not an integer
    wanted = " or ".join(dict.fromkeys(names))
    raise TypeError(f"expected {wanted}, got {json_type(value)}")


class MapEntryError(Exception):
    """A value inside an open map failed: carries the key so the pointer can name it."""

    def __init__(self, key: str, error: BaseException) -> None:
        self.key = key
        self.error = error
        super().__init__(f"{key}: {error}")


class NullFieldError(Exception):
    """Fields given as an explicit ``null``: never valid on the wire."""

    def __init__(self, keys: list[str]) -> None:
        self.keys = keys
        super().__init__(f"null is not allowed for {', '.join(repr(k) for k in keys)}")


class MapValidationError(Exception):
    """Every bad entry of one open map (so all of them are reported, not the first)."""

    def __init__(self, errors: list[MapEntryError]) -> None:
        self.errors = errors
        super().__init__("; ".join(str(e) for e in errors))


def _mapping_hook(conv: cattrs.Converter) -> Any:
    def structure(value: Any, tp: Any) -> Any:
        if not isinstance(value, dict):
            raise TypeError(f"expected object, got {json_type(value)}")
        args = get_args(tp)
        if not args or args[1] is Any:
            return value
        key_type, value_type = args
        out = {}
        errors = []
        for key, item in value.items():
            try:
                out[conv.structure(key, key_type)] = conv.structure(item, value_type)
            except Exception as error:
                errors.append(MapEntryError(key, error))
        if errors:
            raise MapValidationError(errors)
        return out

    return structure


def _map_unstructure_factory(conv: cattrs.Converter) -> Any:
    """Open maps go out as plain dicts; a map of models (provenance) unstructures its values."""

    def factory(tp: Any) -> Any:
        args = get_args(tp)
        if len(args) == 2 and attrs.has(args[1]):
            value_type = args[1]
            return lambda value: {k: conv.unstructure(v, value_type) for k, v in value.items()}
        return lambda value: dict(value)

    return factory


def _is_homogeneous_tuple(tp: Any) -> bool:
    """``tuple[X, ...]``: the models' arrays."""
    args = get_args(tp)
    return get_origin(tp) is tuple and len(args) == 2 and args[1] is Ellipsis


def _array_hook(conv: cattrs.Converter) -> Any:
    def structure(value: Any, tp: Any) -> Any:
        # A str (or a dict) is iterable too: without this, "abc" would become ("a", "b", "c").
        if not isinstance(value, list):
            raise TypeError(f"expected array, got {json_type(value)}")
        item_type = get_args(tp)[0]
        out = []
        errors = []
        for index, item in enumerate(value):
            try:
                out.append(conv.structure(item, item_type))
            except Exception as error:
                note = IterableValidationNote(f"Structuring {tp} @ index {index}", index, item_type)
                error.__notes__ = [*getattr(error, "__notes__", []), note]  # type: ignore[attr-defined]
                errors.append(error)
        if errors:
            raise IterableValidationError(f"While structuring {tp!r}", errors, tp)
        return tuple(out)

    return structure


def _is_literal(tp: Any) -> bool:
    return get_origin(tp) is Literal


def _literal(value: Any, tp: Any) -> Any:
    allowed = get_args(tp)
    choices = ", ".join(repr(a) for a in allowed)
    if isinstance(value, str):
        if value in allowed:
            return value
        raise ValueError(f"{value!r} is not one of {choices}")
    raise TypeError(f"expected one of {choices}, got {json_type(value)}")


@cache
def converter() -> cattrs.Converter:
    """The one converter of the SDK (built once)."""
    conv = cattrs.Converter(forbid_extra_keys=True)
    conv.register_structure_hook(str, _strict(str, "string"))
    conv.register_structure_hook(bool, _strict(bool, "boolean"))
    conv.register_structure_hook(int, _strict(int, "integer"))
    conv.register_structure_hook(float, _strict((int, float), "number"))  # type: ignore[arg-type]
    conv.register_structure_hook_func(_is_scalar_union, _scalar_union)
    conv.register_structure_hook_func(_is_literal, _literal)
    conv.register_structure_hook_func(_is_homogeneous_tuple, _array_hook(conv))
    conv.register_structure_hook_func(_is_open_mapping, _mapping_hook(conv))
    conv.register_unstructure_hook_factory(_is_open_mapping, _map_unstructure_factory(conv))

    def structure_factory(cls: type[Any]) -> Any:
        overrides: dict[str, Any] = {
            a.name: override(rename=wire_name(a.name)) for a in attrs.fields(cls)
        }
        generated = make_dict_structure_fn(cls, conv, **overrides)
        optional = frozenset(wire_name(a.name) for a in attrs.fields(cls) if a.default is None)

        def structure_object(value: Any, tp: Any) -> Any:
            # The generated function would fail on a non-dict with an AttributeError
            # or "argument of type 'int' is not iterable".
            if not isinstance(value, dict):
                raise TypeError(f"expected object, got {json_type(value)}")
            # ``None`` means "absent" in the models, but on the wire an explicit null is
            # not absent: the schemas reject it, and so must we (else it would vanish
            # on the way back out).
            # (A null for a required field fails in its own hook, naming the type.)
            nulls = [key for key, item in value.items() if item is None and key in optional]
            if nulls:
                raise NullFieldError(nulls)
            return generated(value, tp)

        return structure_object

    def unstructure_factory(cls: type[Any]) -> Any:
        overrides: dict[str, Any] = {
            a.name: override(rename=wire_name(a.name), omit_if_default=a.default is None)
            for a in attrs.fields(cls)
        }
        generated = make_dict_unstructure_fn(cls, conv, **overrides)
        if "api_version" not in attrs.fields_dict(cls):
            return generated

        def unstructure_record(model: Any) -> dict[str, Any]:
            # attrs wants fields with defaults last; the wire wants the envelope first.
            wire = generated(model)
            head = {key: wire[key] for key in _ENVELOPE if key in wire}
            return {**head, **{k: v for k, v in wire.items() if k not in head}}

        return unstructure_record

    conv.register_structure_hook_factory(attrs.has, structure_factory)
    conv.register_unstructure_hook_factory(attrs.has, unstructure_factory)
    return conv


def _is_open_mapping(tp: Any) -> bool:
    """``Mapping[K, V]`` fields are open maps: kept as plain dicts, checked by the schema."""
    origin = getattr(tp, "__origin__", None)
    return origin is Mapping or (origin is dict and bool(get_args(tp)))


def structure(data: Any, cls: type[T]) -> T:
    """Build a model from wire JSON; :class:`ModelError` lists every mismatch. A
    ``cls`` the converter cannot build (``structure(x, 1)``) is a ``TypeError``."""
    # Checked first: cattrs would put repr(cls) in its message (a 5,000-digit int fails).
    if not (isinstance(cls, type) or get_origin(cls) is not None or cls is Any):
        raise _not_a_model(cls)
    try:
        return converter().structure(data, cls)
    except StructureHandlerNotFoundError:
        raise _not_a_model(cls) from None
    except (
        ClassValidationError, IterableValidationError, NullFieldError, MapValidationError
    ) as group:  # fmt: skip
        raise ModelError(list(_problems(group, []))) from None
    except (TypeError, ValueError) as error:
        raise ModelError([Problem(str(error), code="model")]) from None


def _not_a_model(cls: object) -> TypeError:
    return TypeError(f"structure() cannot build a {short_repr(cls)}: not a model class")


def unstructure(model: Any) -> Any:
    """The wire JSON of a model (camelCase, ``None`` fields left out).

    The converter recurses into lists and dicts; a value too deep for that (or
    cyclic) is a :class:`~kernelindex_sdk.errors.NotJSON`, located by
    :func:`~kernelindex_sdk.reading.intake.json_problems` once the recursion has failed."""
    try:
        return converter().unstructure(model)
    except RecursionError:
        problems = json_problems(model) or [
            Problem("nested too deep to convert (or cyclic)", NestingTooDeep.code)
        ]
        raise NotJSON(problems) from None


def _problems(error: BaseException, path: list[str | int]) -> list[Problem]:
    """Flatten a cattrs error tree into located problems (cattrs' ``message @ path``)."""
    if isinstance(error, ClassValidationError | IterableValidationError):
        found: list[Problem] = []
        noted, others = error.group_exceptions()
        for inner, note in noted:
            step: str | int
            if isinstance(error, IterableValidationError):
                step = getattr(note, "index", 0)
            else:
                step = wire_name(getattr(note, "name", "?"))
            found.extend(_problems(inner, [*path, step]))
        for inner in others:
            found.extend(_problems(inner, path))
        return found
    if isinstance(error, ForbiddenExtraKeysError):
        return [
            Problem(f"unknown field {key!r}", code="model", pointer=pointer_of([*path, key]))
            for key in sorted(error.extra_fields)
        ]
    if isinstance(error, KeyError):
        return [
            Problem(
                f"missing required field {path[-1]!r}",
                code="model",
                pointer=pointer_of(path[:-1]),
            )
        ]
    if isinstance(error, NullFieldError):
        return [
            Problem("expected a value, got null", code="model", pointer=pointer_of([*path, key]))
            for key in error.keys
        ]
    if isinstance(error, MapValidationError):
        return [p for entry in error.errors for p in _problems(entry, path)]
    if isinstance(error, MapEntryError):
        return _problems(error.error, [*path, error.key])
    return [Problem(str(error), code="model", pointer=pointer_of(path))]
