"""The record envelope and the run every importer builds, as plain wire-form dicts.

Key order inside a record never changes a digest (RFC 8785 sorts keys) but it does
change the bytes written, so every builder emits members in one fixed order: the
envelope ``apiVersion, kind, metadata, spec``, and a run's four references last.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kernelindex_sdk import checks
from kernelindex_sdk.base import recordformat
from kernelindex_sdk.base.recordformat import (
    API_VERSION_KEY,
    COMPARABILITY_KEY,
    CURRENT_API_VERSION,
    HARDWARE_KEY,
    HARNESS_KEY,
    KIND_KEY,
    MEASUREMENT_KEY,
    METADATA_KEY,
    PROVENANCE_KEY,
    SOFTWARE_KEY,
    SPEC_KEY,
)
from kernelindex_sdk.models import (
    Comparability,
    Harness,
    Metadata,
    Workload,
    WorkloadSpec,
    unstructure,
)

#: The apiVersion importers write: the SDK's current one (one definition).
API_VERSION = CURRENT_API_VERSION

#: ``observedAt`` of a run whose source records no time, and the quality flag that says
#: so: defined once in the SDK (:mod:`kernelindex_sdk.base.recordformat`), where readers
#: find them too.
UNKNOWN_OBSERVED_AT = recordformat.UNKNOWN_OBSERVED_AT
OBSERVED_AT_UNKNOWN = recordformat.OBSERVED_AT_UNKNOWN

#: The run spec fields that hold the protocol, workload, environment and implementation
#: digests, in that order (the SDK's facts of the current apiVersion).
_REFERENCE_FIELDS = tuple(field for _, field in checks.newest().REFERENCES.values())


def envelope(kind: str, metadata: Mapping[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    """``{apiVersion, kind, metadata, spec}``."""
    return {API_VERSION_KEY: API_VERSION, KIND_KEY: kind, METADATA_KEY: metadata, SPEC_KEY: spec}


def protocol_record(
    metadata: Metadata,
    harness: Harness,
    measurement: Mapping[str, Any],
    comparability: Comparability,
    provenance: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A BenchmarkProtocol of harness, measurement settings and comparability (and the
    provenance of its fields, where given).

    ``measurement`` stays a mapping: the adapters write its timer (or memory probe)
    first, which is not the model's member order, and the bytes written keep that.
    """
    spec = {
        HARNESS_KEY: unstructure(harness),
        MEASUREMENT_KEY: dict(measurement),
        COMPARABILITY_KEY: unstructure(comparability),
    }
    if provenance is not None:
        spec[PROVENANCE_KEY] = dict(provenance)
    return envelope("BenchmarkProtocol", unstructure(metadata), spec)


def workload_record(
    name: str, title: str, spec: WorkloadSpec, labels: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """A Workload of ``spec``, named ``name`` and titled ``title`` (labels where given)."""
    metadata = Metadata(name=name, title=title, labels=labels or None)
    return dict(unstructure(Workload(metadata=metadata, spec=spec)))


def environment_record(
    metadata: Metadata,
    hardware: Mapping[str, Any],
    software: Mapping[str, str],
    provenance: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """An ExecutionEnvironment of hardware and software (and the provenance of its
    fields, where given). ``hardware`` stays a mapping: each adapter writes its fields in
    an order of its own (the GPU catalog's, the probe's), kept in the bytes written."""
    spec: dict[str, Any] = {HARDWARE_KEY: dict(hardware), SOFTWARE_KEY: dict(software)}
    if provenance is not None:
        spec[PROVENANCE_KEY] = dict(provenance)
    return envelope("ExecutionEnvironment", unstructure(metadata), spec)


def run_envelope(
    spec: dict[str, Any],
    *,
    name: str,
    title: str,
    labels: dict[str, str],
    digests: tuple[str, str, str, str],
) -> dict[str, Any]:
    """A BenchmarkRun from its spec body: the four references appended, then metadata.

    ``digests`` are the protocol, workload, environment and implementation digests, in
    that order. Shared by every importer's passed runs and runs that did not pass.
    """
    spec.update(zip(_REFERENCE_FIELDS, digests, strict=True))
    metadata = Metadata(name=name, title=title, labels=labels or None)
    return envelope("BenchmarkRun", unstructure(metadata), spec)
