"""Frozen value classes that cost nothing to define at import, and are still dataclasses
to :mod:`dataclasses`.

A frozen, slotted dataclass compiles its ``__init__``, ``__repr__``, ``__eq__``,
``__hash__``, ``__setattr__`` and ``__delattr__`` from source when its module is
imported, a visible cost for each class on ``kernelindex validate one.json``'s
start-up (benchmarks/README.md). Value types on that path — the public ones too
(``Problem``, ``Document``, ``Item``, ``SchemaEntry``, ``SchemaRegistry``) — derive
from :class:`FrozenValue` instead and write their ``__init__``; they behave as the
frozen dataclass would: equality and hashing by their compared fields in order, the same
``repr``, ``dataclasses.FrozenInstanceError`` on assignment, ``__slots__``,
``__match_args__``, keyword arguments and defaults, and pickling by their fields.

The fields are the class's own annotations, in order; :attr:`FrozenValue._field_options_`
gives the ``dataclasses.field`` arguments of those that have any (``repr=False``,
``compare=False``, ``init=False``, ``default_factory``); defaults are the ``__init__``'s.
``__dataclass_fields__`` and ``__dataclass_params__`` are made on first access, from a
real dataclass declared with those fields (:func:`dataclass_twin`), so
``dataclasses.fields``, ``replace``, ``asdict``, ``astuple`` and ``is_dataclass`` work
as documented — at that dataclass's cost, paid only then. tests/test_frozenvalue.py
holds each class to its twin.
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import attrgetter
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn, TypeVar

if TYPE_CHECKING:
    from dataclasses import Field


class _Factory:
    """The default of an ``__init__`` parameter whose field has a ``default_factory``;
    shown as the dataclass's ``__init__`` shows it."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"


#: A FrozenValue subclass, for :meth:`FrozenValue._replace`'s type.
_Value = TypeVar("_Value", bound="FrozenValue")

#: ``param: T = FACTORY`` in an ``__init__``: make the field's default from its factory.
FACTORY: Any = _Factory()

#: The attributes :mod:`dataclasses` reads, made on first access.
_DATACLASS_ATTRIBUTES = ("__dataclass_fields__", "__dataclass_params__")


class _FromTwin:
    """A class attribute taken from the class's :func:`dataclass_twin` when first read,
    then stored on the class in its place."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, instance: object, owner: type[FrozenValue]) -> Any:
        value = getattr(dataclass_twin(owner), self.name)
        setattr(owner, self.name, value)
        return value


class FrozenValue:
    """Base of a frozen value class: declare ``__slots__`` and ``__match_args__`` (the
    ``__init__`` parameters), annotate every field in order, and write an ``__init__``
    that sets them with ``object.__setattr__``."""

    __slots__ = ()
    __match_args__: ClassVar[tuple[str, ...]] = ()
    #: ``dataclasses.field`` arguments by field name, for the fields that have any.
    _field_options_: ClassVar[Mapping[str, Mapping[str, Any]]] = {}
    #: The fields compared and hashed, and the fields in the ``repr`` (set per class).
    _compared_: ClassVar[tuple[str, ...]] = ()
    _shown_: ClassVar[tuple[str, ...]] = ()
    _key_: ClassVar[Any]
    if TYPE_CHECKING:  # made on first access (_FromTwin); typed so that replace() checks
        __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        names = tuple(_annotations(cls)) or cls.__match_args__
        options = cls._field_options_
        cls._compared_ = tuple(n for n in names if options.get(n, {}).get("compare", True))
        cls._shown_ = tuple(n for n in names if options.get(n, {}).get("repr", True))
        compared = cls._compared_
        # A tuple of the compared fields, as the dataclass's __eq__ and __hash__ build it.
        if len(compared) > 1:
            cls._key_ = attrgetter(*compared)
        elif compared:
            cls._key_ = staticmethod(lambda value, _get=attrgetter(compared[0]): (_get(value),))
        else:
            cls._key_ = staticmethod(lambda value: ())
        for attribute in _DATACLASS_ATTRIBUTES:
            setattr(cls, attribute, _FromTwin(attribute))

    def _fields(self) -> tuple[Any, ...]:
        return self._key_(self)  # type: ignore[no-any-return]

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._key_(self) == other._key_(other)  # type: ignore[no-any-return]
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._key_(self))

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._shown_)
        return f"{self.__class__.__qualname__}({fields})"

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise _frozen(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> NoReturn:
        raise _frozen(f"cannot delete field {name!r}")

    def _replace(self: _Value, **changes: Any) -> _Value:
        """A copy with ``changes``, as ``dataclasses.replace`` makes it (the other
        ``__init__`` arguments from this value), without importing :mod:`dataclasses`'
        machinery: the SDK's own copies on the validate path use this."""
        for name in self.__match_args__:
            if name not in changes:
                changes[name] = getattr(self, name)
        return self.__class__(**changes)

    def __reduce__(self) -> tuple[type[FrozenValue], tuple[Any, ...]]:
        # Pickled by its __init__'s arguments: the parallel pipeline sends thousands.
        return (self.__class__, tuple([getattr(self, name) for name in self.__match_args__]))


def dataclass_twin(cls: type[FrozenValue]) -> type[Any]:
    """The frozen, slotted dataclass ``cls`` stands for: same name, fields (annotations,
    in order), field options and ``__init__`` defaults. Its ``__dataclass_fields__`` and
    ``__dataclass_params__`` become ``cls``'s; the tests compare the two classes'
    behaviour."""
    import dataclasses

    init = cls.__init__
    code = init.__code__
    parameters = code.co_varnames[1 : code.co_argcount]
    defaults = dict(zip(parameters[len(parameters) - len(init.__defaults__ or ()) :],
                        init.__defaults__ or (), strict=True))  # fmt: skip
    fields: list[Any] = []
    for name, annotation in _annotations(cls).items():
        options = dict(cls._field_options_.get(name, {}))
        if name in defaults and "default_factory" not in options:
            options["default"] = defaults[name]
        fields.append((name, annotation, dataclasses.field(**options)))
    twin = dataclasses.make_dataclass(
        cls.__name__, fields, frozen=True, slots=True, namespace={"__doc__": cls.__doc__}
    )
    twin.__module__ = cls.__module__
    twin.__qualname__ = cls.__qualname__
    return twin


def _annotations(cls: type) -> dict[str, Any]:
    """The class's own annotations: its fields, in order."""
    # Not inspect.get_annotations: importing inspect is what start-up avoids.
    annotations: dict[str, Any] = cls.__dict__.get("__annotations__", {})  # noqa: RUF063
    return annotations


def _frozen(message: str) -> Exception:
    from dataclasses import FrozenInstanceError

    return FrozenInstanceError(message)
