"""The bare peer of ``kernelindex validate``: the ten lines a user could write.

    python benchmarks/bare_loop.py bundle.schema.json records.jsonl

``orjson.loads`` and jsonschema-rs ``is_valid`` on the self-contained Bundle schema
(``kernelindex schema export --bundled DIR``, then ``DIR/**/bundle.schema.json``), line
by line. It checks no intake rule (duplicate keys, lone surrogates, unsafe integers), no
semantic rule, no digest and no reference: it is the floor ``kernelindex validate --jobs
1`` is measured against, not an equal. It imports nothing of kernelindex, so its
start-up is the interpreter's and those two libraries'. Exit status 1 when a line is
invalid, as a validator's would be.
"""

import sys

import jsonschema_rs
import orjson

with open(sys.argv[1], "rb") as handle:
    validator = jsonschema_rs.validator_for(orjson.loads(handle.read()))
valid = invalid = 0
with open(sys.argv[2], "rb") as lines:
    for line in lines:
        if validator.is_valid(orjson.loads(line)):
            valid += 1
        else:
            invalid += 1
print(f"{valid} valid, {invalid} invalid")
sys.exit(1 if invalid else 0)
