"""The record envelope and the run every importer builds, as plain wire-form dicts.

Key order inside a record never changes a digest (RFC 8785 sorts keys) but it does
change the bytes written, so every builder emits members in one fixed order: the
envelope ``apiVersion, kind, metadata, spec``, and a run's four references last.
"""

from __future__ import annotations

from typing import Any

from kernelindex_sdk import wire
from kernelindex_sdk.wire import CURRENT_API_VERSION

#: The apiVersion importers write: the SDK's current one (one definition).
API_VERSION = CURRENT_API_VERSION

#: ``observedAt`` of a run whose source records no time, and the quality flag that says
#: so: defined once in the SDK (:mod:`kernelindex_sdk.wire`), where readers find them too.
UNKNOWN_OBSERVED_AT = wire.UNKNOWN_OBSERVED_AT
OBSERVED_AT_UNKNOWN = wire.OBSERVED_AT_UNKNOWN


def envelope(kind: str, metadata: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    """``{apiVersion, kind, metadata, spec}``."""
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": metadata, "spec": spec}


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
    (
        spec["protocolDigest"],
        spec["workloadDigest"],
        spec["environmentDigest"],
        spec["implementationDigest"],
    ) = digests
    metadata: dict[str, Any] = {"name": name, "title": title}
    if labels:
        metadata["labels"] = labels
    return envelope("BenchmarkRun", metadata, spec)
