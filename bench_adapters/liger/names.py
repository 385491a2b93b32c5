"""Naming rules: how CSV text becomes slugs, record names and external ids.

The rules every importer shares (slugs, record names, GPU slugs) live in
:mod:`bench_adapters.common.names`; the seeds fix them. Only the timestamp slug is
Liger's own.
"""

from __future__ import annotations

from bench_adapters.common.names import NAME_LIMIT, gpu_slug, record_name, slug, value_slug

__all__ = ["NAME_LIMIT", "gpu_slug", "record_name", "slug", "timestamp_slug", "value_slug"]


def timestamp_slug(date: str, time: str, millis: str | None) -> str:
    """``2024-09-03``, ``15:38:37`` -> ``2024-09-03-15-38-37`` (milliseconds only if any)."""
    value = f"{date}-{time.replace(':', '-')}"
    return f"{value}-{millis}" if millis else value
