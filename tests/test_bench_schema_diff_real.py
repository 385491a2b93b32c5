"""The real-history benchmark's probe for false compatibles: what it reports as a
counterexample must be one (judged again outside hypothesis), and what it draws is saved.
A travis pair whose versions differ only in key order once showed an unexplained one."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
try:
    import bench_schema_diff_real as bench
finally:
    sys.path.pop(0)

OLD = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "integer"}
NEW = {**OLD, "maximum": 5}


def test_probe_returns_the_values_new_refuses_and_each_is_confirmed() -> None:
    outcome = bench.false_compatible(OLD, NEW, 100, 60)
    assert not isinstance(outcome, str)
    tried, bad = outcome
    assert tried >= len(bad) > 0
    assert all(isinstance(v, int) and v > 5 for v in bad)
    # Judged again as the benchmark does: a few suffice (each judgement starts ajv twice,
    # where benchmarks/node_modules has it, ~0.2 s a start).
    assert {bench.judge_counterexample(OLD, NEW, v) for v in bad[:3]} == {"confirmed"}


def test_a_counterexample_on_the_same_json_value_is_an_artefact() -> None:
    reordered: dict[str, Any] = dict(reversed(list(NEW.items())))
    assert bench.judge_counterexample(NEW, reordered, 7) == "artefact: sides equal"
    # true and 1 are equal to Python, not to JSON Schema: not the same value.
    assert bench.judge_counterexample({"const": True}, {"const": 1}, True) == "confirmed"


def test_a_value_the_validators_do_not_judge_so_is_not_reproduced() -> None:
    assert bench.judge_counterexample(OLD, NEW, 3) == "artefact: not reproduced"


def test_counterexamples_are_saved_one_json_object_a_line(tmp_path: Path) -> None:
    rows = [{"pair": "x 01->02", "verdict": "confirmed", "value": 7}]
    target = tmp_path / "results" / "found.jsonl"
    bench.save_counterexamples(target, rows)
    lines = target.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == rows


def test_the_probe_leaves_the_schemas_it_is_given_as_they_were() -> None:
    # hypothesis-jsonschema's from_schema inlines a $ref in the schema it is given, and
    # beside a Draft 4 $ref, "maximum" is ignored: inlined, it would start to count.
    schema = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "properties": {"x": {"$ref": "#/definitions/a", "maximum": 3}},
        "definitions": {"a": {"type": "integer"}},
    }
    before = json.dumps(schema, sort_keys=True)
    bench.false_compatible(schema, schema, 20, 60)
    assert json.dumps(schema, sort_keys=True) == before
    assert bench._validator(schema).is_valid({"x": 5})
