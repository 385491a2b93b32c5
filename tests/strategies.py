"""Shared hypothesis strategies for kernelindex records, and the settings the laws run under.

Two families:

* **Model strategies** (:data:`MODELS`, :func:`run_specs`, ...) build attrs model
  instances field by field, keeping to what the schemas require: names and slugs
  match their patterns, digests are ``sha256:`` + 64 hex digits, timestamps are
  RFC 3339, a passed run has exactly one of timing/memory and no reason, a run that
  did not pass has a reason and no result, a protocol names a timer or a memory
  probe, and every integer is within ±(2**53 - 1) (what JCS and the intake accept).
  Field enums are read off the models' ``Literal`` types, so a model/schema
  disagreement in an enum shows up as a schema failure rather than being copied here.
* **Schema strategies** (:func:`schema_instances`) generate straight from the
  schemas with hypothesis-jsonschema, via :func:`kernelindex_sdk.bundled.bundled_schema`
  (hypothesis-jsonschema resolves no ``$ref`` to another file).

:func:`consistent_bundles` builds bundles that pass *all* of validation: their run
references the embedded records by their real digests and its statistics are in order.

Settings: every law uses :func:`law_settings`, whose example count scales with the
hypothesis profile (``profiles.examples``): a tenth in ``default``, the count written in
``long`` (``HYPOTHESIS_PROFILE=long``), twenty times it in ``thorough``.
"""

from __future__ import annotations

import copy
import functools
import json
import random
import string
import warnings
from collections.abc import Mapping
from datetime import datetime
from typing import Any, TypeVar, get_args

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.errors import HypothesisWarning
from hypothesis_jsonschema import from_schema
from profiles import examples

from kernelindex_sdk.bundled import bundled_schema
from kernelindex_sdk.canonical import digest
from kernelindex_sdk.checks.v1alpha1 import ORDER, UNITS
from kernelindex_sdk.models import unstructure
from kernelindex_sdk.models import v1alpha1 as m

T = TypeVar("T")

#: Largest integer magnitude an IEEE double, JCS and the intake accept.
MAX_SAFE_INTEGER = 2**53 - 1

# --------------------------------------------------------------------------- settings


def law_settings(max_examples: int, **overrides: Any) -> settings:
    """Settings for one law: the profile's, with ``max_examples`` scaled by it."""
    return settings(
        max_examples=examples(max_examples),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        **overrides,
    )


# --------------------------------------------------------------------------- primitives


def optional(strategy: st.SearchStrategy[T]) -> st.SearchStrategy[T | None]:
    return st.none() | strategy


def literal_values(tp: Any) -> st.SearchStrategy[str]:
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
finite_floats = st.floats(allow_nan=False, allow_infinity=False)
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

summaries = st.dictionaries(statistics, counts, min_size=1, max_size=6)
timings = st.builds(m.Timing, latency_ns=summaries, primary_statistic=statistics)
memories = st.builds(m.Memory, peak_bytes=summaries, primary_statistic=statistics)
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


benchmark_runs = st.builds(m.BenchmarkRun, metadata=metadatas, spec=run_specs())


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
    )


protocol_specs = st.builds(
    m.ProtocolSpec,
    harness=st.builds(m.Harness, name=texts, repository=optional(uris), version=optional(versions)),
    measurement=measurement_settings(),
    comparability=optional(st.builds(m.Comparability, notes=texts, family=optional(slugs))),
)
benchmark_protocols = st.builds(m.BenchmarkProtocol, metadata=metadatas, spec=protocol_specs)

hardwares = st.builds(
    m.Hardware,
    vendor=slugs,
    product=texts,
    form_factor=optional(texts),
    architecture=optional(architectures),
    device_name=optional(texts),
    memory_bytes=optional(st.integers(1, MAX_SAFE_INTEGER)),
    count=optional(st.integers(1, MAX_SAFE_INTEGER)),
)
environment_specs = st.builds(
    m.EnvironmentSpec,
    hardware=hardwares,
    software=optional(st.dictionaries(software_keys, versions, max_size=5)),
)
execution_environments = st.builds(
    m.ExecutionEnvironment, metadata=metadatas, spec=environment_specs
)

workload_specs = st.builds(
    m.WorkloadSpec,
    kernel=slugs,
    pass_=literal_values(m.Pass),
    parameters=st.dictionaries(slugs, scalars, max_size=6),
    dtype=slugs,
    settings=optional(st.dictionaries(st.text(max_size=20), json_values, max_size=4)),
)
workloads = st.builds(m.Workload, metadata=metadatas, spec=workload_specs)

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
implementations = st.builds(m.Implementation, metadata=metadatas, spec=implementation_specs)

bundles = st.builds(
    m.Bundle,
    run=benchmark_runs,
    protocol=optional(benchmark_protocols),
    workload=optional(workloads),
    environment=optional(execution_environments),
    implementation=optional(implementations),
)

#: Kind → strategy for model instances of it ("Bundle" included).
MODELS: Mapping[str, st.SearchStrategy[Any]] = {
    "BenchmarkRun": benchmark_runs,
    "BenchmarkProtocol": benchmark_protocols,
    "ExecutionEnvironment": execution_environments,
    "Workload": workloads,
    "Implementation": implementations,
    "Bundle": bundles,
}
RECORD_KINDS = tuple(kind for kind in MODELS if kind != "Bundle")

#: Any record of any kind, as wire JSON.
wire_records: st.SearchStrategy[dict[str, Any]] = st.one_of(
    [MODELS[kind] for kind in RECORD_KINDS]
).map(unstructure)


# --------------------------------------------------------------------------- valid bundles


@st.composite
def consistent_bundles(draw: st.DrawFn) -> m.Bundle:
    """A bundle that passes every check, semantic and reference ones included.

    Its run is passed, observed in the past, carries statistics that do not decrease
    in the order of :data:`kernelindex_sdk.checks.v1alpha1.ORDER` (the summary and
    the measurements together, measurements in the metric's base unit), a primary
    statistic that is in the summary, and digests that are those of the embedded
    records (absent members are referenced by arbitrary digests).
    """
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
    extra = tuple(
        m.Measurement(metric=metric, unit=base_unit, statistic=s, value=v)  # type: ignore[arg-type]
        for s, v in figures.items()
        if s not in in_summary
    )
    result: dict[str, Any] = (
        {"timing": m.Timing(latency_ns=summary, primary_statistic=primary)}  # type: ignore[arg-type]
        if metric == "latency"
        else {"memory": m.Memory(peak_bytes=summary, primary_statistic=primary)}  # type: ignore[arg-type]
    )
    members = {
        "protocol": draw(optional(benchmark_protocols)),
        "workload": draw(optional(workloads)),
        "environment": draw(optional(execution_environments)),
        "implementation": draw(optional(implementations)),
    }
    refs = {
        f"{member}_digest": digest(unstructure(record)) if record is not None else draw(digests)
        for member, record in members.items()
    }
    moment = draw(st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2024, 12, 31)))
    spec = m.RunSpec(
        status="passed",
        observed_at=_rfc3339(moment, draw(_fractions), "Z"),
        measurements=extra or None,
        quality_flags=draw(optional(quality_flags)),
        source_native=draw(optional(source_natives)),
        **refs,
        **result,
    )
    return m.Bundle(run=m.BenchmarkRun(metadata=draw(metadatas), spec=spec), **members)


# --------------------------------------------------------------------------- schema-driven


def _resolve(schema: Mapping[str, Any], ref: str) -> Any:
    """The node a local ``#/...`` pointer names in ``schema``."""
    node: Any = schema
    for token in ref.removeprefix("#").split("/")[1:]:
        node = node[token.replace("~1", "/").replace("~0", "~")]
    return node


def _run_spec_schema(bundled: dict[str, Any]) -> dict[str, Any]:
    """The run spec's schema inside a bundled BenchmarkRun or Bundle schema."""
    run = bundled
    if "run" in bundled.get("properties", {}):
        run = _resolve(bundled, bundled["properties"]["run"]["$ref"])
    spec: dict[str, Any] = _resolve(bundled, run["properties"]["spec"]["$ref"])
    return spec


#: The status rule, resolved into its three disjoint cases: status, fields required,
#: fields forbidden. Their union is exactly what the schema's conditionals accept.
STATUS_CASES: Mapping[str, tuple[list[str], list[str], list[str]]] = {
    "passed-timing": (["passed"], ["timing"], ["memory", "reason"]),
    "passed-memory": (["passed"], ["memory"], ["timing", "reason"]),
    "not-passed": (["failed", "oom", "skipped"], ["reason"], ["timing", "memory", "measurements"]),
}


def status_case_schema(kind: str, case: str) -> dict[str, Any]:
    """The bundled schema of ``kind`` with the run's status conditionals resolved to ``case``.

    hypothesis-jsonschema turns ``if``/``then``/``oneOf``/``not`` into filters, which
    makes BenchmarkRun and Bundle ~10x slower to generate; a plain schema per case is
    not. The conditionals (the spec's ``allOf``) are dropped and replaced by the case's
    constraints; instances are still checked against the real schema by the tests.
    """
    schema = bundled_schema(kind)
    spec = _run_spec_schema(schema)
    statuses, required, forbidden = STATUS_CASES[case]
    spec.pop("allOf")
    spec["properties"]["status"] = {"enum": statuses}
    spec["required"] = [*spec["required"], *required]
    for name in forbidden:
        del spec["properties"][name]  # additionalProperties: false forbids it now
    return schema


def bound_integers(schema: Any) -> Any:
    """Clamp every ``"type": "integer"`` schema to ±(2**53 - 1), in place.

    The schemas set no such bound (see test_laws' known gaps); without it
    hypothesis-jsonschema draws integers the intake and JCS refuse.
    """
    if isinstance(schema, dict):
        if schema.get("type") == "integer":
            schema["minimum"] = max(schema.get("minimum", -MAX_SAFE_INTEGER), -MAX_SAFE_INTEGER)
            schema["maximum"] = min(schema.get("maximum", MAX_SAFE_INTEGER), MAX_SAFE_INTEGER)
        for key, value in schema.items():
            if key not in ("const", "enum", "default", "examples"):
                bound_integers(value)
    elif isinstance(schema, list):
        for item in schema:
            bound_integers(item)
    return schema


def _from_bundled(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """hypothesis-jsonschema on a copy (it rewrites schemas in place), with integers
    clamped and richer generators for two formats: its own ``uri`` is only ever
    ``https://<domain>`` and its ``date-time`` fractions are 0 or 6 digits. What they
    draw is still filtered by jsonschema's format checker and the schema's pattern."""
    # hypothesis-jsonschema warns when a standard format is overridden; that is the point.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HypothesisWarning)
        return from_schema(
            bound_integers(copy.deepcopy(schema)),
            custom_formats={"uri": uris, "date-time": timestamps},
        )


@functools.cache
def schema_instances(kind: str, *, resolve_status: bool = True) -> st.SearchStrategy[Any]:
    """Instances of ``kind`` drawn from its bundled schema by hypothesis-jsonschema.

    With ``resolve_status`` (the default) BenchmarkRun and Bundle draw from the union of
    :func:`status_case_schema` (fast); without it, from the schema as it is (slow).
    Built once per argument: ``from_schema`` spends about a second and a half on a
    bundle's schema, and tests drawing inside their body ask again on every example.
    """
    if resolve_status and kind in ("BenchmarkRun", "Bundle"):
        return st.one_of([_from_bundled(status_case_schema(kind, c)) for c in STATUS_CASES])
    return _from_bundled(bundled_schema(kind))


# --------------------------------------------------------------------------- JSON rewriting


def shuffle_keys(value: Any, rnd: random.Random) -> Any:
    """``value`` with every object's keys in a random order (lists keep theirs)."""
    if isinstance(value, dict):
        items = list(value.items())
        rnd.shuffle(items)
        return {k: shuffle_keys(v, rnd) for k, v in items}
    if isinstance(value, list):
        return [shuffle_keys(v, rnd) for v in value]
    return value


_WHITESPACE = " \t\n\r"


def dumps_with_whitespace(value: Any, rnd: random.Random) -> str:
    """JSON text of ``value`` with random insignificant whitespace around every token,
    and strings randomly ASCII-escaped or not."""

    def ws() -> str:
        return "".join(rnd.choice(_WHITESPACE) for _ in range(rnd.choice((0, 0, 1, 3))))

    def string_(s: str) -> str:
        return json.dumps(s, ensure_ascii=rnd.random() < 0.5)

    def write(v: Any) -> str:
        if isinstance(v, dict):
            body = ",".join(
                f"{ws()}{string_(k)}{ws()}:{ws()}{write(x)}{ws()}" for k, x in v.items()
            )
            return "{" + (body or ws()) + "}"
        if isinstance(v, list):
            body = ",".join(f"{ws()}{write(x)}{ws()}" for x in v)
            return "[" + (body or ws()) + "]"
        if isinstance(v, str):
            return string_(v)
        return json.dumps(v)  # numbers (repr: exact), true, false, null

    return ws() + write(value) + ws()


def mutate_somewhere(value: Any, rnd: random.Random) -> Any:
    """A copy of ``value`` with one randomly chosen part changed (always a real change)."""
    if isinstance(value, dict) and value and rnd.random() < 0.8:
        key = rnd.choice(sorted(value))
        return {**value, key: mutate_somewhere(value[key], rnd)}
    if isinstance(value, list) and value and rnd.random() < 0.8:
        i = rnd.randrange(len(value))
        return [*value[:i], mutate_somewhere(value[i], rnd), *value[i + 1 :]]
    return _changed(value, rnd)


def _changed(value: Any, rnd: random.Random) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1 if value < MAX_SAFE_INTEGER else value - 1
    if isinstance(value, float):
        return value + 1 if abs(value) < 2**52 else value / 2
    if isinstance(value, str):
        return value + rnd.choice("x~/é")
    if isinstance(value, list):
        return [*value, None] if not value or rnd.random() < 0.5 else value[:-1]
    if isinstance(value, dict):
        new_key = "".join(value) + "+"  # longer than every key: not among them
        return {**value, new_key: None}
    return None if value is not None else 0
