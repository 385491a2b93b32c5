"""hypothesis strategies for kernelindex records, for your own property tests.

Install the extra that brings hypothesis (``pip install '.[strategies]'`` in a checkout,
or ``pip install hypothesis``), then::

    from hypothesis import given
    from kernelindex_sdk.models.strategies import bundles, records

    @given(records("Workload"))
    def test_my_exporter_round_trips(workload):
        assert my_import(my_export(workload)) == workload   # plain JSON, valid

    @given(bundles())
    def test_my_index_accepts_every_valid_bundle(bundle):
        ...

:func:`records` draws *valid* records of one kind (``ki.validate`` finds no problem:
schema, semantic rules and all), :func:`bundles` draws valid bundles whose run
references its embedded records by their real digests. Both give plain JSON values
by default, model instances (:mod:`kernelindex_sdk.models`) with ``models=True``.

:data:`MODELS` gives broader model instances, valid against the schemas but not
always against the semantic rules (statistics in any order, timestamps in the
future): what a test of a converter or a reader wants.

Field enums are read off the models' ``Literal`` types, and every integer stays
within ±(2**53 − 1), what JCS and the strict intake accept.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from datetime import datetime
from typing import Any, TypeVar, get_args, get_type_hints

from hypothesis import strategies as st

from kernelindex_sdk.canonical import digest
from kernelindex_sdk.checks.v1alpha1 import ORDER, UNITS
from kernelindex_sdk.models import unstructure
from kernelindex_sdk.models import v1alpha1 as m
from kernelindex_sdk.reading.intake import MAX_SAFE_INTEGER

__all__ = [
    "MODELS",
    "RECORD_KINDS",
    "bundles",
    "consistent_bundles",
    "digests",
    "json_values",
    "models",
    "records",
    "timestamps",
    "uris",
    "valid_run_specs",
]

T = TypeVar("T")


# --------------------------------------------------------------------------- primitives


def optional(strategy: st.SearchStrategy[T]) -> st.SearchStrategy[T | None]:
    return st.none() | strategy


def literal_values(tp: Any) -> st.SearchStrategy[Any]:
    """The values of a ``Literal[...]`` type of the models."""
    return st.sampled_from(get_args(tp))


names = st.from_regex(r"[a-z0-9][a-z0-9._-]{0,252}", fullmatch=True)
slugs = st.from_regex(r"[a-z0-9][a-z0-9._-]{0,127}", fullmatch=True)
#: Free text: any code point hypothesis draws (surrogates aside), 1 to 4096 of them.
texts = st.text(min_size=1, max_size=4096)
versions = st.text(min_size=1, max_size=128)
digests = st.binary(min_size=32, max_size=32).map(lambda b: "sha256:" + b.hex())
statistics = literal_values(m.Statistic)
safe_ints = st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
counts = st.integers(0, MAX_SAFE_INTEGER)
#: The schemas bound every number to ±(2**53 - 1), floats included.
safe_floats = st.floats(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
numbers: st.SearchStrategy[int | float] = safe_ints | safe_floats
non_negative: st.SearchStrategy[int | float] = counts | st.floats(0, MAX_SAFE_INTEGER)
scalars: st.SearchStrategy[int | float | str | bool] = (
    numbers | st.text(max_size=40) | st.booleans()
)
#: Any JSON value the intake accepts (bounded integers, finite floats).


def _json_containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner, max_size=3)


json_values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | numbers | st.text(max_size=20), _json_containers, max_leaves=8
)
label_keys = st.from_regex(r"[A-Za-z0-9]([A-Za-z0-9._/-]{0,126}[A-Za-z0-9])?", fullmatch=True)
labels = st.dictionaries(label_keys, st.text(max_size=1024), max_size=4)
software_keys = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", fullmatch=True)
architectures = st.from_regex(r"sm_[0-9]{2,3}[a-z]?|gfx[0-9a-f]{3,4}", fullmatch=True)

# RFC 3339 date-times, in the shape the schema's pattern allows: 4-digit year,
# upper-case T, optional fraction of any length, Z or a numeric offset.
_datetimes = st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59))
_fractions = st.none() | st.from_regex(r"\.[0-9]{1,12}", fullmatch=True)
_offsets = st.just("Z") | st.builds(
    "{}{:02d}:{:02d}".format, st.sampled_from("+-"), st.integers(0, 23), st.integers(0, 59)
)


def _rfc3339(moment: datetime, fraction: str | None, offset: str) -> str:
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
        f"T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}{fraction or ''}{offset}"
    )


timestamps = st.builds(_rfc3339, _datetimes, _fractions, _offsets)

# URIs (RFC 3986) of several shapes, not only https://host: other schemes, userinfo,
# ports, IPv4 hosts, percent-escapes, queries, fragments, and rootless paths (urn:...).
_UNRESERVED = string.ascii_letters + string.digits + "-._~"
_SUB_DELIMS = "!$&'()*+,;="
_pchar = st.sampled_from(_UNRESERVED + _SUB_DELIMS + ":@") | st.builds(
    "%{:02X}".format, st.integers(0, 255)
)
_segment = st.lists(_pchar, max_size=8).map("".join)
_nz_segment = st.lists(_pchar, min_size=1, max_size=8).map("".join)
_schemes = st.from_regex(r"[a-zA-Z][a-zA-Z0-9+.-]{0,8}", fullmatch=True)
_reg_name = st.lists(
    st.sampled_from(_UNRESERVED + _SUB_DELIMS) | st.builds("%{:02X}".format, st.integers(0, 255)),
    min_size=1,
    max_size=12,
).map("".join)
_ipv4 = st.ip_addresses(v=4).map(str)
_authority = st.builds(
    "{}{}{}".format,
    st.just("") | _segment.filter(lambda s: "@" not in s).map("{}@".format),
    _reg_name | _ipv4,
    st.just("") | st.integers(0, 65535).map(":{}".format),
)
_path_abempty = st.lists(_segment, max_size=4).map(lambda parts: "".join("/" + p for p in parts))
_query_or_fragment = st.lists(_pchar | st.sampled_from("/?"), max_size=10).map("".join)
uris = st.builds(
    "{}:{}{}{}".format,
    _schemes,
    st.builds("//{}{}".format, _authority, _path_abempty)
    | st.builds("{}{}".format, _nz_segment, _path_abempty),
    st.just("") | _query_or_fragment.map("?{}".format),
    st.just("") | _query_or_fragment.map("#{}".format),
)

# --------------------------------------------------------------------------- models

metadatas = st.builds(m.Metadata, name=names, title=optional(texts), labels=optional(labels))


def _record(model: type[T], spec: st.SearchStrategy[Any]) -> st.SearchStrategy[T]:
    """A record model: metadata, ``spec``, and ``$schema`` absent or right."""
    return st.builds(model, metadata=metadatas, spec=spec, json_schema=_schema_ids(model))


def _schema_ids(model: type[Any]) -> st.SearchStrategy[Any]:
    """``$schema`` of a model: absent, or its one allowed value (read off the model)."""
    field_type = get_type_hints(model)["json_schema"]
    values = [v for arg in get_args(field_type) for v in get_args(arg)]
    return st.none() | st.sampled_from(values)


summaries = st.dictionaries(statistics, counts, min_size=1, max_size=6)
sample_counts = optional(st.integers(1, MAX_SAFE_INTEGER))
timings = st.builds(
    m.Timing, latency_ns=summaries, primary_statistic=statistics, samples=sample_counts
)
memories = st.builds(
    m.Memory, peak_bytes=summaries, primary_statistic=statistics, samples=sample_counts
)
measurements = st.builds(
    m.Measurement,
    metric=literal_values(m.Metric),
    unit=literal_values(m.Unit),
    statistic=statistics,
    value=non_negative,
)
source_natives = st.builds(
    m.SourceNative,
    source=slugs,
    benchmark=optional(texts),
    external_id=optional(texts),
    metrics=optional(st.dictionaries(st.text(max_size=20), numbers, max_size=4)),
)
quality_flags = st.lists(slugs, unique=True, max_size=4).map(tuple)


@st.composite
def run_specs(draw: st.DrawFn) -> m.RunSpec:
    """A run spec obeying the status rule of the schema.

    passed ⇒ exactly one of timing/memory and no reason; failed/oom/skipped ⇒ a reason
    and no timing, memory or measurements (not even an empty list).
    """
    status = draw(literal_values(m.Status))
    result: dict[str, Any] = {}
    if status == "passed":
        result = draw(timings.map(lambda t: {"timing": t}) | memories.map(lambda r: {"memory": r}))
        result["measurements"] = draw(optional(st.lists(measurements, max_size=4).map(tuple)))
    else:
        result["reason"] = draw(texts)
    return m.RunSpec(
        status=status,
        observed_at=draw(timestamps),
        protocol_digest=draw(digests),
        workload_digest=draw(digests),
        environment_digest=draw(digests),
        implementation_digest=draw(digests),
        quality_flags=draw(optional(quality_flags)),
        source_native=draw(optional(source_natives)),
        **result,
    )


benchmark_runs = _record(m.BenchmarkRun, run_specs())

# RFC 6901 pointers into a spec: one or more segments, "~" only as ~0 or ~1.
_pointer_segments = st.lists(
    st.sampled_from(["~0", "~1"])
    | st.text(st.characters(codec="utf-8", exclude_characters="~/"), max_size=3),
    max_size=4,
).map("".join)
pointers = (
    st.lists(_pointer_segments, min_size=1, max_size=4)
    .map(lambda segments: "".join("/" + s for s in segments))
    .filter(lambda p: len(p) <= 512)
)
provenance_entries = st.builds(
    m.ProvenanceEntry, origin=literal_values(m.Origin), detail=optional(texts)
)
#: A provenance map: pointer → origin. Drawn freely: the schema asks no more of it.
provenances = st.dictionaries(pointers, provenance_entries, max_size=4)


@st.composite
def measurement_settings(draw: st.DrawFn) -> m.MeasurementSettings:
    """Protocol measurement settings: the schema wants a timer, a memory probe, or both."""
    which = draw(st.sampled_from(["timer", "probe", "both"]))
    return m.MeasurementSettings(
        primary_statistic=draw(statistics),
        timer=draw(literal_values(m.Timer)) if which != "probe" else None,
        memory_probe=draw(slugs) if which != "timer" else None,
        quantiles=draw(
            optional(
                st.lists(st.integers(0, 1) | st.floats(0, 1), min_size=1, max_size=5).map(tuple)
            )
        ),
        warmup_ms=draw(optional(non_negative)),
        repetition_ms=draw(optional(non_negative)),
        warmup_iterations=draw(optional(counts)),
        repetitions=draw(optional(st.integers(1, MAX_SAFE_INTEGER))),
        flush_l2_cache=draw(optional(st.booleans())),
        grad_to_none=draw(optional(st.booleans())),
        harness_settings=draw(
            optional(st.dictionaries(st.text(min_size=1, max_size=20), scalars, max_size=5))
        ),
    )


protocol_specs = st.builds(
    m.ProtocolSpec,
    harness=st.builds(m.Harness, name=texts, repository=optional(uris), version=optional(versions)),
    measurement=measurement_settings(),
    comparability=optional(st.builds(m.Comparability, notes=texts, family=optional(slugs))),
    provenance=optional(provenances),
)
benchmark_protocols = _record(m.BenchmarkProtocol, protocol_specs)

hardwares = st.builds(
    m.Hardware,
    vendor=slugs,
    product=texts,
    form_factor=optional(texts),
    architecture=optional(architectures),
    device_name=optional(texts),
    memory_bytes=optional(st.integers(1, MAX_SAFE_INTEGER)),
    count=optional(st.integers(1, MAX_SAFE_INTEGER)),
    compute_capability=optional(st.from_regex(r"[0-9]{1,3}\.[0-9]{1,3}", fullmatch=True)),
    multiprocessors=optional(st.integers(1, MAX_SAFE_INTEGER)),
    clock_hz=optional(st.integers(1, MAX_SAFE_INTEGER)),
    memory_clock_hz=optional(st.integers(1, MAX_SAFE_INTEGER)),
    memory_bus_width_bits=optional(st.integers(1, MAX_SAFE_INTEGER)),
    memory_bandwidth_bytes_per_second=optional(st.integers(1, MAX_SAFE_INTEGER)),
    l2_cache_bytes=optional(st.integers(1, MAX_SAFE_INTEGER)),
    ecc_enabled=optional(st.booleans()),
    max_clock_hz=optional(st.integers(1, MAX_SAFE_INTEGER)),
    application_clock_hz=optional(st.integers(1, MAX_SAFE_INTEGER)),
    application_memory_clock_hz=optional(st.integers(1, MAX_SAFE_INTEGER)),
    power_limit_milliwatts=optional(st.integers(1, MAX_SAFE_INTEGER)),
    host_cpu=optional(texts),
    host_cpu_cores=optional(st.integers(1, MAX_SAFE_INTEGER)),
    host_cpu_frequency_policy=optional(texts),
)
environment_specs = st.builds(
    m.EnvironmentSpec,
    hardware=hardwares,
    software=optional(st.dictionaries(software_keys, versions, max_size=5)),
    provenance=optional(provenances),
)
execution_environments = _record(m.ExecutionEnvironment, environment_specs)

workload_specs = st.builds(
    m.WorkloadSpec,
    kernel=slugs,
    pass_=literal_values(m.Pass),
    parameters=st.dictionaries(slugs, scalars, max_size=6),
    dtype=slugs,
    settings=optional(st.dictionaries(st.text(max_size=20), json_values, max_size=4)),
)
workloads = _record(m.Workload, workload_specs)

implementation_specs = st.builds(
    m.ImplementationSpec,
    provider=slugs,
    backend=optional(slugs),
    package=optional(st.builds(m.Package, name=texts, version=optional(versions))),
    entry_point=optional(texts),
    source=optional(
        st.builds(m.SourceLocation, repository=uris, revision=optional(texts), path=optional(texts))
    ),
)
implementations = _record(m.Implementation, implementation_specs)

any_bundles = st.builds(
    m.Bundle,
    run=benchmark_runs,
    protocol=optional(benchmark_protocols),
    workload=optional(workloads),
    environment=optional(execution_environments),
    implementation=optional(implementations),
    json_schema=_schema_ids(m.Bundle),
)

#: Kind → strategy for model instances of it ("Bundle" included).
MODELS: Mapping[str, st.SearchStrategy[Any]] = {
    "BenchmarkRun": benchmark_runs,
    "BenchmarkProtocol": benchmark_protocols,
    "ExecutionEnvironment": execution_environments,
    "Workload": workloads,
    "Implementation": implementations,
    "Bundle": any_bundles,
}
RECORD_KINDS = tuple(kind for kind in MODELS if kind != "Bundle")


# --------------------------------------------------------------------------- valid bundles


@st.composite
def valid_run_specs(draw: st.DrawFn, /, **digests_given: str) -> m.RunSpec:
    """A run spec that passes every check, semantic ones included.

    A passed run carries statistics that do not decrease in the order of
    :data:`kernelindex_sdk.checks.v1alpha1.ORDER` (the summary and the measurements
    together, measurements in the metric's base unit) and a primary statistic that is
    in its summary; a run that did not pass carries a reason. Every run is observed in
    the past. References are drawn at random unless given (``protocol_digest=...``).
    """
    status = draw(st.sampled_from(["passed", "passed", "passed", "failed", "oom", "skipped"]))
    refs = {
        f"{member}_digest": digests_given.get(f"{member}_digest") or draw(digests)
        for member in ("protocol", "workload", "environment", "implementation")
    }
    moment = draw(st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2024, 12, 31)))
    common: dict[str, Any] = {
        "status": status,
        "observed_at": _rfc3339(moment, draw(_fractions), "Z"),
        "quality_flags": draw(optional(quality_flags)),
        "source_native": draw(optional(source_natives)),
        **refs,
    }
    if status != "passed":
        return m.RunSpec(reason=draw(texts), **common)
    metric = draw(st.sampled_from(["latency", "peak_memory"]))
    base_unit = next(u for u, (mt, factor) in UNITS.items() if mt == metric and factor == 1)
    ranked = draw(st.lists(st.sampled_from(ORDER), min_size=1, unique=True))
    ranked.sort(key=ORDER.index)
    values = sorted(draw(st.lists(counts, min_size=len(ranked), max_size=len(ranked))))
    figures = dict(zip(ranked, values, strict=True))
    for free in ("mean", "stddev"):  # unranked: any value
        if draw(st.booleans()):
            figures[free] = draw(counts)
    in_summary = draw(st.sets(st.sampled_from(sorted(figures)), min_size=1))
    summary = {s: v for s, v in figures.items() if s in in_summary}
    primary = draw(st.sampled_from(sorted(summary)))
    samples = draw(sample_counts)
    extra = tuple(
        m.Measurement(metric=metric, unit=base_unit, statistic=s, value=v)  # type: ignore[arg-type]
        for s, v in figures.items()
        if s not in in_summary
    )
    result: dict[str, Any] = (
        {"timing": m.Timing(latency_ns=summary, primary_statistic=primary, samples=samples)}  # type: ignore[arg-type]
        if metric == "latency"
        else {"memory": m.Memory(peak_bytes=summary, primary_statistic=primary, samples=samples)}  # type: ignore[arg-type]
    )
    return m.RunSpec(measurements=extra or None, **common, **result)


valid_runs = _record(m.BenchmarkRun, valid_run_specs())

#: Kind → strategy for valid model instances of it (records only; see :func:`bundles`).
_VALID: Mapping[str, st.SearchStrategy[Any]] = {**MODELS, "BenchmarkRun": valid_runs}


@st.composite
def consistent_bundles(draw: st.DrawFn) -> m.Bundle:
    """A valid bundle model: its run references the embedded records by their real
    digests (absent members by arbitrary ones) and passes every check."""
    members: dict[str, Any] = {
        "protocol": draw(optional(benchmark_protocols)),
        "workload": draw(optional(workloads)),
        "environment": draw(optional(execution_environments)),
        "implementation": draw(optional(implementations)),
    }
    refs = {
        f"{member}_digest": digest(unstructure(record))
        for member, record in members.items()
        if record is not None
    }
    run = m.BenchmarkRun(
        metadata=draw(metadatas),
        spec=draw(valid_run_specs(**refs)),
        json_schema=draw(_schema_ids(m.BenchmarkRun)),
    )
    return m.Bundle(run=run, json_schema=draw(_schema_ids(m.Bundle)), **members)


def models(kind: str) -> st.SearchStrategy[Any]:
    """Model instances of ``kind`` (``"Bundle"`` included) that the schemas accept,
    the semantic rules not always (see the module docstring)."""
    try:
        return MODELS[kind]
    except KeyError:
        raise ValueError(f"no kind {kind!r}: one of {', '.join(MODELS)}") from None


def records(kind: str, *, models: bool = False) -> st.SearchStrategy[Any]:
    """Valid records of ``kind``: plain JSON (``models=False``) or model instances."""
    if kind == "Bundle":
        return bundles(models=models)
    try:
        strategy = _VALID[kind]
    except KeyError:
        raise ValueError(f"no record kind {kind!r}: one of {', '.join(RECORD_KINDS)}") from None
    return strategy if models else strategy.map(unstructure)


def bundles(*, models: bool = False) -> st.SearchStrategy[Any]:
    """Valid bundles whose run references its embedded records by their digests."""
    strategy = consistent_bundles()
    return strategy if models else strategy.map(unstructure)
