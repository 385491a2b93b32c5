"""Models of every record kind, and the converter to and from the wire.

``kernelindex_sdk.models`` re-exports the current version (v1alpha1); versioned
modules sit beside it so that a v1alpha2 can be added without touching this one.
"""

from kernelindex_sdk.models.convert import ModelError, structure, unstructure, wire_name
from kernelindex_sdk.models.v1alpha1 import (
    API_VERSION,
    KINDS,
    BenchmarkProtocol,
    BenchmarkRun,
    Bundle,
    Comparability,
    EnvironmentSpec,
    ExecutionEnvironment,
    Hardware,
    Harness,
    Implementation,
    ImplementationSpec,
    Measurement,
    MeasurementSettings,
    Memory,
    Metadata,
    Package,
    ProtocolSpec,
    Provenance,
    ProvenanceEntry,
    Record,
    RunSpec,
    SourceLocation,
    SourceNative,
    Timing,
    Workload,
    WorkloadSpec,
)

__all__ = [
    "API_VERSION", "KINDS", "BenchmarkProtocol", "BenchmarkRun", "Bundle", "Comparability",
    "EnvironmentSpec", "ExecutionEnvironment", "Hardware", "Harness", "Implementation",
    "ImplementationSpec", "Measurement", "MeasurementSettings", "Memory", "Metadata",
    "ModelError", "Package", "ProtocolSpec", "Provenance", "ProvenanceEntry", "Record",
    "RunSpec", "SourceLocation", "SourceNative", "Timing", "Workload", "WorkloadSpec",
    "structure", "unstructure", "wire_name",
]  # fmt: skip
