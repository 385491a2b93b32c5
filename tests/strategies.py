"""Hypothesis strategies of the tests, and the settings the laws run under.

* **Model strategies** (:data:`MODELS`, :func:`consistent_bundles`, ...) ship in the
  wheel as :mod:`kernelindex_sdk.models.strategies`; they are re-exported here.
* **Schema strategies** (:func:`schema_instances`) generate straight from the
  schemas with hypothesis-jsonschema, via :func:`kernelindex_sdk.schema.bundled.bundled_schema`
  (hypothesis-jsonschema resolves no ``$ref`` to another file).
* JSON rewriting for differential tests: shuffled keys, random whitespace, mutations.

Settings: every law uses :func:`law_settings`, whose example count scales with the
hypothesis profile (``profiles.examples``): a tenth in ``default``, the count written in
``long`` (``HYPOTHESIS_PROFILE=long``), twenty times it in ``thorough``.
"""

from __future__ import annotations

import copy
import functools
import json
import random
import warnings
from collections.abc import Mapping
from typing import Any, TypeVar

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.errors import HypothesisWarning
from hypothesis_jsonschema import from_schema
from profiles import examples

from kernelindex_sdk.models import unstructure

# The record strategies ship in the wheel (kernelindex_sdk.models.strategies); the tests use
# those, so what users draw from is what the project's own laws are checked with.
from kernelindex_sdk.models.strategies import (
    MODELS,
    RECORD_KINDS,
    consistent_bundles,
    metadatas,
    timestamps,
    uris,
)
from kernelindex_sdk.reading.intake import MAX_SAFE_INTEGER
from kernelindex_sdk.schema.bundled import bundled_schema

T = TypeVar("T")

#: Any record of any kind, as wire JSON.
wire_records: st.SearchStrategy[dict[str, Any]] = st.one_of(
    [MODELS[kind] for kind in RECORD_KINDS]
).map(unstructure)

# --------------------------------------------------------------------------- settings


def law_settings(max_examples: int, **overrides: Any) -> settings:
    """Settings for one law: the profile's, with ``max_examples`` scaled by it."""
    return settings(
        max_examples=examples(max_examples),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        **overrides,
    )


__all__ = [
    "MODELS",
    "RECORD_KINDS",
    "STATUS_CASES",
    "consistent_bundles",
    "dumps_with_whitespace",
    "law_settings",
    "metadatas",
    "mutate_somewhere",
    "replaced_at",
    "schema_instances",
    "shuffle_keys",
    "timestamps",
    "uris",
    "value_paths",
    "wire_records",
]


# --------------------------------------------------------------------------- schema-driven


def _resolve(schema: Mapping[str, Any], ref: str) -> Any:
    """The node a local ``#/...`` pointer names in ``schema``."""
    node: Any = schema
    for token in ref.removeprefix("#").split("/")[1:]:
        node = node[token.replace("~1", "/").replace("~0", "~")]
    return node


def _run_spec_schema(bundled: dict[str, Any]) -> dict[str, Any]:
    """The run spec's schema inside a bundled BenchmarkRun or Bundle schema."""
    run = bundled
    if "run" in bundled.get("properties", {}):
        run = _resolve(bundled, bundled["properties"]["run"]["$ref"])
    spec: dict[str, Any] = _resolve(bundled, run["properties"]["spec"]["$ref"])
    return spec


#: The status rule, resolved into its three disjoint cases: status, fields required,
#: fields forbidden. Their union is exactly what the schema's conditionals accept.
STATUS_CASES: Mapping[str, tuple[list[str], list[str], list[str]]] = {
    "passed-timing": (["passed"], ["timing"], ["memory", "reason"]),
    "passed-memory": (["passed"], ["memory"], ["timing", "reason"]),
    "not-passed": (["failed", "oom", "skipped"], ["reason"], ["timing", "memory", "measurements"]),
}


def status_case_schema(kind: str, case: str) -> dict[str, Any]:
    """The bundled schema of ``kind`` with the run's status conditionals resolved to ``case``.

    hypothesis-jsonschema turns ``if``/``then``/``oneOf``/``not`` into filters, which
    makes BenchmarkRun and Bundle ~10x slower to generate; a plain schema per case is
    not. The conditionals (the spec's ``allOf``) are dropped and replaced by the case's
    constraints; instances are still checked against the real schema by the tests.
    """
    schema = bundled_schema(kind)
    spec = _run_spec_schema(schema)
    statuses, required, forbidden = STATUS_CASES[case]
    spec.pop("allOf")
    spec["properties"]["status"] = {"enum": statuses}
    spec["required"] = [*spec["required"], *required]
    for name in forbidden:
        del spec["properties"][name]  # additionalProperties: false forbids it now
    return schema


def bound_integers(schema: Any) -> Any:
    """Clamp every ``"type": "integer"`` schema to ±(2**53 - 1), in place.

    The schemas set no such bound (see test_laws' known gaps); without it
    hypothesis-jsonschema draws integers the intake and JCS refuse.
    """
    if isinstance(schema, dict):
        if schema.get("type") == "integer":
            schema["minimum"] = max(schema.get("minimum", -MAX_SAFE_INTEGER), -MAX_SAFE_INTEGER)
            schema["maximum"] = min(schema.get("maximum", MAX_SAFE_INTEGER), MAX_SAFE_INTEGER)
        for key, value in schema.items():
            if key not in ("const", "enum", "default", "examples"):
                bound_integers(value)
    elif isinstance(schema, list):
        for item in schema:
            bound_integers(item)
    return schema


def _from_bundled(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """hypothesis-jsonschema on a copy (it rewrites schemas in place), with integers
    clamped and richer generators for two formats: its own ``uri`` is only ever
    ``https://<domain>`` and its ``date-time`` fractions are 0 or 6 digits. What they
    draw is still filtered by jsonschema's format checker and the schema's pattern."""
    # hypothesis-jsonschema warns when a standard format is overridden; that is the point.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HypothesisWarning)
        return from_schema(
            bound_integers(copy.deepcopy(schema)),
            custom_formats={"uri": uris, "date-time": timestamps},
        )


@functools.cache
def schema_instances(kind: str, *, resolve_status: bool = True) -> st.SearchStrategy[Any]:
    """Instances of ``kind`` drawn from its bundled schema by hypothesis-jsonschema.

    With ``resolve_status`` (the default) BenchmarkRun and Bundle draw from the union of
    :func:`status_case_schema` (fast); without it, from the schema as it is (slow).
    Built once per argument: ``from_schema`` spends about a second and a half on a
    bundle's schema, and tests drawing inside their body ask again on every example.
    """
    if resolve_status and kind in ("BenchmarkRun", "Bundle"):
        return st.one_of([_from_bundled(status_case_schema(kind, c)) for c in STATUS_CASES])
    return _from_bundled(bundled_schema(kind))


# --------------------------------------------------------------------------- JSON rewriting


def shuffle_keys(value: Any, rnd: random.Random) -> Any:
    """``value`` with every object's keys in a random order (lists keep theirs)."""
    if isinstance(value, dict):
        items = list(value.items())
        rnd.shuffle(items)
        return {k: shuffle_keys(v, rnd) for k, v in items}
    if isinstance(value, list):
        return [shuffle_keys(v, rnd) for v in value]
    return value


_WHITESPACE = " \t\n\r"


def dumps_with_whitespace(value: Any, rnd: random.Random) -> str:
    """JSON text of ``value`` with random insignificant whitespace around every token,
    and strings randomly ASCII-escaped or not."""

    def ws() -> str:
        return "".join(rnd.choice(_WHITESPACE) for _ in range(rnd.choice((0, 0, 1, 3))))

    def string_(s: str) -> str:
        return json.dumps(s, ensure_ascii=rnd.random() < 0.5)

    def write(v: Any) -> str:
        if isinstance(v, dict):
            body = ",".join(
                f"{ws()}{string_(k)}{ws()}:{ws()}{write(x)}{ws()}" for k, x in v.items()
            )
            return "{" + (body or ws()) + "}"
        if isinstance(v, list):
            body = ",".join(f"{ws()}{write(x)}{ws()}" for x in v)
            return "[" + (body or ws()) + "]"
        if isinstance(v, str):
            return string_(v)
        return json.dumps(v)  # numbers (repr: exact), true, false, null

    return ws() + write(value) + ws()


def value_paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path (keys and indexes) of every node of ``value``, the root's ``()`` first."""
    found = [path]
    if isinstance(value, dict):
        for key, child in value.items():
            found += value_paths(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += value_paths(child, (*path, index))
    return found


def replaced_at(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    """A copy of ``value`` with the node at ``path`` replaced by ``new`` (shared elsewhere)."""
    if not path:
        return new
    copied = copy.copy(value)
    copied[path[0]] = replaced_at(value[path[0]], path[1:], new)
    return copied


def mutate_somewhere(value: Any, rnd: random.Random) -> Any:
    """A copy of ``value`` with one randomly chosen part changed (always a real change)."""
    if isinstance(value, dict) and value and rnd.random() < 0.8:
        key = rnd.choice(sorted(value))
        return {**value, key: mutate_somewhere(value[key], rnd)}
    if isinstance(value, list) and value and rnd.random() < 0.8:
        i = rnd.randrange(len(value))
        return [*value[:i], mutate_somewhere(value[i], rnd), *value[i + 1 :]]
    return _changed(value, rnd)


def _changed(value: Any, rnd: random.Random) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1 if value < MAX_SAFE_INTEGER else value - 1
    if isinstance(value, float):
        return value + 1 if abs(value) < 2**52 else value / 2
    if isinstance(value, str):
        return value + rnd.choice("x~/é")
    if isinstance(value, list):
        return [*value, None] if not value or rnd.random() < 0.5 else value[:-1]
    if isinstance(value, dict):
        new_key = "".join(value) + "+"  # longer than every key: not among them
        return {**value, new_key: None}
    return None if value is not None else 0
