"""The bare peer of ``kernelindex validate`` on records one per line: one validator per kind.

    python benchmarks/bare_loop_kinds.py SCHEMA_DIR records.jsonl

``SCHEMA_DIR`` is ``kernelindex schema export --bundled DIR``'s
``DIR/kernelindex.dev/v1alpha1``: each ``*.schema.json`` but the bundle's is compiled
once with jsonschema-rs, keyed by the ``kind`` its schema fixes. Each line is
``orjson.loads``-ed and checked by the validator of its ``kind`` (a line of no known
kind is invalid). No intake rule, no semantic rule, no digest, no reference: the floor
``kernelindex validate --jobs 1`` of records one per line (what ``import … --layout
jsonl`` writes) is measured against. Exit status 1 when a line is invalid.
"""

import sys
from pathlib import Path

import jsonschema_rs
import orjson

validators = {}
for path in Path(sys.argv[1]).glob("*.schema.json"):
    schema = orjson.loads(path.read_bytes())
    kind = schema.get("properties", {}).get("kind", {}).get("const")
    if kind is not None:
        validators[kind] = jsonschema_rs.validator_for(schema)
valid = invalid = 0
with open(sys.argv[2], "rb") as lines:
    for line in lines:
        record = orjson.loads(line)
        validator = validators.get(record.get("kind"))
        if validator is not None and validator.is_valid(record):
            valid += 1
        else:
            invalid += 1
print(f"{valid} valid, {invalid} invalid")
sys.exit(1 if invalid else 0)
