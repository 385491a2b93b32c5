"""``schema diff`` of unions: a ``oneOf`` proven disjoint is compared branch by branch.

* **Disjointness** (:mod:`kernelindex_sdk.schemadiff.unions`): members that share no
  value (a member one requires and another forbids, disjoint enums, ranges, item
  schemas) make a ``oneOf`` the union of its branches; members that may share one
  (``1`` and ``1.0``, two open objects) keep it a constraint compared whole.
* **Verdicts**: a disjoint ``oneOf`` gaining a branch is backward compatible (and a
  forward violation with a witness); one losing a branch is a backward violation with
  a witness; an overlapping one changed stays undecided.
* **Law**: normalizing a ``oneOf`` keeps what it accepts — judged by python-jsonschema
  on the original and on the normal form written back, over values made to hit the
  members' edges — and ``diff(S, S)`` is empty.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from strategies import law_settings

from kernelindex_sdk.schemadiff import diff
from kernelindex_sdk.schemadiff._forms import Norm, to_schema
from kernelindex_sdk.schemadiff.normal import Normalizer
from kernelindex_sdk.schemadiff.unions import branches_disjoint, exclusive

URI = "https://example.com/u.schema.json"


def _norm(schema: Any) -> Norm:
    return Normalizer(
        {URI: {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}}
    ).document(URI)


def _members(*members: Any) -> list[Norm]:
    return [_norm(m) for m in members]


def _is_union(schema: Any) -> bool:
    """Whether the normal form of ``schema`` holds no ``oneOf`` compared whole."""
    return not any(o.keyword == "oneOf" for b in _norm(schema).branches for o in b.opaque)


CLOSED_A = {
    "type": "object",
    "properties": {"a": {"type": "string"}},
    "required": ["a"],
    "additionalProperties": False,
}
CLOSED_B = {
    "type": "object",
    "properties": {"b": {"type": "integer"}},
    "required": ["b"],
    "additionalProperties": False,
}
CLOSED_C = {
    "type": "object",
    "properties": {"c": {"type": "boolean"}},
    "required": ["c"],
    "additionalProperties": False,
}


# --------------------------------------------------------------------------- disjointness


@pytest.mark.parametrize(
    "members",
    [
        # One requires a member the other's closed object does not declare.
        [CLOSED_A, CLOSED_B],
        # A member's schema false.
        [
            {"type": "object", "required": ["a"]},
            {"type": "object", "properties": {"a": False}},
        ],
        # A member both require, of disjoint types.
        [
            {"type": "object", "properties": {"v": {"type": "string"}}, "required": ["v"]},
            {"type": "object", "properties": {"v": {"type": "integer"}}, "required": ["v"]},
        ],
        # An enum against a pattern that rejects each of its values.
        [{"enum": ["always", "never"]}, {"type": "string", "pattern": "^\\$\\{\\{"}],
        # Disjoint ranges, the integers counted as integers.
        [{"type": "integer", "maximum": 0.5}, {"type": "integer", "minimum": 1}],
        [{"type": "number", "exclusiveMaximum": 0}, {"type": "number", "minimum": 0}],
        # Lengths.
        [{"type": "string", "maxLength": 2}, {"type": "string", "minLength": 3}],
        # Arrays that must hold an item, of disjoint items.
        [
            {"type": "array", "items": {"type": "string"}, "minItems": 1},
            {"type": "array", "items": {"type": "integer"}, "minItems": 1},
        ],
    ],
)
def test_members_that_share_no_value_are_exclusive(members: list[Any]) -> None:
    assert exclusive(_members(*members))
    assert _is_union({"oneOf": members})


@pytest.mark.parametrize(
    "members",
    [
        # 1 and 1.0 are one value.
        [{"const": 1}, {"const": 1.0}],
        # Two open objects: {"a": "", "b": 0} matches both.
        [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]},
        ],
        # Closed, but neither requires anything: {} matches both.
        [
            {"type": "object", "properties": {"a": {}}, "additionalProperties": False},
            {"type": "object", "properties": {"b": {}}, "additionalProperties": False},
        ],
        # Arrays that may be empty.
        [
            {"type": "array", "items": {"type": "string"}},
            {"type": "array", "items": {"type": "integer"}},
        ],
        # The integer 1 is in both (0.5 < 1 <= 1).
        [{"type": "integer", "minimum": 0.5}, {"type": "number", "maximum": 1}],
        # A pattern does not tell strings apart.
        [{"type": "string", "pattern": "^a"}, {"type": "string", "pattern": "b$"}],
    ],
)
def test_members_that_may_share_a_value_are_not(members: list[Any]) -> None:
    assert not exclusive(_members(*members))
    assert not _is_union({"oneOf": members})


def test_many_closed_members_told_apart_by_what_each_requires() -> None:
    """64 members, each requiring a member no other declares: an index of declared names
    proves them disjoint (no pairs compared, so no budget runs out); a member that also
    declares another's required member is told apart pair by pair, or not at all."""
    members = [
        {
            "type": "object",
            "properties": {f"m{i}": {"type": "string"}, "if": {"type": "string"}},
            "required": [f"m{i}"],
            "additionalProperties": False,
        }
        for i in range(64)
    ]
    assert _is_union({"oneOf": members})
    members[1]["properties"]["m0"] = {"type": "integer"}
    assert _is_union({"oneOf": members[:8]})
    members[1]["required"] = []
    assert _is_union({"oneOf": members[:8]})  # members 0 and 1 hold m0 of other types
    members[1]["properties"]["m0"] = {"type": "string"}
    assert not _is_union({"oneOf": members[:8]})  # {"m0": ""} matches members 0 and 1


def test_a_proof_stops_at_its_depth() -> None:
    """A cyclic normal form is not followed for ever: beyond the depth nothing is proven."""
    nested: Any = {"type": "string"}
    other: Any = {"type": "integer"}
    for _ in range(8):
        nested = {"type": "object", "properties": {"v": nested}, "required": ["v"]}
        other = {"type": "object", "properties": {"v": other}, "required": ["v"]}
    x, y = _norm(nested).branches[0], _norm(other).branches[0]
    assert not branches_disjoint(x, y)
    assert branches_disjoint(x, y, depth=20)


# --------------------------------------------------------------------------- verdicts


def _write(tmp_path: Path, name: str, shape: Any) -> Path:
    path = tmp_path / name / "shape.schema.json"
    path.parent.mkdir()
    schema = {
        "type": "object",
        "properties": {"shape": shape},
        "required": ["shape"],
        "additionalProperties": False,
    }
    path.write_text(json.dumps(schema), encoding="utf-8")
    return path


def _witnesses_hold(old: Path, new: Path, mode: str) -> None:
    report = diff(old, new, mode=mode)
    judges = {
        side: Draft202012Validator(json.loads(p.read_text()), format_checker=None)
        for side, p in (("old", old), ("new", new))
    }
    for violation in report.violations:
        other = "new" if violation.accepted_by == "old" else "old"
        assert judges[violation.accepted_by].is_valid(violation.witness), violation
        assert not judges[other].is_valid(violation.witness), violation


def test_a_disjoint_one_of_gaining_a_branch_is_backward_compatible(tmp_path: Path) -> None:
    old = _write(tmp_path, "old", {"oneOf": [CLOSED_A, CLOSED_B]})
    new = _write(tmp_path, "new", {"oneOf": [CLOSED_A, CLOSED_B, CLOSED_C]})
    backward = diff(old, new, mode="backward")
    assert backward.exit_status() == 0, backward
    forward = diff(old, new, mode="forward")
    assert forward.exit_status() == 1, forward
    assert {v.witness["shape"].get("c") for v in forward.violations} <= {True, False}
    _witnesses_hold(old, new, "full")


def test_a_disjoint_one_of_losing_a_branch_is_a_violation(tmp_path: Path) -> None:
    old = _write(tmp_path, "old", {"oneOf": [CLOSED_A, CLOSED_B, CLOSED_C]})
    new = _write(tmp_path, "new", {"oneOf": [CLOSED_A, CLOSED_B]})
    backward = diff(old, new, mode="backward")
    assert backward.exit_status() == 1, backward
    assert all("c" in v.witness["shape"] for v in backward.violations)
    assert diff(old, new, mode="forward").exit_status() == 0
    _witnesses_hold(old, new, "full")


def test_a_branch_matched_by_its_required_member_is_walked_against_its_own(
    tmp_path: Path,
) -> None:
    """Only new's ``b`` branch can hold old's ``b`` objects (the others forbid ``b``), so
    its change is a violation, not a doubt about which branch covers it."""
    narrowed = {**CLOSED_B, "properties": {"b": {"type": "integer", "maximum": 9}}}
    old = _write(tmp_path, "old", {"oneOf": [CLOSED_A, CLOSED_B, CLOSED_C]})
    new = _write(tmp_path, "new", {"oneOf": [CLOSED_A, narrowed, CLOSED_C]})
    backward = diff(old, new, mode="backward")
    assert [v.rule for v in backward.violations] == ["BOUND_TIGHTENED"], backward
    assert not backward.undecided
    _witnesses_hold(old, new, "backward")


def test_an_overlapping_one_of_changed_stays_undecided(tmp_path: Path) -> None:
    def member(name: str, limit: int) -> Any:
        return {
            "type": "object",
            "properties": {name: {"type": "string", "maxLength": limit}},
            "additionalProperties": False,
        }

    old = _write(tmp_path, "old", {"oneOf": [member("a", 3), member("b", 3)]})
    new = _write(tmp_path, "new", {"oneOf": [member("a", 4), member("b", 3)]})
    report = diff(old, new, mode="backward")
    assert report.exit_status() == 3, report
    assert any("oneOf" in u.reason for u in report.undecided)


# --------------------------------------------------------------------------- the law

_STRINGS = ["a", "b", "", "ab", "${{ x }}"]
_NUMBERS = [-1, 0, 0.5, 1, 1.0, 1.5, 2]
_LEAVES: list[Any] = [*_STRINGS, *_NUMBERS, True, None]
_KEYS = ("kind", "x", "y")


def _pool() -> list[Any]:
    """Values at the members' edges: every leaf, short arrays, and objects of every
    subset of the keys with each leaf kind."""
    values: list[Any] = [*_LEAVES, [], ["a"], [1], ["a", 1]]
    for size in range(len(_KEYS) + 1):
        for keys in itertools.combinations(_KEYS, size):
            for leaf in ("a", "b", 1, True):
                values.append(dict.fromkeys(keys, leaf))
    return values


_leaf_schema = st.one_of(
    st.builds(lambda v: {"const": v}, st.sampled_from(["a", "b", 1, 1.0, True])),
    st.builds(lambda t: {"type": t}, st.sampled_from(["string", "integer", "boolean"])),
    st.just({}),
    st.just(False),
)


@st.composite
def _member(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["string", "number", "object", "array", "const"]))
    if kind == "string":
        return draw(
            st.one_of(
                st.builds(
                    lambda vs: {"type": "string", "enum": vs},
                    st.lists(st.sampled_from(_STRINGS), min_size=1, max_size=3, unique=True),
                ),
                st.just({"type": "string", "pattern": "^\\$\\{\\{"}),
                st.builds(
                    lambda lo, hi: {"type": "string", "minLength": lo, "maxLength": hi},
                    st.integers(0, 2),
                    st.integers(0, 3),
                ),
            )
        )
    if kind == "number":
        out: dict[str, Any] = {"type": draw(st.sampled_from(["integer", "number"]))}
        for keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if draw(st.booleans()):
                out[keyword] = draw(st.sampled_from(_NUMBERS))
        return out
    if kind == "array":
        return {
            "type": "array",
            "items": draw(_leaf_schema),
            "minItems": draw(st.integers(0, 1)),
        }
    if kind == "const":
        return {"const": draw(st.sampled_from(_LEAVES))}
    names = draw(st.lists(st.sampled_from(_KEYS), max_size=3, unique=True))
    out = {
        "type": "object",
        "properties": {n: draw(_leaf_schema) for n in names},
        "required": draw(st.lists(st.sampled_from(_KEYS), max_size=2, unique=True)),
    }
    if draw(st.booleans()):
        out["additionalProperties"] = False
    return out


@law_settings(60)
@given(members=st.lists(_member(), min_size=2, max_size=4))
def test_normalizing_a_one_of_keeps_what_it_accepts(members: list[Any]) -> None:
    schema = {"oneOf": members}
    original = Draft202012Validator(schema)
    written = Draft202012Validator(to_schema(_norm(schema)))
    for value in _pool():
        assert original.is_valid(value) == written.is_valid(value), (
            value,
            to_schema(_norm(schema)),
        )


@law_settings(20)
@given(members=st.lists(_member(), min_size=2, max_size=3))
def test_a_union_schema_diffed_with_itself_is_compatible(
    tmp_path_factory: pytest.TempPathFactory, members: list[Any]
) -> None:
    folder = tmp_path_factory.mktemp("same")
    path = _write(folder, "s", {"oneOf": members})
    assert diff(path, path, mode="full").exit_status() == 0
