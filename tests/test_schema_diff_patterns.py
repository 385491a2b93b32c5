"""``schema diff`` of ``patternProperties``, compared member by member.

A member's schema is its ``properties`` entry and every pattern whose regex matches its
name, else ``additionalProperties`` (:mod:`kernelindex_sdk.schemadiff.patterns`). Here:
chosen pairs (a violation through a pattern, a loosened pattern schema, a declared
name a pattern covers, patterns added and removed, a regex whose reading is not
sure), the regex answers themselves, and drawn pairs judged by python-jsonschema as
``test_schema_diff_differential.py`` judges its pairs: every witness as claimed, no
compatible verdict with a counterexample among values over names the regexes match.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from strategies import law_settings

from kernelindex_sdk.schemadiff import diff
from kernelindex_sdk.schemadiff._forms import to_schema
from kernelindex_sdk.schemadiff.normal import Normalizer
from kernelindex_sdk.schemadiff.patterns import matches, names

D20 = "https://json-schema.org/draft/2020-12/schema"


def _write(folder: Path, name: str, schema: Any) -> Path:
    side = folder / name
    side.mkdir(parents=True, exist_ok=True)
    path = side / "s.schema.json"
    path.write_text(json.dumps({"$schema": D20, **schema}), encoding="utf-8")
    return path


def _diff(tmp_path: Path, old: Any, new: Any, mode: str = "backward") -> Any:
    return diff(_write(tmp_path, "old", old), _write(tmp_path, "new", new), mode=mode)


def _closed(patterns: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"type": "object", "patternProperties": patterns, "additionalProperties": False, **more}


def _judged(report: Any, old: Any, new: Any) -> None:
    """Every witness accepted by the side it names, rejected by the other."""
    judges = {
        "old": Draft202012Validator({"$schema": D20, **old}),
        "new": Draft202012Validator({"$schema": D20, **new}),
    }
    for violation in report.violations:
        other = "new" if violation.accepted_by == "old" else "old"
        assert judges[violation.accepted_by].is_valid(violation.witness), violation
        assert not judges[other].is_valid(violation.witness), violation


# --------------------------------------------------------------------------- chosen pairs


def test_a_violation_through_a_pattern_has_a_member_the_regex_matches(tmp_path: Path) -> None:
    old = _closed({"^x-": {"type": "string"}})
    new = _closed({"^x-": {"type": "integer"}})
    report = _diff(tmp_path, old, new)
    assert [v.rule for v in report.violations] == ["TYPE_NARROWED"]
    (witness,) = [v.witness for v in report.violations]
    assert all(name.startswith("x-") for name in witness)
    _judged(report, old, new)


def test_a_loosened_pattern_schema_is_compatible_one_way(tmp_path: Path) -> None:
    old = _closed({"^x-": {"type": "string", "maxLength": 5}})
    new = _closed({"^x-": {"type": "string", "maxLength": 10}})
    assert _diff(tmp_path, old, new).exit_status() == 0
    forward = _diff(tmp_path, old, new, mode="forward")
    assert [v.rule for v in forward.violations] == ["BOUND_RELAXED"]
    _judged(forward, old, new)


def test_a_declared_name_a_pattern_covers_meets_both(tmp_path: Path) -> None:
    # "x-a" is declared and matches "^x-": its schema is both; dropping the entry that
    # says no more than the pattern changes nothing, in either direction.
    old = _closed({"^x-": {"type": "string"}}, properties={"x-a": {"type": "string"}})
    new = _closed({"^x-": {"type": "string"}})
    assert _diff(tmp_path, old, new, mode="full").exit_status() == 0
    # A tighter pattern reaches the declared member too: {"x-a": "abc"} breaks.
    tighter = _closed({"^x-": {"type": "string", "maxLength": 2}}, properties={"x-a": {}})
    report = _diff(tmp_path, old, tighter)
    assert report.exit_status() == 1
    _judged(report, old, tighter)


def test_a_pattern_added_takes_names_from_additional_properties(tmp_path: Path) -> None:
    old = {"type": "object", "additionalProperties": {"type": "string"}}
    new = {**old, "patternProperties": {"^n_": {"type": "integer"}}}
    report = _diff(tmp_path, old, new, mode="full")
    assert {v.mode for v in report.violations} == {"backward", "forward"}
    assert all(next(iter(v.witness)).startswith("n_") for v in report.violations)
    _judged(report, old, new)
    # A new pattern whose schema accepts all that additionalProperties did: compatible.
    wider = {**old, "patternProperties": {"^n_": {"type": ["string", "integer"]}}}
    assert _diff(tmp_path, old, wider).exit_status() == 0


def test_a_pattern_removed_leaves_its_names_to_additional_properties(tmp_path: Path) -> None:
    old = _closed({"^x-": {"type": "string"}, "^y-": {"type": "string"}})
    new = _closed({"^x-": {"type": "string"}})
    report = _diff(tmp_path, old, new)
    assert [v.rule for v in report.violations] == ["ADDITIONAL_PROPERTIES_NARROWED"]
    assert all(name.startswith("y-") for v in report.violations for name in v.witness)
    _judged(report, old, new)
    assert _diff(tmp_path, new, old).exit_status() == 0  # new accepts less: compatible


def test_a_regex_read_differently_by_python_and_ecma_is_undecided(tmp_path: Path) -> None:
    # "\\d" matches "٣" in Python, not in ECMA-262: the declared member's schema is unsure.
    old = _closed({"^\\d$": {"type": "string"}}, properties={"٣": {"type": "string"}})
    new = _closed({"^\\d$": {"type": "integer"}}, properties={"٣": {"type": "string"}})
    report = _diff(tmp_path, old, new)
    assert any("'^\\\\d$' matches member '٣'" in u.reason for u in report.undecided)
    _judged(report, old, new)


def test_an_any_of_with_a_member_that_accepts_everything_is_true(tmp_path: Path) -> None:
    # gitlab-ci's hidden keys: {"anyOf": [{"$ref": job_template}, {"description": ...}]}.
    old = _closed({"^[.]": {"anyOf": [{"type": "object", "required": ["a"]}, {"title": "x"}]}})
    new = _closed({"^[.]": True})
    assert _diff(tmp_path, old, new, mode="full").exit_status() == 0


def test_normal_form_writes_patterns_back(tmp_path: Path) -> None:
    schema = _closed(
        {"^x-": {"type": "string"}, "^y": True},
        properties={"x-a": {"maxLength": 3}},
        allOf=[{"patternProperties": {"^x-": {"minLength": 1}}}],
    )
    path = _write(tmp_path, "s", schema)
    written = to_schema(
        Normalizer({path.as_uri(): json.loads(path.read_text())}).document(path.as_uri())
    )
    assert written["patternProperties"]["^x-"] != {"type": "string"}  # conjoined with allOf's
    assert _diff(tmp_path, schema, written, mode="full").exit_status() == 0


def test_regexes_are_answered_only_where_both_readings_agree() -> None:
    assert matches("^x-", "x-a") is True
    assert matches("^x-", "a") is False
    assert matches("a$", "a\n") is None  # Python's $ matches before a final newline
    assert matches("\\w", "é") is None
    assert matches("(", "a") is None  # not read at all
    assert matches("[", "a") is None
    found = list(names(["^x"], ["y$"], avoid=["x"]))
    assert found and all(n.startswith("x") and not n.endswith("y") and n != "x" for n in found)


# --------------------------------------------------------------------------- drawn pairs

REGEXES = ("^x", "b$", "^x-", "a", ".*")
NAMES = ("a", "b", "xa", "x-b", "x-", "c")
_LEAVES = st.sampled_from(
    [
        True,
        False,
        {"type": "string"},
        {"type": "string", "maxLength": 1},
        {"type": "integer"},
        {"type": ["string", "integer"]},
        {"enum": ["x", 1]},
    ]
)


@st.composite
def _objects(draw: st.DrawFn, depth: int = 1) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object"}
    patterns = draw(st.dictionaries(st.sampled_from(REGEXES), _LEAVES, max_size=2))
    if patterns:
        out["patternProperties"] = patterns
    properties = draw(st.dictionaries(st.sampled_from(NAMES), _LEAVES, max_size=2))
    if properties:
        out["properties"] = properties
    if draw(st.booleans()):
        out["additionalProperties"] = draw(_LEAVES)
    if depth and draw(st.booleans()):
        out["allOf"] = [draw(_objects(depth=0))]
    return out


_VALUES = st.dictionaries(
    st.sampled_from([*NAMES, "x-z", "zb", "q"]),
    st.sampled_from(["x", "", "ab", 1, None]),
    max_size=4,
)


@law_settings(60)
@given(old=_objects(), new=_objects(), values=st.lists(_VALUES, min_size=30, max_size=40))
def test_drawn_pairs_agree_with_python_jsonschema(
    tmp_path_factory: pytest.TempPathFactory,
    old: dict[str, Any],
    new: dict[str, Any],
    values: list[Any],
) -> None:
    folder = tmp_path_factory.mktemp("pair")
    report = _diff(folder, old, new, mode="full")
    _judged(report, old, new)
    judges = {"old": Draft202012Validator(old), "new": Draft202012Validator(new)}
    broken = {v.mode for v in report.violations} | {u.mode for u in report.undecided}
    for mode, accepting, reading in (("backward", "old", "new"), ("forward", "new", "old")):
        if mode in broken or None in broken:
            continue
        for value in values:
            if judges[accepting].is_valid(value):
                assert judges[reading].is_valid(value), (mode, value, old, new)


def test_a_member_a_new_pattern_forbids_is_not_excused_as_closing(tmp_path: Path) -> None:
    # lenient lets an optional member leave a closed object; a pattern that forbids it
    # is no closing: the member is refused by name, under lenient too.
    old = _closed({}, properties={"x-a": {"type": "string"}})
    new = _closed({"^x-": False})
    for policy in ("strict", "lenient"):
        report = diff(_write(tmp_path, "old", old), _write(tmp_path, "new", new), policy=policy)
        assert report.exit_status() == 1, policy
        _judged(report, old, new)
