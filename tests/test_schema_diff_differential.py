"""``schema diff`` against python-jsonschema, on pairs of schemas hypothesis draws.

The fixture table (``test_schema_diff.py``) holds chosen cases; here pairs are drawn:
each side in one of the dialects the diff reads (Draft 4, 6, 7, 2019-09, 2020-12),
written in that dialect's own spelling (``definitions``, boolean ``exclusiveMinimum``,
array-form ``items``, ``dependencies``, ``$recursiveRef``), with integer bounds
beyond 2**53, fractional ``multipleOf`` (which the validator divides in floating
point), discriminated unions and recursion. For every pair:

* **every witness is judged as claimed** by a plain python-jsonschema validator of each
  side's *own* dialect (``validator_for``), not by the engine the diff used;
* **no compatible verdict has a counterexample** among values drawn for the pair (any
  JSON, and objects over the members the two sides name): a value the accepting side's
  validator accepts, the other's accepts too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from jsonschema.validators import validator_for
from strategies import law_settings

from kernelindex_sdk.schemadiff import diff

D4 = "http://json-schema.org/draft-04/schema#"
D6 = "http://json-schema.org/draft-06/schema#"
D7 = "http://json-schema.org/draft-07/schema#"
D19 = "https://json-schema.org/draft/2019-09/schema"
D20 = "https://json-schema.org/draft/2020-12/schema"
DIALECTS = (D4, D6, D7, D19, D20)
NAMES = ("a", "b", "kind")
BIG = 2**63


def _number(dialect: str) -> st.SearchStrategy[dict[str, Any]]:
    """A numeric schema with bounds, some beyond 2**53, spelled as the dialect does."""
    bound = st.one_of(st.integers(-3, 3), st.sampled_from([-BIG, BIG - 1, 2**53 + 1]))

    @st.composite
    def make(draw: st.DrawFn) -> dict[str, Any]:
        out: dict[str, Any] = {"type": draw(st.sampled_from(["integer", "number"]))}
        for plain, strict in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
            if draw(st.booleans()):
                value = draw(bound)
                exclusive = draw(st.booleans())
                if dialect == D4:
                    out[plain] = value
                    if exclusive:
                        out[strict] = True
                else:
                    out[strict if exclusive else plain] = value
        if draw(st.booleans()):
            out["multipleOf"] = draw(st.sampled_from([1, 2, 3, 0.5, 0.1, 0.3, 0.01]))
        return out

    return make()


def _leaf(dialect: str) -> st.SearchStrategy[Any]:
    enum = st.lists(st.sampled_from(["x", "y", "z", 1, None]), min_size=1, max_size=3, unique=True)
    strings = st.builds(
        lambda n, p: {"type": "string", **({"maxLength": n} if n is not None else {}), **p},
        st.one_of(st.none(), st.integers(0, 3)),
        st.sampled_from([{}, {"pattern": "^x"}, {"format": "date"}]),
    )
    choices = [
        _number(dialect),
        strings,
        enum.map(lambda values: {"enum": values}),
        st.sampled_from([{"type": "boolean"}, {"type": "null"}, {}, {"type": ["string", "null"]}]),
    ]
    if dialect != D4:
        choices.append(st.sampled_from(["x", 1]).map(lambda v: {"const": v}))
    return st.one_of(choices)


@st.composite
def _side(draw: st.DrawFn) -> dict[str, Any]:
    """One schema file: an object over ``NAMES``, in a dialect drawn for it."""
    dialect = draw(st.sampled_from(DIALECTS))
    defs = "definitions" if dialect in (D4, D6, D7) or draw(st.booleans()) else "$defs"
    properties: dict[str, Any] = {}
    shared: dict[str, Any] = {}
    for name in draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=3)):
        shape = draw(st.sampled_from(["leaf", "ref", "tuple", "list", "self", "union"]))
        if shape == "leaf":
            properties[name] = draw(_leaf(dialect))
        elif shape == "ref":
            shared[name] = draw(_leaf(dialect))
            properties[name] = {"$ref": f"#/{defs}/{name}"}
        elif shape == "list":
            properties[name] = {"type": "array", "items": draw(_leaf(dialect))}
        elif shape == "tuple":
            first = draw(_leaf(dialect))
            extra = draw(st.sampled_from([False, True, {"type": "string"}]))
            if dialect == D20:
                properties[name] = {"type": "array", "prefixItems": [first], "items": extra}
            else:
                properties[name] = {"type": "array", "items": [first], "additionalItems": extra}
        elif shape == "self":
            if dialect == D19:
                properties[name] = {"$recursiveRef": "#"}
            else:
                properties[name] = {"$ref": "#"}
        else:
            kinds = draw(st.lists(st.sampled_from(["p", "q", "r"]), unique=True, min_size=1))
            properties[name] = {
                "oneOf": [
                    {
                        "type": "object",
                        "properties": {"kind": {"enum": [k]}, "v": draw(_leaf(dialect))},
                        "required": ["kind"],
                    }
                    for k in kinds
                ]
            }
    out: dict[str, Any] = {"$schema": dialect, "type": "object", "properties": properties}
    if dialect == D19 and draw(st.booleans()):
        out["$recursiveAnchor"] = True
    if shared:
        out[defs] = shared
    required = draw(st.lists(st.sampled_from(list(properties) or ["a"]), unique=True))
    if required:
        out["required"] = required
    if draw(st.booleans()):
        out["additionalProperties"] = False
    if draw(st.booleans()) and len(properties) >= 2:
        first, second = list(properties)[:2]
        if dialect in (D19, D20):
            out["dependentRequired"] = {first: [second]}
        else:
            out["dependencies"] = {first: [second]}
    return out


_JSON = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-5, 5),
        st.sampled_from([-BIG, BIG - 1, 2**53 + 1, 0.5, 0.1, 0.3, 0.6, 0.01, 1.5]),
        st.sampled_from(["x", "y", "z", "", "xa", "2024-01-01"]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from([*NAMES, "v", "other"]), inner, max_size=4),
        st.builds(lambda k, v: {"kind": k, "v": v}, st.sampled_from(["p", "q", "r"]), inner),
    ),
    max_leaves=8,
)


def _validator(schema: dict[str, Any], format_assertion: bool) -> Any:
    """The dialect's validator, reading ``format`` as the diff was told to."""
    cls = validator_for(schema, default=Draft202012Validator)
    return cls(schema, format_checker=cls.FORMAT_CHECKER if format_assertion else None)


def _write(folder: Path, name: str, schema: dict[str, Any]) -> Path:
    side = folder / name
    side.mkdir(parents=True, exist_ok=True)
    path = side / "s.schema.json"
    path.write_text(json.dumps(schema), encoding="utf-8")
    return path


@law_settings(60)
@given(
    old=_side(),
    new=_side(),
    values=st.lists(_JSON, min_size=20, max_size=40),
    format_assertion=st.booleans(),
)
def test_witnesses_and_verdicts_agree_with_each_dialects_validator(
    tmp_path_factory: Any,
    old: dict[str, Any],
    new: dict[str, Any],
    values: list[Any],
    format_assertion: bool,
) -> None:
    """Each witness is judged as the diff claims and every compatible direction holds,
    by each side's own dialect validator, with ``format`` read as an annotation (the
    default of 2019-09 and later, and of the diff) or asserted (``--format-assertion``)."""
    folder = tmp_path_factory.mktemp("pair")
    report = diff(
        _write(folder, "old", old),
        _write(folder, "new", new),
        mode="full",
        format_assertion=format_assertion,
    )
    judges = {"old": _validator(old, format_assertion), "new": _validator(new, format_assertion)}
    for violation in report.violations:
        other = "new" if violation.accepted_by == "old" else "old"
        assert judges[violation.accepted_by].is_valid(violation.witness), violation
        assert not judges[other].is_valid(violation.witness), violation
    broken = {v.mode for v in report.violations} | {u.mode for u in report.undecided}
    for mode, accepting, reading in (("backward", "old", "new"), ("forward", "new", "old")):
        if mode in broken or None in broken:
            continue  # not claimed compatible in this direction
        for value in values:
            if judges[accepting].is_valid(value):
                assert judges[reading].is_valid(value), (mode, value, old, new)
