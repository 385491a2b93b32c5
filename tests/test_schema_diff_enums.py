"""``schema diff`` on large enumerations (issue #29): linear, with the same answers.

The diff tries every value of an enum against the other side. python-jsonschema checks
``enum`` by comparing the instance with each member in turn, so that cost the square of
the enum's size (10,000 values: 14 s; 30,000: 225 s). The diff's own validator
(:func:`kernelindex_sdk.validating.engine.schema_validator`) now looks values up in a set of
:func:`~kernelindex_sdk.validating.engine.equality_key`\\ s. These tests hold it to the reference:

* the key equates exactly the values python-jsonschema's ``equal`` equates (``1`` and
  ``1.0`` alike, ``true`` and ``1`` not, arrays and objects by their members);
* the set-based ``enum`` accepts exactly what python-jsonschema's does;
* whole diffs of generated schemas with enums (an enum, ``const``\\ s in ``anyOf``,
  ``allOf`` of two enums, enums of array items) give the same report, witnesses
  included, with the member-by-member ``enum`` and with the set;
* a diff of a 2,000-value enum compares values member by member a bounded number of
  times per value (it counts comparisons, it does not time them);
* the witnesses too: each is proven by the reference engine with ``keyed_enums`` (the
  set look-up) and located by :meth:`~kernelindex_sdk.validating.engine.JsonschemaEngine.
  problem_pointers` (no messages, which list an enum's every member). Generated enum
  pairs, disjoint ones included, give the report the member-by-member engine and
  ``problems()`` gave; ``problem_pointers`` places problems where ``problems`` does;
  and the work of a diff whose every value is replaced (one finding per value) grows
  linearly: it counts function calls at two sizes, it does not time them; so does
  that of one whose records also hold more small enums than sets are kept (it counts
  the values keyed).

The figures before and after: ``benchmarks/bench_schema_diff.py``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import jsonschema._keywords
import jsonschema._utils
from hypothesis import given
from hypothesis import strategies as st
from strategies import law_settings

from kernelindex_sdk.schema.registry import SchemaRegistry
from kernelindex_sdk.schemadiff import diff, load, values, witness
from kernelindex_sdk.validating import engine

DRAFT = "https://json-schema.org/draft/2020-12/schema"

#: Few distinct numbers, so that generated enums share values and equal ones (``1``,
#: ``1.0``) meet; ``True``/``1`` and ``False``/``0`` must stay apart.
NUMBERS = [0, 1, -1, 2, 0.0, 1.0, -1.0, 0.5, 2.0, 1e20]
#: And integers a schema file may not hold (strict intake refuses them).
BEYOND_DOUBLES = [10**20, 2**53 + 1]


def _values(numbers: list[Any]) -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.sampled_from(numbers),
        st.sampled_from(["", "a", "b", "1", "true", "null"]),
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
        ),
        max_leaves=6,
    )


json_values = _values(NUMBERS + BEYOND_DOUBLES)
file_values = _values(NUMBERS)


def _member_by_member(schema: Any, *, formats: bool = True) -> Any:
    """The validator the diff used before: python-jsonschema's own ``enum``."""
    checker = engine._format_checker() if formats else None
    return engine._ecma_validator_class()(schema, format_checker=checker)


@given(st.lists(json_values, min_size=2, max_size=2))
@law_settings(300)
def test_the_key_equates_what_jsonschema_equates(pair: list[Any]) -> None:
    one, two = pair
    keys = engine.equality_key(one), engine.equality_key(two)
    assert None not in keys
    assert (keys[0] == keys[1]) == jsonschema._utils.equal(one, two)


def test_the_key_keeps_json_schema_s_distinctions() -> None:
    key = engine.equality_key
    assert key(1) == key(1.0) and key(0) == key(-0.0) and key(10**20) == key(1e20)
    assert key(True) != key(1) and key(False) != key(0) and key(None) != key(0)
    assert key(2**53 + 1) != key(float(2**53 + 1))
    assert key([1, True]) == key([1.0, True]) != key([True, 1])
    assert key({"a": [1]}) == key({"a": [1.0]}) != key({"a": [True]})
    assert key("1") != key(1)
    assert key(float("nan")) is None and key({1: 2}) is None and key(b"a") is None


@given(st.lists(json_values, max_size=8), st.lists(json_values, max_size=8))
@law_settings(300)
def test_the_enum_check_accepts_what_jsonschema_accepts(
    members: list[Any], others: list[Any]
) -> None:
    schema = {"enum": members, "items": {"enum": members[::-1]}}
    fast, slow = engine.schema_validator(schema), _member_by_member(schema)
    for instance in [*members, *others, [*members[:2]], float("nan"), b"a"]:
        assert fast.is_valid(instance) == slow.is_valid(instance), instance


def test_an_enum_that_cannot_be_keyed_is_compared_member_by_member() -> None:
    nan = float("nan")  # equal to nothing but itself (the very object), as python says
    for schema in ({"enum": [nan, 1]}, {"enum": [1, [2]]}, {"enum": [{"a": nan}]}):
        fast, slow = engine.schema_validator(schema), _member_by_member(schema)
        for instance in (nan, float("nan"), 1.0, True, [2.0], {"a": nan}, b"a"):
            assert fast.is_valid(instance) == slow.is_valid(instance), (schema, instance)


# --------------------------------------------------------------------------- whole diffs

#: A member's schema made from a list of values, in each of the forms the diff reads.
FORMS = ("enum", "consts", "allof", "items", "const")


def _member(form: str, listed: list[Any]) -> dict[str, Any]:
    if form == "enum":
        return {"enum": listed}
    if form == "consts":
        return {"anyOf": [{"const": v} for v in listed]} if listed else {"enum": []}
    if form == "allof":
        return {"allOf": [{"enum": listed}, {"enum": listed[1:] + listed[:1]}]}
    if form == "items":
        return {"type": "array", "items": {"enum": listed}}
    return {"const": listed[0]} if listed else {"enum": []}


def _schema_file(where: Path, member: dict[str, Any]) -> Path:
    schema = {"$schema": DRAFT, "type": "object", "properties": {"e": member}}
    where.write_text(json.dumps(schema), encoding="utf-8")
    return where


class _ReferenceWitnessEngine:
    """The witnesses' engine as it was: python-jsonschema's own ``enum``, and a
    record's problems located through :meth:`~engine.JsonschemaEngine.problems`."""

    def __init__(self, registry: SchemaRegistry, **_: Any) -> None:
        self._engine = engine.JsonschemaEngine(registry)

    def is_valid(self, schema_id: str, instance: Any) -> bool:
        return self._engine.is_valid(schema_id, instance)

    def problem_pointers(self, schema_id: str, instance: Any) -> list[str]:
        return [p.pointer for p in self._engine.problems(schema_id, instance)]


@contextmanager
def _member_by_member_enum() -> Iterator[None]:
    """The diff as it was before any enum was keyed: candidates and witnesses alike."""
    with (
        mock.patch.object(values, "schema_validator", _member_by_member),
        mock.patch.object(witness, "JsonschemaEngine", _ReferenceWitnessEngine),
    ):
        yield


@given(
    st.sampled_from(FORMS),
    st.lists(file_values, max_size=6),
    st.lists(file_values, max_size=6),
    st.sampled_from(FORMS),
)
@law_settings(100)
def test_a_diff_gives_the_report_it_gave_member_by_member(
    tmp_path_factory: Any, form: str, old: list[Any], new: list[Any], new_form: str
) -> None:
    where = tmp_path_factory.mktemp("enums")
    old_file = _schema_file(where / "old.schema.json", _member(form, old))
    new_file = _schema_file(where / "new.schema.json", _member(new_form, new))
    fast = diff(old_file, new_file, mode="full")
    with _member_by_member_enum():
        slow = diff(old_file, new_file, mode="full")
    assert fast.as_json() == slow.as_json()
    assert fast == slow


def test_a_large_enum_costs_a_bounded_number_of_comparisons_per_value(tmp_path: Path) -> None:
    """2,000 values, one swapped: the member-by-member ``enum`` compared about 4 million
    pairs (the square); now the few left (the witnesses' checks by the reference
    engine) stay under a hundred per value."""
    size = 2000
    words = [f"v{i}" for i in range(size)]
    old = _schema_file(tmp_path / "old.schema.json", {"enum": words})
    new = _schema_file(tmp_path / "new.schema.json", {"enum": [*words[1:], "extra"]})
    calls = 0
    compare = jsonschema._keywords.equal

    def counted(one: Any, two: Any) -> bool:
        nonlocal calls
        calls += 1
        return bool(compare(one, two))

    with mock.patch.object(jsonschema._keywords, "equal", counted):
        report = diff(old, new, mode="full")
    assert [(v.rule, v.witness) for v in report.violations] == [
        ("ENUM_VALUE_REMOVED", {"e": "v0"}),
        ("ENUM_VALUE_ADDED", {"e": "extra"}),
    ]
    assert calls < 100 * size, calls


# --------------------------------------------------------------------------- witnesses

#: Distinct values for enum pairs: strings, and numbers whose int and float forms are
#: the same member (``3`` and ``3.0``).
POOL = [*(f"v{i}" for i in range(30)), *range(10), *(float(i) for i in range(5, 15)), True, None]


@given(
    st.lists(st.sampled_from(POOL), min_size=1, max_size=40, unique=True),
    st.lists(st.sampled_from(POOL), min_size=1, max_size=40, unique=True),
    st.sampled_from(["enum", "items", "allof"]),
    st.booleans(),
)
@law_settings(100)
def test_generated_enum_pairs_give_the_report_they_gave_member_by_member(
    tmp_path_factory: Any, old: list[Any], new: list[Any], form: str, disjoint: bool
) -> None:
    """Old code against new on enum pairs, large and small, overlapping or disjoint
    (every old value gone: one finding per value, each with its witness)."""
    if disjoint:
        new = [v for v in new if not any(jsonschema._utils.equal(v, o) for o in old)] or ["x"]
    where = tmp_path_factory.mktemp("pairs")
    old_file = _schema_file(where / "old.schema.json", _member(form, old))
    new_file = _schema_file(where / "new.schema.json", _member(form, new))
    for policy in ("strict", "lenient"):
        fast = diff(old_file, new_file, mode="full", policy=policy)
        with _member_by_member_enum():
            slow = diff(old_file, new_file, mode="full", policy=policy)
        assert fast.as_json() == slow.as_json()
        assert fast == slow


@given(
    st.lists(file_values, min_size=1, max_size=8),
    st.dictionaries(st.sampled_from(["e", "f", "g", "h"]), json_values, max_size=4),
)
@law_settings(300)
def test_problem_pointers_are_where_problems_are(
    tmp_path_factory: Any, members: list[Any], record: Any
) -> None:
    """The pointers alone, from the set-keyed engine, are the pointers of the problems
    the reference engine reports (unknown members placed at the first of them)."""
    schema = {
        "$schema": DRAFT,
        "type": "object",
        "properties": {
            "e": {"enum": members},
            "f": {"type": "array", "items": {"enum": members}},
            "g": {"anyOf": [{"enum": members[:1]}, {"type": "string"}]},
        },
        "required": ["e"],
        "additionalProperties": False,
    }
    where = tmp_path_factory.mktemp("pointers") / "p.schema.json"
    where.write_text(json.dumps(schema), encoding="utf-8")
    registry = load(where).registry
    schema_id = registry.all_entries[0].id
    keyed = engine.JsonschemaEngine(registry, keyed_enums=True)
    reference = engine.JsonschemaEngine(registry)
    pointers = keyed.problem_pointers(schema_id, record)
    assert pointers == sorted({p.pointer for p in reference.problems(schema_id, record)})
    assert bool(pointers) == (not keyed.is_valid(schema_id, record))


def _calls(where: Path, size: int) -> int:
    """Function calls (Python and C) a full diff makes when every one of ``size``
    values of an enum is replaced: each is a finding with its own witness."""
    old = _schema_file(where / "old.schema.json", {"enum": [f"v{i}" for i in range(size)]})
    new = _schema_file(where / "new.schema.json", {"enum": [f"w{i}" for i in range(size)]})
    sides = load(old), load(new)
    count = 0

    def counted(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        count += 1

    sys.setprofile(counted)
    try:
        report = diff(*sides, mode="full")
    finally:
        sys.setprofile(None)
    assert [v.rule for v in report.violations] == ["ENUM_VALUE_REMOVED", "ENUM_VALUE_ADDED"]
    return count


def test_replacing_every_value_of_an_enum_costs_linear_work(tmp_path: Path) -> None:
    """400 and 800 values, every one replaced: twice the values, about twice the calls
    (before, each witness's ``enum`` check and message went through every member: 3.6
    times the calls, the square showing)."""
    _calls(tmp_path, 20)  # what happens once: the meta-schema, compiled validators
    small, large = _calls(tmp_path, 400), _calls(tmp_path, 800)
    assert large < 2.5 * small, (small, large)


def _keyings(where: Path, size: int, beside: int) -> int:
    """Values keyed (:func:`engine.equality_key`) by a full diff of an enum of ``size``
    values, every one replaced, in an object that also requires ``beside`` members of
    two-value enums: each witness record holds them all."""
    small = {f"p{j}": {"enum": ["a", "b"]} for j in range(beside)}
    for name, prefix in (("old", "v"), ("new", "w")):
        words = [f"{prefix}{i}" for i in range(size)]
        schema = {
            "$schema": DRAFT,
            "type": "object",
            "properties": {"e": {"enum": words}, **small},
            "required": ["e", *small],
        }
        (where / f"{name}.schema.json").write_text(json.dumps(schema), encoding="utf-8")
    sides = load(where / "old.schema.json"), load(where / "new.schema.json")
    count = 0
    key = engine.equality_key

    def counted(value: Any) -> Any:
        nonlocal count
        count += 1
        return key(value)

    with mock.patch.object(engine, "equality_key", counted):
        report = diff(*sides, mode="full")
    assert [v.rule for v in report.violations] == ["ENUM_VALUE_REMOVED", "ENUM_VALUE_ADDED"]
    return count


def test_many_small_enums_do_not_push_a_large_one_out(tmp_path: Path) -> None:
    """More small enums in each record than sets are kept (64): the large enum's set
    must survive them, not be keyed again at every record (before, the oldest set was
    dropped first, the large one among them: 2.9 times the keyings for twice the
    values, the square showing)."""
    small, large = _keyings(tmp_path, 120, 66), _keyings(tmp_path, 240, 66)
    assert large < 2.5 * small, (small, large)
