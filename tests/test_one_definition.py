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
from kernelindex_sdk.schema.registry import default_registry

REGISTRY = default_registry()
FACTS = checks.for_version(API_VERSION)


def _spec_schema() -> dict[str, Any]:
    run = REGISTRY.route(API_VERSION, "BenchmarkRun").contents
    spec: dict[str, Any] = run["$defs"]["spec"]
    return spec


def test_the_models_api_version_is_the_registrys() -> None:
    from kernelindex_sdk.base.recordformat import CURRENT_API_VERSION

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


#: Each ``wire.*_KEY`` → the model attribute it names (class, attribute).
_WIRE_KEYS = {
    "API_VERSION_KEY": (v1alpha1.BenchmarkRun, "api_version"),
    "KIND_KEY": (v1alpha1.BenchmarkRun, "kind"),
    "METADATA_KEY": (v1alpha1.BenchmarkRun, "metadata"),
    "SPEC_KEY": (v1alpha1.BenchmarkRun, "spec"),
    "NAME_KEY": (v1alpha1.Metadata, "name"),
    "TITLE_KEY": (v1alpha1.Metadata, "title"),
    "LABELS_KEY": (v1alpha1.Metadata, "labels"),
    "STATUS_KEY": (v1alpha1.RunSpec, "status"),
    "REASON_KEY": (v1alpha1.RunSpec, "reason"),
    "OBSERVED_AT_KEY": (v1alpha1.RunSpec, "observed_at"),
    "QUALITY_FLAGS_KEY": (v1alpha1.RunSpec, "quality_flags"),
    "MEASUREMENTS_KEY": (v1alpha1.RunSpec, "measurements"),
    "SOURCE_NATIVE_KEY": (v1alpha1.RunSpec, "source_native"),
    "TIMING_KEY": (v1alpha1.RunSpec, "timing"),
    "SOURCE_KEY": (v1alpha1.SourceNative, "source"),
    "BENCHMARK_KEY": (v1alpha1.SourceNative, "benchmark"),
    "EXTERNAL_ID_KEY": (v1alpha1.SourceNative, "external_id"),
    "METRICS_KEY": (v1alpha1.SourceNative, "metrics"),
    "LATENCY_NS_KEY": (v1alpha1.Timing, "latency_ns"),
    "PRIMARY_STATISTIC_KEY": (v1alpha1.Timing, "primary_statistic"),
    "SAMPLES_KEY": (v1alpha1.Timing, "samples"),
    "METRIC_KEY": (v1alpha1.Measurement, "metric"),
    "UNIT_KEY": (v1alpha1.Measurement, "unit"),
    "STATISTIC_KEY": (v1alpha1.Measurement, "statistic"),
    "VALUE_KEY": (v1alpha1.Measurement, "value"),
    "HARNESS_KEY": (v1alpha1.ProtocolSpec, "harness"),
    "MEASUREMENT_KEY": (v1alpha1.ProtocolSpec, "measurement"),
    "COMPARABILITY_KEY": (v1alpha1.ProtocolSpec, "comparability"),
    "PROVENANCE_KEY": (v1alpha1.ProtocolSpec, "provenance"),
    "WARMUP_ITERATIONS_KEY": (v1alpha1.MeasurementSettings, "warmup_iterations"),
    "HARNESS_SETTINGS_KEY": (v1alpha1.MeasurementSettings, "harness_settings"),
    "SOFTWARE_KEY": (v1alpha1.EnvironmentSpec, "software"),
    "COMPUTE_CAPABILITY_KEY": (v1alpha1.Hardware, "compute_capability"),
    "ECC_ENABLED_KEY": (v1alpha1.Hardware, "ecc_enabled"),
    "TIMER_KEY": (v1alpha1.MeasurementSettings, "timer"),
    "MEMORY_PROBE_KEY": (v1alpha1.MeasurementSettings, "memory_probe"),
    "QUANTILES_KEY": (v1alpha1.MeasurementSettings, "quantiles"),
    "WARMUP_MS_KEY": (v1alpha1.MeasurementSettings, "warmup_ms"),
    "REPETITION_MS_KEY": (v1alpha1.MeasurementSettings, "repetition_ms"),
    "REPETITIONS_KEY": (v1alpha1.MeasurementSettings, "repetitions"),
    "FLUSH_L2_CACHE_KEY": (v1alpha1.MeasurementSettings, "flush_l2_cache"),
    "GRAD_TO_NONE_KEY": (v1alpha1.MeasurementSettings, "grad_to_none"),
    "KERNEL_KEY": (v1alpha1.WorkloadSpec, "kernel"),
    "PASS_KEY": (v1alpha1.WorkloadSpec, "pass_"),
    "DTYPE_KEY": (v1alpha1.WorkloadSpec, "dtype"),
    "PARAMETERS_KEY": (v1alpha1.WorkloadSpec, "parameters"),
    "SETTINGS_KEY": (v1alpha1.WorkloadSpec, "settings"),
    "PROVIDER_KEY": (v1alpha1.ImplementationSpec, "provider"),
    "BACKEND_KEY": (v1alpha1.ImplementationSpec, "backend"),
    "PACKAGE_KEY": (v1alpha1.ImplementationSpec, "package"),
    "VERSION_KEY": (v1alpha1.Package, "version"),
    "ENTRY_POINT_KEY": (v1alpha1.ImplementationSpec, "entry_point"),
    "HARDWARE_KEY": (v1alpha1.EnvironmentSpec, "hardware"),
    "VENDOR_KEY": (v1alpha1.Hardware, "vendor"),
    "PRODUCT_KEY": (v1alpha1.Hardware, "product"),
    "FORM_FACTOR_KEY": (v1alpha1.Hardware, "form_factor"),
    "ARCHITECTURE_KEY": (v1alpha1.Hardware, "architecture"),
    "DEVICE_NAME_KEY": (v1alpha1.Hardware, "device_name"),
    "COUNT_KEY": (v1alpha1.Hardware, "count"),
}


def test_the_wire_keys_are_the_models_members() -> None:
    """``recordformat.*_KEY`` (read off plain dicts by ``compare`` and the adapters) name the
    models' members: renaming one in the model without the other fails here, and so
    does a key added to ``recordformat`` without saying which member it names."""
    from kernelindex_sdk.base import recordformat

    keys = {name for name in vars(recordformat) if name.endswith("_KEY")}
    assert keys == set(_WIRE_KEYS)
    for name, (model, attribute) in _WIRE_KEYS.items():
        assert attribute in attrs.fields_dict(model), (name, model, attribute)
        assert getattr(recordformat, name) == wire_name(attribute), name
