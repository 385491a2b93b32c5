"""The value classes that left ``@dataclass`` for start-up's sake behave as the
dataclasses they were: each is held to a real frozen (or, for ``Tally``, mutable)
slotted dataclass declared with the same fields."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kernelindex_sdk.errors import Problem
from kernelindex_sdk.reading.intake import Document
from kernelindex_sdk.reading.sources import FileSource, StdinSource, StoreSource
from kernelindex_sdk.schema.registry import SchemaEntry, SchemaRegistry
from kernelindex_sdk.schema.versionstatus import VersionStatus
from kernelindex_sdk.validating.pipeline import Tally
from kernelindex_sdk.validating.validation import Item, RecordRef

FROZEN: list[type[Any]] = [FileSource, StdinSource, StoreSource, VersionStatus]


def _twin(cls: type[Any], *, frozen: bool = True) -> type[Any]:
    """The dataclass ``cls`` was: same name, fields and defaults."""
    defaults = cls.__init__.__defaults__ or ()
    names = cls.__match_args__
    fields: list[Any] = [
        (name, Any) if i < len(names) - len(defaults) else
        (name, Any, dataclasses.field(default=defaults[i - len(names) + len(defaults)]))
        for i, name in enumerate(names)
    ]  # fmt: skip
    twin = dataclasses.make_dataclass(cls.__name__, fields, frozen=frozen, slots=True)
    twin.__qualname__ = cls.__qualname__
    return twin


values = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5))


@pytest.mark.parametrize("cls", [*FROZEN, Tally], ids=lambda c: c.__name__)
@given(data=st.data())
def test_a_value_class_behaves_as_its_dataclass(cls: type[Any], data: st.DataObject) -> None:
    frozen = cls is not Tally
    twin = _twin(cls, frozen=frozen)
    n = len(cls.__match_args__)
    a, b = (
        data.draw(st.lists(values, min_size=n, max_size=n)),
        data.draw(st.lists(values, min_size=n, max_size=n)),
    )
    mine, theirs = cls(*a), twin(*a)
    assert repr(mine) == repr(theirs)
    assert (mine == cls(*b)) == (theirs == twin(*b))
    assert mine != theirs and mine.__eq__(theirs) is NotImplemented
    assert cls.__match_args__ == twin.__match_args__
    assert not hasattr(mine, "__dict__")
    assert cls(*a) == cls(*a)
    assert copy.deepcopy(mine) == mine
    if frozen:
        assert hash(mine) == hash(theirs) == hash(cls(*a))
        assert pickle.loads(pickle.dumps(mine)) == mine
        for name in cls.__match_args__:
            with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field"):
                setattr(mine, name, 1)
            with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field"):
                delattr(mine, name)
        with pytest.raises(dataclasses.FrozenInstanceError):
            mine.other = 1
    else:
        assert cls.__hash__ is None and twin.__hash__ is None
        setattr(mine, cls.__match_args__[0], 5)
        assert getattr(mine, cls.__match_args__[0]) == 5
        with pytest.raises(AttributeError):
            mine.other = 1


def test_keywords_and_defaults_are_the_dataclasses() -> None:
    assert FileSource(path="a", jsonl=True) == FileSource("a", True, None)
    assert StdinSource() == StdinSource(None, "<stdin>")
    assert VersionStatus("v").describe() == "served"
    assert Tally() == Tally(0, 0, 0, 0)
    match FileSource("a", False, 3):
        case FileSource(path, jsonl, size):
            assert (path, jsonl, size) == ("a", False, 3)


# ------------------------------------------------------------ the public value classes
# Problem, Document, SchemaEntry, SchemaRegistry and Item were frozen, slotted
# dataclasses, and docs/design.md promises dataclasses.replace on them. Each is held to
# the dataclass it was, declared here as it was declared (git show 6263904).


@dataclasses.dataclass(frozen=True, slots=True)
class _Problem:
    message: str
    code: str = "invalid"
    pointer: str = ""
    source: str | None = None
    line: int | None = None
    column: int | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class _Document:
    source: str
    line: int | None
    value: Any


@dataclasses.dataclass(frozen=True, slots=True)
class _SchemaEntry:
    api_version: str
    kind: str
    id: str
    path: Path
    contents: Mapping[str, Any] = dataclasses.field(repr=False, compare=False)


@dataclasses.dataclass(frozen=True, slots=True)
class _SchemaRegistry:
    entries: tuple[SchemaEntry, ...]
    support: tuple[SchemaEntry, ...]
    _routes: Mapping[tuple[str, str], SchemaEntry] = dataclasses.field(repr=False, compare=False)
    statuses: Mapping[str, VersionStatus] = dataclasses.field(default_factory=dict, compare=False)
    _lazy: dict[str, Any] = dataclasses.field(
        default_factory=dict, init=False, repr=False, compare=False
    )


@dataclasses.dataclass(frozen=True, slots=True)
class _Item:
    source: str
    line: int | None
    pointer: str
    kind: str | None
    name: str | None
    problems: tuple[Problem, ...] = ()
    records: tuple[RecordRef, ...] = ()
    unreadable: bool = False
    value: Any = dataclasses.field(default=None, compare=False, repr=False)


PUBLIC: list[tuple[type[Any], type[Any]]] = [
    (Problem, _Problem),
    (Document, _Document),
    (SchemaEntry, _SchemaEntry),
    (SchemaRegistry, _SchemaRegistry),
    (Item, _Item),
]
_FIELD_ATTRIBUTES = (
    "name", "type", "default", "default_factory", "init", "repr", "hash", "compare",
    "metadata", "kw_only",
)  # fmt: skip


def _field_facts(cls: type[Any]) -> list[tuple[Any, ...]]:
    return [
        tuple(getattr(f, attribute) for attribute in _FIELD_ATTRIBUTES)
        for f in cls.__dataclass_fields__.values()
    ]


#: Slots a public class has beyond its dataclass's fields, none of them a field:
#: ``Document.written``, the intake's bytes of the value, and ``Document.shared``, the
#: tail its last members came from (neither compared, shown, pickled or set by the
#: constructor; see its docstring).
EXTRA_SLOTS: dict[type[Any], tuple[str, ...]] = {Document: ("written", "shared", "offered")}


@pytest.mark.parametrize(("cls", "twin"), PUBLIC, ids=lambda c: c.__name__)
def test_a_public_class_is_the_dataclass_it_was_to_dataclasses(
    cls: type[Any], twin: type[Any]
) -> None:
    assert dataclasses.is_dataclass(cls)
    assert _field_facts(cls) == _field_facts(twin)
    assert repr(cls.__dataclass_params__) == repr(twin.__dataclass_params__)
    assert cls.__match_args__ == twin.__match_args__
    assert cls.__slots__ == (*twin.__slots__, *EXTRA_SLOTS.get(cls, ()))
    mine, theirs = inspect.signature(cls).parameters, inspect.signature(twin).parameters
    assert [(p.name, p.kind, repr(p.default)) for p in mine.values()] == [
        (p.name, p.kind, repr(p.default)) for p in theirs.values()
    ]


field_values = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=3), st.tuples(st.integers())
)


@pytest.mark.parametrize(("cls", "twin"), PUBLIC, ids=lambda c: c.__name__)
@given(data=st.data())
def test_a_public_class_behaves_as_its_dataclass(
    cls: type[Any], twin: type[Any], data: st.DataObject
) -> None:
    names = [f.name for f in dataclasses.fields(twin) if f.init]
    required = [f.name for f in dataclasses.fields(twin) if f.init and _no_default(f)]
    chosen = data.draw(st.fixed_dictionaries(
        {name: field_values for name in required},
        optional={name: field_values for name in names if name not in required},
    ))  # fmt: skip
    other = data.draw(st.fixed_dictionaries({name: field_values for name in required}))
    positional = [chosen[name] for name in names if name in chosen][: len(required)]
    mine, theirs = cls(**chosen), twin(**chosen)
    assert cls(*positional) == cls(**dict(zip(names, positional, strict=False)))
    assert repr(mine) == repr(theirs).replace("_" + cls.__name__ + "(", cls.__name__ + "(", 1)
    assert (mine == cls(**other)) == (theirs == twin(**other))
    assert hash(mine) == hash(theirs)
    assert mine != theirs
    assert dataclasses.asdict(mine) == dataclasses.asdict(theirs)
    assert dataclasses.astuple(mine) == dataclasses.astuple(theirs)
    changes = data.draw(st.fixed_dictionaries({}, optional={name: field_values for name in names}))
    replaced = dataclasses.replace(mine, **changes)
    assert type(replaced) is cls
    assert dataclasses.astuple(replaced) == dataclasses.astuple(
        dataclasses.replace(theirs, **changes)
    )
    # The SDK's own copies (FrozenValue._replace) are dataclasses.replace's.
    mine_replaced = mine._replace(**changes)
    assert type(mine_replaced) is cls
    assert dataclasses.astuple(mine_replaced) == dataclasses.astuple(replaced)
    assert pickle.loads(pickle.dumps(mine)) == mine
    assert copy.deepcopy(mine) == mine
    assert not hasattr(mine, "__dict__")
    assert _orjson_outcome(mine) == _orjson_outcome(theirs)  # orjson reads dataclasses
    for name in cls.__slots__:
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field"):
            setattr(mine, name, 1)
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field"):
            delattr(mine, name)


def _orjson_outcome(value: Any) -> object:
    orjson = pytest.importorskip("orjson")
    try:
        return orjson.dumps(value)
    except TypeError as error:  # orjson.JSONEncodeError: an int beyond 64 bits
        return str(error)


def _no_default(field: dataclasses.Field[Any]) -> bool:
    return field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING


def test_a_registry_gets_its_own_statuses_and_cache() -> None:
    a, b = SchemaRegistry((), (), {}), SchemaRegistry((), (), {})
    assert a.statuses == {} and a.statuses is not b.statuses and a._lazy is not b._lazy
    with pytest.raises(ValueError, match="init=False"):
        dataclasses.replace(a, _lazy={})
    assert dataclasses.replace(a, statuses=None).statuses is None
    assert _SchemaRegistry((), (), {}, None).statuses is None


def test_the_public_classes_match_as_before() -> None:
    match Problem("m", line=3):
        case Problem(message, code, pointer, source, line, column):
            assert (message, code, pointer, source, line, column) == (
                "m",
                "invalid",
                "",
                None,
                3,
                None,
            )
    match Item("a", 1, "", "Run", None):
        case Item(source, line, pointer, kind, name, problems):
            assert (source, line, pointer, kind, name, problems) == ("a", 1, "", "Run", None, ())
