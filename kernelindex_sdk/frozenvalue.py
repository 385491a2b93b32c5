"""Frozen value classes that cost nothing to define at import.

A frozen, slotted dataclass compiles its ``__init__``, ``__repr__``, ``__eq__``,
``__hash__``, ``__setattr__`` and ``__delattr__`` from source when its module is
imported: ~3M instructions a class, about 1 % of ``kernelindex validate one.json`` each
(benchmarks/README.md). Internal value types on that path derive from
:class:`FrozenValue` instead and write their ``__init__``; they behave as the frozen
dataclass did — equality and hashing by their fields in order, the same ``repr``,
``dataclasses.FrozenInstanceError`` on assignment, ``__slots__``, ``__match_args__``, and
pickling by their fields (tests/test_frozenvalue.py holds them to the dataclass).
"""

from __future__ import annotations

from typing import Any, ClassVar, NoReturn


class FrozenValue:
    """Base of a frozen value class whose fields are its ``__match_args__`` (and its
    ``__slots__``); its ``__init__`` sets them with ``object.__setattr__``."""

    __slots__ = ()
    __match_args__: ClassVar[tuple[str, ...]] = ()

    def _fields(self) -> tuple[Any, ...]:
        return tuple([getattr(self, name) for name in self.__match_args__])

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._fields() == other._fields()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__match_args__)
        return f"{self.__class__.__qualname__}({fields})"

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise _frozen(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> NoReturn:
        raise _frozen(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[type[FrozenValue], tuple[Any, ...]]:
        # Pickled by its fields: the parallel pipeline sends thousands.
        return (self.__class__, self._fields())


def _frozen(message: str) -> Exception:
    from dataclasses import FrozenInstanceError

    return FrozenInstanceError(message)
