"""A run's row in the store's ``runs`` view: the run flattened for SQL.

Everything here is read off a :class:`~kernelindex_sdk.compare.runs.ResolvedRun` —
the very resolution ``compare`` and ``ls`` use (base units, the primary statistic,
p20/p80 from the measurements, the GPU label, the implementation's label) — so a
query over the store and a comparison over the same records cannot disagree about a
run. Only what comparing does not need is read here: the harness that produced the
run (``sourceNative.source``).

The row holds everything of the run's own that ``compare`` reads (status, result,
spread, sample count, flags, title, references), so that ``compare`` over a trusted
store builds its resolved runs from these columns in bulk
(:func:`kernelindex_sdk.reading.kistore.read_facts`) instead of parsing every run's record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kernelindex_sdk import checks
from kernelindex_sdk.compare.runs import ResolvedRun

__all__ = ["FACT_COLUMNS", "FROM_STORED_COPY", "referenced_digests", "run_facts"]

#: Columns of ``run_facts`` (kistore.SCHEMA) and their DuckDB types, in order.
FACT_COLUMNS: Final = {
    "digest": "VARCHAR",
    "kernel": "VARCHAR",
    "pass": "VARCHAR",
    "dtype": "VARCHAR",
    "parameters": "VARCHAR",
    "gpu": "VARCHAR",
    "hardware": "VARCHAR",
    "provider": "VARCHAR",
    "implementation": "VARCHAR",
    "version": "VARCHAR",
    "status": "VARCHAR",
    "reason": "VARCHAR",
    "metric": "VARCHAR",
    "statistic": "VARCHAR",
    "value": "DOUBLE",
    "p20": "DOUBLE",
    "p80": "DOUBLE",
    "samples": "BIGINT",
    "observed_at": "VARCHAR",
    "quality_flags": "VARCHAR[]",
    "source": "VARCHAR",
    "workload_digest": "VARCHAR",
    "protocol_digest": "VARCHAR",
    "environment_digest": "VARCHAR",
    "implementation_digest": "VARCHAR",
    "stddev": "DOUBLE",
    "title": "VARCHAR",
    "origin": "VARCHAR",
    "origin_line": "BIGINT",
}
#: Columns read off the stored copy of the run (``r``, its row of ``records``) when an
#: add commits, not from the staged row: copies of one run share its digest (apiVersion,
#: kind, spec) but not their metadata or place, and the store keeps the first copy, so
#: a run has one row of facts and its title is the stored record's.
FROM_STORED_COPY: Final = {
    "title": "json_extract_string(r.record, '$.metadata.title')",
    "origin": "r.origin",
    "origin_line": "r.origin_line",
}


def referenced_digests(run: Mapping[str, Any]) -> list[Any]:
    """The digests a run references (its version's ``REFERENCES``), as written."""
    module = checks.for_version(str(run.get("apiVersion"))) or checks.newest()
    references: Mapping[str, tuple[str, str]] = getattr(module, "REFERENCES", {})
    spec = run.get("spec", {})
    return [spec.get(field) for _, field in references.values()]


def run_facts(run: ResolvedRun, record: Mapping[str, Any]) -> dict[str, Any]:
    """The ``run_facts`` row of one resolved run (``record``: the run itself), but for
    the columns of :data:`FROM_STORED_COPY`, which the commit reads off the stored copy."""
    from orjson import dumps

    spec = record["spec"]
    native = spec.get("sourceNative")
    workload, implementation = run.workload, run.implementation
    return {
        "digest": run.digest,
        "kernel": run.kernel,
        "pass": run.pass_,
        "dtype": workload.dtype if workload else None,
        "parameters": dumps(dict(workload.parameters)).decode() if workload else None,
        "gpu": run.gpu,
        "hardware": run.hardware,
        "provider": run.provider,
        "implementation": run.implementation_label,
        "version": implementation.version if implementation else None,
        "status": run.status,
        "reason": run.reason,
        "metric": run.metric,
        "statistic": run.statistic,
        "value": run.value,
        "p20": run.p20,
        "p80": run.p80,
        "samples": run.samples,
        "observed_at": run.observed_at,
        "quality_flags": list(spec.get("qualityFlags", [])),
        "source": native.get("source") if isinstance(native, dict) else None,
        "workload_digest": run.workload_digest,
        "protocol_digest": run.protocol_digest,
        "environment_digest": run.environment_digest,
        "implementation_digest": run.implementation_digest,
        "stddev": run.stddev,
        "origin": run.source,
        "origin_line": run.line,
    }
