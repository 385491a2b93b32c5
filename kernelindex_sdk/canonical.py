"""RFC 8785 (JCS) canonical form and content digests.

``digest(record) = "sha256:" + hex(sha256(JCS({apiVersion, kind, spec})))``: metadata
is left out, so renaming or retitling a record never changes its identity.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import rfc8785

DIGEST_PREFIX = "sha256:"


def canonicalize(value: Any) -> bytes:
    """The RFC 8785 bytes of any JSON value."""
    return rfc8785.dumps(value)


def identity(record: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a record its digest covers: ``apiVersion``, ``kind`` and ``spec``."""
    return {"apiVersion": record["apiVersion"], "kind": record["kind"], "spec": record["spec"]}


def digest(record: Mapping[str, Any]) -> str:
    """``sha256:<hex>`` of the canonical form of the record's identity."""
    return DIGEST_PREFIX + hashlib.sha256(canonicalize(identity(record))).hexdigest()
