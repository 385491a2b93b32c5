"""``schema diff``: the fixture table, every witness re-checked, and the laws.

* **The table** (``tests/examples/schema-diff/*.json``, see the README there): each
  case's rule IDs per policy and direction, and the exit status of every mode — at
  least one case per rule, direction, policy, and open or closed object.
* **Witnesses behave as claimed**: each is accepted by the side it names and rejected
  by the other, checked again by a plain python-jsonschema validator over the case's
  own files (not the engine the diff used).
* **Laws**: ``diff(S, S)`` and ``diff(S, normalized(S))`` are empty; ``backward(A, B)``
  is ``forward(B, A)`` (rules read in the other direction, the same witnesses);
  ``full`` is ``backward`` and ``forward`` together; and a "compatible" verdict
  survives a hypothesis search for a counterexample.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from jsonschema import (
    Draft4Validator,
    Draft6Validator,
    Draft7Validator,
    Draft202012Validator,
)
from jsonschema.validators import validator_for
from profiles import variants
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012
from strategies import bound_integers, law_settings

from kernelindex_sdk.schemadiff import DiffReport, diff, load, normalized
from kernelindex_sdk.schemadiff.rules import COUNTERPART, RULE_IDS

ROOT = Path(__file__).resolve().parent.parent
CASES_DIR = ROOT / "tests" / "examples" / "schema-diff"
CASE_FILES = sorted(CASES_DIR.glob("*.json"))
POLICIES = ("strict", "lenient")


@dataclass(frozen=True)
class Case:
    name: str
    about: str
    old: Path
    new: Path
    expect: dict[str, dict[str, Any]]
    #: Compared with ``format`` read as an assertion (``--format-assertion``).
    format_assertion: bool = False

    def diff(self, old: Path, new: Path, **options: str) -> DiffReport:
        """``diff`` of two of the case's sides, reading ``format`` as the case does."""
        return diff(old, new, format_assertion=self.format_assertion, **options)

    def expected(self, policy: str, direction: str) -> list[str] | str:
        found = self.expect.get(policy, self.expect["strict"])[direction]
        return found if found == "undecided" else sorted(found)


def _write(side: Any, where: Path) -> Path:
    """A case's side on disk: one schema file, or a folder of them."""
    if where.exists():
        shutil.rmtree(where)
    where.mkdir(parents=True)
    if isinstance(side, dict) and set(side) == {"files"}:
        for name, schema in side["files"].items():
            (where / name).write_text(json.dumps(schema, indent=2), encoding="utf-8")
        return where
    path = where / "schema.schema.json"
    path.write_text(json.dumps(side, indent=2), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Case]:
    root = tmp_path_factory.mktemp("schema-diff")
    found = {}
    for path in CASE_FILES:
        data = json.loads(path.read_text(encoding="utf-8"))
        old = _write(data["old"], root / path.stem / "old")
        new = _write(data["new"], root / path.stem / "new")
        found[path.stem] = Case(
            path.stem,
            data["about"],
            old,
            new,
            data["expect"],
            data.get("format_assertion", False),
        )
    return found


def _rules(report: DiffReport) -> list[str] | str:
    rules = sorted(v.rule for v in report.violations)
    if not rules and report.undecided:
        return "undecided"
    return rules


# --------------------------------------------------------------------------- the table


def test_the_table_covers_every_rule_direction_and_policy() -> None:
    seen: set[tuple[str, str, str]] = set()
    for path in CASE_FILES:
        expect = json.loads(path.read_text(encoding="utf-8"))["expect"]
        for policy in POLICIES:
            for direction in ("backward", "forward"):
                found = expect.get(policy, expect["strict"])[direction]
                if found != "undecided":
                    seen.update((rule, direction, policy) for rule in found)
    # Every rule in each direction it can break in (PROPERTY_ADDED breaks forward on a
    # closed object, backward on an open one), under each policy.
    wanted = {(rule, direction, policy) for rule, direction in COUNTERPART for policy in POLICIES}
    assert wanted - seen == set()
    assert {rule for rule, _, _ in seen} == set(RULE_IDS)


@pytest.mark.parametrize("name", [p.stem for p in CASE_FILES])
def test_case(cases: dict[str, Case], name: str) -> None:
    case = cases[name]
    for policy in POLICIES:
        both: list[str] = []
        undecided = False
        for direction in ("backward", "forward"):
            report = case.diff(case.old, case.new, mode=direction, policy=policy)
            want = case.expected(policy, direction)
            assert _rules(report) == want, (policy, direction, report)
            assert report.exit_status() == (3 if want == "undecided" else 1 if want else 0)
            assert all(v.mode == direction for v in report.violations)
            if want == "undecided":
                undecided = True
            else:
                both += want
        full = case.diff(case.old, case.new, mode="full", policy=policy)
        assert sorted(v.rule for v in full.violations) == sorted(both), policy
        assert full.exit_status() == (1 if both else 3 if undecided else 0)


@pytest.mark.parametrize("name", [p.stem for p in CASE_FILES])
def test_every_witness_behaves_as_claimed(cases: dict[str, Case], name: str) -> None:
    """Checked again by python-jsonschema over the case's files, not by the diff's engine."""
    case = cases[name]
    formats = case.format_assertion
    sides = {"old": _validators(case.old, formats), "new": _validators(case.new, formats)}
    for policy in POLICIES:
        report = case.diff(case.old, case.new, mode="full", policy=policy)
        for violation in report.violations:
            accepting = sides[violation.accepted_by]
            rejecting = sides["new" if violation.accepted_by == "old" else "old"]
            assert accepting[violation.kind].is_valid(violation.witness), violation
            if violation.rule in ("KIND_REMOVED", "KIND_ADDED"):
                assert violation.kind not in rejecting
            else:
                assert not rejecting[violation.kind].is_valid(violation.witness), violation
            assert violation.old or violation.new


def _validators(
    side: Path, formats: bool, *, externals_true: bool = False
) -> dict[str, Draft202012Validator]:
    """kind (or file name) → a plain validator of that schema, its siblings registered,
    of the dialect its ``$schema`` names (Draft 2020-12 without one), with its format
    checker where ``formats`` (``format`` read as an assertion). Nothing is
    fetched: a ``$ref`` into a document not given (an external schema) raises where
    it is reached — or, ``externals_true``, is replaced by ``true``, one schema it may
    be, the same on both sides (what a compatible verdict must hold for)."""
    files = sorted(side.glob("*.schema.json")) if side.is_dir() else [side]
    registry: Registry[Any] = Registry()
    schemas = {}
    for path in files:
        contents = json.loads(path.read_text(encoding="utf-8"))
        cls = validator_for(contents, default=Draft202012Validator)
        uri = contents.get("id" if cls is Draft4Validator else "$id")
        uri = uri or path.resolve().as_uri()
        schemas[uri] = (path.name, contents)
    found = {}
    for uri, (name, schema) in schemas.items():
        if externals_true:
            schema = _externals_true(schema, uri, set(schemas))
        found[schema.get("properties", {}).get("kind", {}).get("const", name)] = schema
        registry = registry.with_resource(
            uri, Resource.from_contents(schema, default_specification=DRAFT202012)
        )
    return {
        kind: (cls := validator_for(schema, default=Draft202012Validator))(
            schema, registry=registry, format_checker=cls.FORMAT_CHECKER if formats else None
        )
        for kind, schema in found.items()
    }


def _externals_true(schema: Any, base: str, given: set[str]) -> Any:
    """``schema`` with each ``$ref`` into a document not ``given`` replaced by ``true``
    (its siblings kept; none of the table's external refs has any)."""
    if isinstance(schema, list):
        return [_externals_true(item, base, given) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _externals_true(v, base, given) for k, v in schema.items()}
    ref = schema.get("$ref")
    if isinstance(ref, str) and urldefrag(urljoin(base, ref))[0] not in given:
        del out["$ref"]
    return out


# --------------------------------------------------------------------------- laws


def _decidable(side: Path) -> bool:
    """Whether a side can be brought to normal form (no $dynamicRef, no recursion)."""
    return diff(side, side, mode="full").compatible


@pytest.mark.parametrize("name", [p.stem for p in CASE_FILES])
def test_diff_of_a_schema_with_itself_and_its_normal_form_is_empty(
    cases: dict[str, Case], name: str
) -> None:
    case = cases[name]
    for side in (case.old, case.new):
        same = diff(side, side, mode="full", policy="strict")
        if not same.compatible:  # only what the diff cannot normalize; never a violation
            assert not same.violations and same.exit_status() == 3
            continue
        report = diff(side, normalized(load(side)), mode="full", policy="strict")
        assert report.compatible, report
        again = normalized(normalized(load(side)))
        assert diff(normalized(load(side)), again, mode="full").compatible


@pytest.mark.parametrize("name", [p.stem for p in CASE_FILES])
def test_backward_of_a_b_is_forward_of_b_a(cases: dict[str, Case], name: str) -> None:
    case = cases[name]
    for policy in POLICIES:
        backward = case.diff(case.old, case.new, mode="backward", policy=policy)
        forward = case.diff(case.new, case.old, mode="forward", policy=policy)
        assert backward.exit_status() == forward.exit_status()
        assert _mirrored(backward) == _seen(forward), policy


def _seen(report: DiffReport) -> list[tuple[str, str, str, str | None, str | None, str]]:
    return sorted(
        (v.rule, v.kind, v.path, v.old, v.new, json.dumps(v.witness, sort_keys=True))
        for v in report.violations
    )


def _mirrored(report: DiffReport) -> list[tuple[str, str, str, str | None, str | None, str]]:
    return sorted(
        (
            COUNTERPART[(v.rule, v.mode)],
            v.kind,
            v.path,
            v.new,
            v.old,
            json.dumps(v.witness, sort_keys=True),
        )
        for v in report.violations
    )


def _compatible_cases() -> list[Any]:
    """(case, direction) pairs whose strict verdict is "compatible": every other pair in
    the quick run (where ``test_case`` checks every case's verdict), all under slow."""
    pairs = []
    for path in CASE_FILES:
        expect = json.loads(path.read_text(encoding="utf-8"))["expect"]["strict"]
        pairs += [(path.stem, d) for d in ("backward", "forward") if expect[d] == []]
    quick = set(range(0, len(pairs), 2))
    return variants(pairs, quick, several=True)


@pytest.mark.parametrize(("name", "direction"), _compatible_cases())
# hypothesis-jsonschema filters what it draws for an allOf beside a recursion (and the
# assume below drops what the accepting side rejects): the draws that remain are checked.
@settings(
    law_settings(40),
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)
@given(data=st.data())
def test_a_compatible_verdict_has_no_counterexample(
    cases: dict[str, Case], name: str, direction: str, data: st.DataObject
) -> None:
    """Whatever the accepting side accepts (drawn by hypothesis-jsonschema from its
    schema), the other side accepts too."""
    case = cases[name]
    accepting, other = (case.old, case.new) if direction == "backward" else (case.new, case.old)
    formats = case.format_assertion
    readers = _validators(other, formats, externals_true=True)
    for kind, validator in _validators(accepting, formats, externals_true=True).items():
        if kind not in readers:
            continue
        instance = data.draw(_instances(validator.schema), label=kind)
        # hypothesis-jsonschema does not know every keyword (dependentSchemas): what it
        # draws that the accepting side rejects says nothing either way.
        assume(validator.is_valid(instance))
        assert readers[kind].is_valid(instance), (kind, instance)


def _instances(schema: Any) -> st.SearchStrategy[Any]:
    """hypothesis-jsonschema's strategy for ``schema`` (built once per schema: slow); a
    recursive schema, which it cannot draw from, unfolded a few levels first."""
    text = json.dumps(schema, sort_keys=True)
    if text not in _STRATEGIES:
        drawn = _evaluated(_unfolded(json.loads(text)))
        _STRATEGIES[text] = from_schema(bound_integers(drawn))
    return _STRATEGIES[text]


def _unfolded(schema: Any, depth: int = 4) -> Any:
    """``schema`` with each of its local ``$ref``\\ s (and a 2019-09 ``$recursiveRef``,
    to the root it is read from here) replaced by its target, ``depth`` references deep
    (then ``false``): it accepts only what ``schema`` accepts, and a recursive schema
    becomes one hypothesis-jsonschema can draw from (a $ref of a dialect that ignores
    its siblings replaced by its target alone). A schema without them is kept."""
    text = json.dumps(schema)
    if "$ref" not in text and "$recursiveRef" not in text:
        return schema
    # Before 2019-09 a $ref's siblings are not applied: the $ref is its target alone.
    alone = validator_for(schema, default=Draft202012Validator) in (
        Draft4Validator,
        Draft6Validator,
        Draft7Validator,
    )
    root = schema

    def target(ref: str) -> Any:
        node = root
        for token in ref[2:].split("/") if ref != "#" else []:
            node = node[token.replace("~1", "/").replace("~0", "~")]
        return node

    def walk(node: Any, left: int) -> Any:
        if isinstance(node, list):
            return [walk(item, left) for item in node]
        if not isinstance(node, dict):
            return node
        skip = ("$ref", "$recursiveRef", "$defs", "$recursiveAnchor")
        out = {k: walk(v, left) for k, v in node.items() if k not in skip}
        ref = node.get("$ref", node.get("$recursiveRef"))
        if isinstance(ref, str) and ref.startswith("#"):
            inner = walk(target(ref), left - 1) if left > 0 else False
            if alone:
                return inner
            return {**out, "allOf": [*out.get("allOf", []), inner]}
        if ref is not None:
            out["$ref"] = ref
        return out

    return walk(schema, depth)


def _evaluated(schema: Any) -> Any:
    """``unevaluatedItems``/``unevaluatedProperties``, which hypothesis-jsonschema does
    not know, as ``items``/``additionalProperties`` where nothing else evaluates (what
    it draws is still checked by the validator before use)."""
    if isinstance(schema, list):
        return [_evaluated(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _evaluated(v) for k, v in schema.items()}
    for keyword, plain, others in (
        ("unevaluatedItems", "items", ("prefixItems", "contains")),
        ("unevaluatedProperties", "additionalProperties", ("patternProperties",)),
    ):
        if keyword in out and not any(k in out for k in (plain, *others, "allOf", "$ref")):
            out[plain] = out.pop(keyword)
    return out


_STRATEGIES: dict[str, st.SearchStrategy[Any]] = {}
