"""Record sets of one series for history tests: one lineage (``liger``) re-measured by
successive versions, each run's value and spread given (built on
:mod:`beforeafter_records`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from beforeafter_records import IMPLEMENTATIONS, RunSpec, records_for


def liger(version: str) -> str:
    """The implementation name of ``liger`` at ``version`` (registered on first use)."""
    name = f"liger-{version}"
    IMPLEMENTATIONS.setdefault(
        name, {"provider": "liger", "package": {"name": "liger-kernel", "version": version}}
    )
    return name


def series_records(
    values: Sequence[int],
    spread: int | Sequence[int],
    *,
    versions: Sequence[str] | None = None,
    **fields: Any,
) -> list[list[dict[str, Any]]]:
    """One record set per value, an hour apart: version ``versions[i]``, by default
    ``0.<i>.0``."""
    spreads = [spread] * len(values) if isinstance(spread, int) else list(spread)
    versions = versions or [f"0.{i}.0" for i in range(len(values))]
    return [
        records_for(
            RunSpec(
                implementation=liger(versions[i]),
                at=3600 * i,
                value=value,
                spread=spreads[i],
                **fields,
            )
        )
        for i, value in enumerate(values)
    ]
