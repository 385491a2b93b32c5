"""One definition per fact: the schemas, the models and the version's facts agree.

The hot validation path reads plain dicts with keys from the version's checks module
(``REFERENCES``, ``RESULTS``, ``UNITS``) instead of importing the models (attrs and
cattrs cost start-up time); these tests hold the three definitions together.
"""

from __future__ import annotations

from typing import Any, get_args, get_type_hints

import attrs

from kernelindex_sdk import checks
from kernelindex_sdk.models import API_VERSION, KINDS, v1alpha1, wire_name
from kernelindex_sdk.registry import default_registry

REGISTRY = default_registry()
FACTS = checks.for_version(API_VERSION)


def _spec_schema() -> dict[str, Any]:
    run = REGISTRY.route(API_VERSION, "BenchmarkRun").contents
    spec: dict[str, Any] = run["$defs"]["spec"]
    return spec


def test_the_models_api_version_is_the_registrys() -> None:
    from kernelindex_sdk.wire import CURRENT_API_VERSION

    assert API_VERSION == CURRENT_API_VERSION == max(REGISTRY.api_versions())
    assert FACTS is checks.newest()


def test_bundle_members_are_the_bundle_schemas_properties() -> None:
    bundle = REGISTRY.bundle(API_VERSION).contents
    assert set(bundle["properties"]) - {"$schema"} == set(checks.bundle_members(API_VERSION))
    model_members = {a.name for a in attrs.fields(v1alpha1.Bundle)} - {"json_schema"}
    assert model_members == set(checks.bundle_members(API_VERSION))


def test_references_name_the_run_spec_fields_and_the_kinds() -> None:
    assert FACTS is not None
    spec = _spec_schema()
    run_spec_fields = {wire_name(a.name) for a in attrs.fields(v1alpha1.RunSpec)}
    for member, (kind, field) in FACTS.REFERENCES.items():
        assert field in spec["required"] and field in run_spec_fields, field
        assert kind in KINDS and REGISTRY.route(API_VERSION, kind).kind == kind, member


def test_results_and_units_are_the_schemas() -> None:
    assert FACTS is not None
    spec = _spec_schema()
    run = REGISTRY.route(API_VERSION, "BenchmarkRun").contents
    for field, summary_key, _ in FACTS.RESULTS:
        definition = run["$defs"][field]
        assert summary_key in definition["required"], field
        assert field in spec["properties"]
    assert set(FACTS.UNITS) == set(get_args(get_type_hints(v1alpha1.Measurement)["unit"]))


def test_the_wire_keys_are_the_models_members() -> None:
    """``wire.*_KEY`` (read off plain dicts by ``compare`` and the adapters) name the
    models' members: renaming one in the model without the other fails here."""
    from kernelindex_sdk import wire

    envelope = {wire_name(a.name) for a in attrs.fields(v1alpha1.BenchmarkRun)}
    run_spec = {wire_name(a.name) for a in attrs.fields(v1alpha1.RunSpec)}
    for key in (wire.API_VERSION_KEY, wire.KIND_KEY, wire.METADATA_KEY, wire.SPEC_KEY):
        assert key in envelope, key
    for key in (wire.OBSERVED_AT_KEY, wire.QUALITY_FLAGS_KEY):
        assert key in run_spec, key
