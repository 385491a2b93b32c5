"""The value classes that left ``@dataclass`` for start-up's sake behave as the
dataclasses they were: each is held to a real frozen (or, for ``Tally``, mutable)
slotted dataclass declared with the same fields."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kernelindex_sdk.pipeline import Tally
from kernelindex_sdk.sources import FileSource, StdinSource, StoreSource
from kernelindex_sdk.versionstatus import VersionStatus

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
