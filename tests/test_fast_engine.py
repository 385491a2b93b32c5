"""The fast engine (jsonschema-rs) against the reference engine (python-jsonschema).

The fast engine trusts its compiled validator only when it says *valid*, so the law
that matters is: **whenever the fast path accepts an instance, the reference accepts
it too**. Every test below checks it, and checks that the engine's answer equals the
reference's, on:

* the seeds, the examples (``examples/``, ``tests/examples/``) and the corpus
  generator's bundles;
* instances hypothesis-jsonschema generates from each kind's schema;
* mutations of valid instances: a required key dropped, an unknown key added, a value
  of the wrong type, bad date-times, URIs, digests, names and architectures, strings
  with newlines, non-ASCII text and lone surrogates, out-of-range numbers.

It also checks that the fast path is *used*: every packaged schema compiles, and the
valid corpus is accepted by the compiled validator itself, not by the fallback.
"""

from __future__ import annotations

import copy
import functools
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from profiles import examples, long_profile
from strategies import replaced_at, schema_instances

from kernelindex_sdk.schema.registry import SchemaRegistry, default_registry, packaged_schema_root
from kernelindex_sdk.validating.engine import JsonschemaEngine
from kernelindex_sdk.validating.validation import is_bundle, split_document

jsonschema_rs = pytest.importorskip("jsonschema_rs")

from kernelindex_sdk.validating import fastengine  # noqa: E402
from kernelindex_sdk.validating.fastengine import (  # noqa: E402
    SIMPLE_URI,
    FastEngine,
    format_function,
    quick_part,
)

ROOT = Path(__file__).resolve().parent.parent
API = "kernelindex.dev/v1alpha1"

REGISTRY = default_registry()
FAST = FastEngine(REGISTRY)
REFERENCE = JsonschemaEngine(REGISTRY)
KINDS = sorted(e.kind for e in REGISTRY.entries)

SETTINGS = settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)


def schema_id_for(value: Any) -> str | None:
    """The schema the session would route an item to (None: it routes nowhere)."""
    head = value.get("run") if is_bundle(value) else value
    if not isinstance(head, dict):
        return None
    try:
        if is_bundle(value):
            return REGISTRY.bundle(head.get("apiVersion")).id
        return REGISTRY.route(head.get("apiVersion"), head.get("kind")).id
    except Exception:
        return None


def has_final_newline(value: Any) -> bool:
    """True if a string (or key) in ``value`` ends in a newline.

    Python's ``$`` matches before a final newline, Rust's does not: there the fast
    path says invalid and leaves the verdict to the reference, which may accept.
    """
    if isinstance(value, str):
        return value.endswith("\n")
    if isinstance(value, dict):
        return any(has_final_newline(k) or has_final_newline(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_final_newline(v) for v in value)
    return False


def assert_agrees(schema_id: str, instance: Any, *, expect_fast: bool = False) -> bool:
    """The laws, for one instance; returns the reference verdict."""
    reference = REFERENCE.is_valid(schema_id, instance)
    fast = FAST.fast_verdict(schema_id, instance)
    if fast is True:
        assert reference, f"fast path accepted what the reference rejects: {instance!r:.300}"
    assert FAST.is_valid(schema_id, instance) == reference
    if expect_fast and reference and not has_final_newline(instance):
        assert fast is True, f"valid instance missed the fast path: {instance!r:.300}"
    whole = FAST.split(schema_id)
    # The schema taken apart, with no member kept in the shell, with the run kept (as
    # ValidationSession does) and with two kept: valid exactly when every part is.
    for keep in KEEPS if whole is not None else ():
        split = FAST.split(schema_id, keep)
        assert split is not None
        shell, members = split
        assert {member for member, _ in members} == {m for m, _ in whole[1]} - keep
        parts = _shell_accepts(shell, instance) and all(
            FAST.is_valid(member_id, instance[member])
            for member, member_id in members
            if member in instance
        )
        assert parts == reference or (reference and has_final_newline(instance)), instance
    return reference


KEEPS = (frozenset(), frozenset({"run"}), frozenset({"run", "environment"}))


def _shell_accepts(shell: Callable[[Any], bool], instance: Any) -> bool:
    """A shell's verdict as ValidationSession.passes reads it: raising (a lone
    surrogate in a member it keeps, ...) is "not known to pass"."""
    try:
        return shell(instance)
    except Exception:
        return False


# --------------------------------------------------------------------------- corpus


def _refuse(name: str) -> Any:
    raise ValueError(name)


def _documents() -> Iterator[tuple[str, Any]]:
    paths = [
        *sorted((ROOT / "examples").rglob("*.json")),
        *sorted((ROOT / "tests" / "examples").rglob("*.json")),
        *sorted((ROOT / "tests" / "examples").rglob("*.jsonl")),
    ]
    for path in paths:
        if path.name.endswith(".expect.json"):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        chunks = text.splitlines() if path.suffix == ".jsonl" else [text]
        for index, chunk in enumerate(chunks):
            try:  # JSON values only: NaN/Infinity are not JSON (intake refuses them)
                value = json.loads(chunk, parse_constant=_refuse)
            except ValueError:
                continue
            yield f"{path.relative_to(ROOT)}:{index}", value


def corpus_items() -> list[tuple[str, str, Any]]:
    items = []
    for name, document in _documents():
        for pointer, item in split_document(document):
            schema_id = schema_id_for(item)
            if schema_id is not None:
                items.append((f"{name}{pointer}", schema_id, item))
    return items


CORPUS = corpus_items()


def test_only_the_bundle_schema_is_taken_apart() -> None:
    split = {entry.kind: FAST.split(entry.id) for entry in REGISTRY.entries}
    assert [kind for kind, found in split.items() if found is not None] == ["Bundle"]
    _, members = split["Bundle"]
    assert dict(members) == {
        "run": REGISTRY.route(API, "BenchmarkRun").id,
        "protocol": REGISTRY.route(API, "BenchmarkProtocol").id,
        "workload": REGISTRY.route(API, "Workload").id,
        "environment": REGISTRY.route(API, "ExecutionEnvironment").id,
        "implementation": REGISTRY.route(API, "Implementation").id,
    }


@pytest.mark.parametrize(
    "change",
    [
        {"minProperties": 2},  # a keyword beyond properties: not a plain conjunction
        {"unevaluatedProperties": False},
        {"properties": {"run": {"$ref": "benchmark-run.schema.json", "required": ["spec"]}}},
    ],
    ids=["minProperties", "unevaluatedProperties", "ref-with-siblings"],
)
def test_a_bundle_schema_with_more_than_members_is_not_taken_apart(
    tmp_path: Path, change: dict[str, Any]
) -> None:
    root = tmp_path / "schemas"
    shutil.copytree(packaged_schema_root(), root)
    (path,) = root.rglob("bundle.schema.json")
    schema = json.loads(path.read_text(encoding="utf-8"))
    for key, value in change.items():
        merge = isinstance(value, dict) and key in schema
        schema[key] = {**schema[key], **value} if merge else value
    path.write_text(json.dumps(schema), encoding="utf-8")
    registry = SchemaRegistry.from_directory(root)
    split = FastEngine(registry).split(registry.bundle(API).id)
    if "run" in change.get("properties", {}):
        assert split is not None and "run" not in dict(split[1])  # validated whole, in the shell
    else:
        assert split is None


def test_every_packaged_schema_is_on_the_fast_path() -> None:
    for entry in REGISTRY.entries:
        assert FAST.compiled(entry.id), entry.id


def test_the_corpus_is_not_empty() -> None:
    assert len(CORPUS) >= 4
    assert any(REFERENCE.is_valid(schema_id, item) for _, schema_id, item in CORPUS)


@pytest.mark.parametrize(("name", "schema_id", "item"), CORPUS, ids=[c[0] for c in CORPUS])
def test_corpus_verdicts(name: str, schema_id: str, item: Any) -> None:
    assert_agrees(schema_id, item, expect_fast=True)


def test_generated_corpus_bundles() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import make_corpus
    finally:
        sys.path.pop(0)
    bundle_id = REGISTRY.bundle(API).id
    for bundle in make_corpus.bundles(40):
        assert assert_agrees(bundle_id, bundle, expect_fast=True)
    assert not assert_agrees(bundle_id, make_corpus.invalid_bundle())


# --------------------------------------------------------------------------- generated


def _schema_for(kind: str) -> dict[str, Any]:
    flat, _ = fastengine._prepare(REGISTRY, REGISTRY.find(kind, API).id)
    assert isinstance(flat, dict)
    return _bounded(flat)


def _bounded(schema: Any) -> Any:
    """Integers kept within ±(2**53 - 1), as intake keeps them (and generation is saner)."""
    if isinstance(schema, dict):
        out = {k: _bounded(v) for k, v in schema.items()}
        if out.get("type") == "integer":
            out.setdefault("maximum", 2**53 - 1)
            out.setdefault("minimum", -(2**53 - 1))
        return out
    if isinstance(schema, list):
        return [_bounded(v) for v in schema]
    return schema


_CONDITIONALS = frozenset({"allOf", "anyOf", "oneOf", "not", "if", "then", "else"})


def _loose(schema: Any) -> Any:
    """The schema without conditionals: hypothesis-jsonschema draws from it fast."""
    if isinstance(schema, dict):
        out = {}
        for key, value in schema.items():
            if key in _CONDITIONALS:
                continue
            if key in ("properties", "patternProperties"):
                out[key] = {k: _loose(v) for k, v in value.items()}
            elif key in ("items", "additionalProperties", "propertyNames"):
                out[key] = _loose(value)
            else:
                out[key] = value
        return out
    return schema


def _repair(kind: str, value: Any) -> Any:
    """Make a draw from the loose schema satisfy the conditionals, where it easily can."""
    specs = []
    if kind == "BenchmarkRun":
        specs = [value["spec"]]
    elif kind == "Bundle":
        specs = [value["run"]["spec"]]
        protocol = value.get("protocol")
        if protocol is not None:
            _repair("BenchmarkProtocol", protocol)
    elif kind == "BenchmarkProtocol":
        measurement = value["spec"]["measurement"]
        if "timer" not in measurement and "memoryProbe" not in measurement:
            measurement["timer"] = "cuda_events"
    for spec in specs:
        if spec.get("status") == "passed":
            spec.pop("reason", None)
            if "timing" in spec:
                spec.pop("memory", None)
        else:
            for key in ("timing", "memory", "measurements"):
                spec.pop(key, None)
            spec.setdefault("reason", "generated")
    return value


@functools.cache
def instances(kind: str) -> st.SearchStrategy[Any]:
    """Instances of ``kind``: most valid, some not (then the laws still hold).

    Runs and bundles come from the schema with its status conditionals resolved into
    plain cases (``strategies.schema_instances``): hypothesis-jsonschema turns
    conditionals into filters, which made these draws take minutes per test. Built once
    per kind: the tests draw from it on every example, and building it costs up to
    seconds (``from_schema``).
    """
    if kind in ("BenchmarkRun", "Bundle"):
        return schema_instances(kind)
    from hypothesis_jsonschema import from_schema

    return from_schema(_loose(_schema_for(kind))).map(lambda value: _repair(kind, value))


@pytest.mark.parametrize("kind", KINDS)
@SETTINGS
@given(data=st.data())
def test_generated_instances(kind: str, data: st.DataObject) -> None:
    instance = data.draw(instances(kind))
    assert_agrees(REGISTRY.find(kind, API).id, instance, expect_fast=True)


# --------------------------------------------------------------------------- mutated

BAD_STRINGS = [
    "",
    "x",
    "X",
    "a\n",
    "\n",
    "é",
    "\u2028",
    "\ud800",
    "a" * 300,
    "2024-02-30T00:00:00Z",
    "2024-12-31T23:59:60Z",
    "2024-06-30t12:00:00z",
    "2024-06-30T12:00:00Z\n",
    "2024-06-30T12:00:00+24:00",
    "0000-01-01T00:00:00Z",
    "2024-06-30T12:00:00.Z",
    "2024-06-30 12:00:00Z",
    "https://exa mple.com/x",
    "https://example.com/\n",
    "http://[::1",
    "urn:example:x",
    "a:b",
    "sha256:" + "A" * 64,
    "sha256:" + "a" * 64 + "\n",
    "sha256:" + "a" * 63,
    "sm_8",
    "sm_90a",
    "gfx90a\n",
    "Name-With-Caps",
    "-leading-dash",
    "median",
    "passed",
    "failed",
    "kernelindex.dev/v1alpha1",
]
BAD_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    1,
    1.0,
    1.5,
    -0.5,
    2**53 - 1,
    2**60,
    -(2**60),
    10**30,
    [],
    ["x"],
    ["a", "a"],
    [1, 1.0],
    {},
    {"k": "v"},
    *BAD_STRINGS,
]


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*path, index))


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


@st.composite
def mutated(draw: st.DrawFn, base: Any) -> Any:
    """``base`` with one to three mutations at random places."""
    value = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(list(_paths(value))))
        target = _at(value, path)
        how = draw(st.sampled_from(["replace", "drop", "add", "rename"]))
        if how == "replace" and path:
            parent = _at(value, path[:-1])
            parent[path[-1]] = draw(st.sampled_from(BAD_VALUES) | st.text(max_size=8))
        elif how == "drop" and isinstance(target, dict) and target:
            del target[draw(st.sampled_from(sorted(target)))]
        elif how == "drop" and isinstance(target, list) and target:
            del target[draw(st.integers(0, len(target) - 1))]
        elif how == "add" and isinstance(target, dict):
            key = draw(st.sampled_from(["unexpected", "timing", "memory", "reason", "x\n"]))
            target[key] = draw(st.sampled_from(BAD_VALUES))
        elif how == "add" and isinstance(target, list):
            target.append(draw(st.sampled_from(BAD_VALUES)))
        elif how == "rename" and isinstance(target, dict) and target:
            old = draw(st.sampled_from(sorted(target)))
            target[old + draw(st.sampled_from(["\n", "X", "é", "\ud800"]))] = target.pop(old)
    return value


VALID_BASES = [
    (schema_id, item) for _, schema_id, item in CORPUS if REFERENCE.is_valid(schema_id, item)
]


@SETTINGS
@given(data=st.data())
def test_mutated_corpus(data: st.DataObject) -> None:
    schema_id, base = data.draw(st.sampled_from(VALID_BASES))
    assert_agrees(schema_id, data.draw(mutated(base)))


@pytest.mark.parametrize("kind", KINDS)
@SETTINGS
@given(data=st.data())
def test_mutated_generated(kind: str, data: st.DataObject) -> None:
    base = data.draw(instances(kind))
    assert_agrees(REGISTRY.find(kind, API).id, data.draw(mutated(base)))


@pytest.mark.hypothesis_long
@pytest.mark.parametrize(
    "bad",
    # One string of each family in the quick run (text, date-time, uri, digest, slug,
    # the API version), every one under slow.
    [
        pytest.param(
            bad, marks=() if i in (0, 4, 7, 9, 12, 17, 23, 26, 29, 33) else pytest.mark.slow
        )
        for i, bad in enumerate(BAD_STRINGS)
    ],
)
def test_every_string_field_of_a_seed(bad: str) -> None:
    """Each bad string in each string-valued place of the first two valid corpus items
    (seeds 000 and 001: the same places, other values); of the first alone in the
    ``default`` hypothesis profile."""
    for schema_id, base in VALID_BASES[: 2 if long_profile() else 1]:
        for path in _paths(base):
            if path and isinstance(_at(base, path), str):
                value = copy.deepcopy(base)
                _at(value, path[:-1])[path[-1]] = bad
                assert_agrees(schema_id, value)


def test_non_json_input_falls_back_or_agrees() -> None:
    """Types jsonschema-rs refuses make the fast path raise; the reference answers."""
    bundle_id = REGISTRY.bundle(API).id
    schema_id, base = VALID_BASES[0]

    class Str(str):
        pass

    for odd in (Str("x"), b"x", {1: 2}, {"k", "v"}, 1 + 2j):
        value = copy.deepcopy(base)
        value["extra"] = odd
        assert FAST.fast_verdict(schema_id, value) in (None, False)
        assert FAST.is_valid(schema_id, value) == REFERENCE.is_valid(schema_id, value)
    deep: Any = "x"
    for _ in range(2000):  # deeper than jsonschema-rs recurses: it raises, the reference answers
        deep = [deep]
    value = copy.deepcopy(base)
    value["spec"] = {"qualityFlags": [deep, deep]}
    assert FAST.fast_verdict(schema_id, value) in (None, False)
    assert FAST.is_valid(bundle_id, {"run": "x"}) is False


# --------------------------------------------------------------------------- formats

FORMAT_SAMPLES = [
    *BAD_STRINGS,
    "2024-09-03T15:38:37.000Z",
    "2024-09-03T15:38:37+05:30",
    "2024-02-29T00:00:00Z",
    "2023-02-29T00:00:00Z",
    "2024-09-03T15:38:37.123456789-00:00",
    "２０２４-09-03T15:38:37Z",
    "2024-09-03T15:38:37ｚ",
    "https://github.com/linkedin/Liger-Kernel",
    "https://example.com:8080/a/b?c=d#e",
    "mailto:someone@example.com",
    "file:///tmp/x",
    "https://例え.jp/",
    "http://[::1]:80/",
    "http://[v1.x]/",
    "ht tp://x",
]


@pytest.mark.parametrize("name", ["date-time", "uri"])
def test_format_functions_are_the_references(name: str) -> None:
    from jsonschema import Draft202012Validator

    checker = Draft202012Validator.FORMAT_CHECKER
    function = format_function(name)
    assert function is not None
    for sample in FORMAT_SAMPLES:
        assert function(sample) == checker.conforms(sample, name), sample


def test_date_time_on_every_day_of_every_month_of_leap_and_common_years() -> None:
    from rfc3339_validator import validate_rfc3339  # type: ignore[import-untyped]

    function = format_function("date-time")
    assert function is not None
    for year in (0, 1, 4, 100, 200, 400, 1900, 1999, 2000, 2023, 2024, 2100, 9996, 9999):
        for month in range(14):
            for day in range(40):
                sample = f"{year:04d}-{month:02d}-{day:02d}t12:00:00.5z"
                assert function(sample) == bool(validate_rfc3339(sample.upper())), sample


@pytest.mark.parametrize(
    "digits",
    ["0123456789", "٠١٢٣٤٥٦٧٨٩", "０１２３４５６７８９"],
    ids=["ascii", "arabic-indic", "fullwidth"],
)
def test_date_time_with_any_decimal_digits(digits: str) -> None:
    """``\\d`` in the reference's regex is any Unicode digit: only ASCII text may take
    the shortcut that reads the date from fixed places."""
    from rfc3339_validator import validate_rfc3339  # type: ignore[import-untyped]

    function = format_function("date-time")
    assert function is not None
    table = str.maketrans("0123456789", digits)
    dates = ("0000-01-01", "2023-02-28", "2023-02-29", "2024-02-29", "2023-04-31", "2023-12-31")
    for date in dates:
        sample = f"{date}T00:47:34.261Z".translate(table)
        assert function(sample) == bool(validate_rfc3339(sample.upper())), sample


@settings(max_examples=examples(300), deadline=None)
@given(
    st.text(max_size=40)
    | st.from_regex(
        r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})\n?\Z"
    )
    | st.from_regex(r"\A[a-zA-Z][a-zA-Z0-9+.-]*:[!-~]{0,30}\Z")
)
def test_format_functions_on_generated_strings(sample: str) -> None:
    from jsonschema import Draft202012Validator

    checker = Draft202012Validator.FORMAT_CHECKER
    for name in ("date-time", "uri"):
        function = format_function(name)
        assert function is not None
        assert function(sample) == checker.conforms(sample, name)


@settings(max_examples=examples(300), deadline=None)
@given(st.from_regex(SIMPLE_URI, fullmatch=True))
def test_simple_uris_are_uris_to_the_reference(sample: str) -> None:
    """The shortcut that skips importing rfc3986_validator only accepts what it accepts."""
    from jsonschema import Draft202012Validator
    from rfc3986_validator import validate_rfc3986  # type: ignore[import-untyped]

    assert validate_rfc3986(sample, rule="URI")
    assert Draft202012Validator.FORMAT_CHECKER.conforms(sample, "uri")


def test_simple_uri_needs_no_uri_library() -> None:
    """A typical record's URIs are checked without importing rfc3986_validator."""
    code = (
        "import sys; from kernelindex_sdk.validating.fastengine import format_function; "
        "f = format_function('uri'); "
        "assert f('https://github.com/linkedin/Liger-Kernel'); "
        "assert 'rfc3986_validator' not in sys.modules; "
        "assert not f('ht tp://x'); assert 'rfc3986_validator' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("name", sorted(fastengine.SUBSET_PATTERNS))
def test_subset_patterns_are_portable_and_known_formats(name: str) -> None:
    assert fastengine._pattern_is_portable(fastengine.SUBSET_PATTERNS[name])
    assert format_function(name) is not None


@settings(max_examples=examples(300), deadline=None)
@given(data=st.data())
def test_what_a_subset_pattern_accepts_its_format_accepts(data: st.DataObject) -> None:
    """Every string the Rust validator lets through a format's subset pattern, the
    reference's format check accepts (Rust, as it runs: Python's ``$`` would also let
    a final newline through)."""
    from jsonschema import Draft202012Validator

    name = data.draw(st.sampled_from(sorted(fastengine.SUBSET_PATTERNS)))
    pattern = fastengine.SUBSET_PATTERNS[name]
    sample = data.draw(st.from_regex(pattern) | st.text(max_size=40))
    rust = jsonschema_rs.Draft202012Validator(
        {"pattern": pattern}, pattern_options=jsonschema_rs.RegexOptions()
    )
    try:
        matched = rust.is_valid(sample)
    except ValueError:  # a lone surrogate
        return
    if matched:
        assert Draft202012Validator.FORMAT_CHECKER.conforms(sample, name), sample


def test_the_date_time_subset_pattern_covers_common_timestamps() -> None:
    pattern = re.compile(fastengine.SUBSET_PATTERNS["date-time"])
    for sample in ("2024-09-03T15:38:37.000Z", "0001-01-01T00:00:00+23:59", "9999-12-28T23:59:59Z"):
        assert pattern.fullmatch(sample), sample
    for day in ("01-31", "03-31", "04-30", "07-31", "08-31", "11-30", "12-31", "02-28"):
        assert pattern.fullmatch(f"2023-{day}T00:00:00Z"), day
    for day in ("02-29", "02-30", "04-31", "06-31", "09-31", "11-31", "01-32", "01-00"):
        assert not pattern.fullmatch(f"2024-{day}T00:00:00Z"), day
    for sample in ("0000-01-01T00:00:00Z", "2024-01-01t00:00:00Z", "2024-01-01T24:00:00Z"):
        assert not pattern.fullmatch(sample), sample


def test_the_date_time_subset_pattern_on_every_day_of_every_month() -> None:
    """What Rust matches on any day of any month of leap and common years, the
    reference accepts; and it matches every valid day but February 29th."""
    function = format_function("date-time")
    assert function is not None
    rust = jsonschema_rs.Draft202012Validator(
        {"pattern": fastengine.SUBSET_PATTERNS["date-time"]},
        pattern_options=jsonschema_rs.RegexOptions(),
    )
    for year in (0, 1, 4, 100, 400, 1900, 2000, 2023, 2024, 2100, 9999):
        for month in range(14):
            for day in range(40):
                sample = f"{year:04d}-{month:02d}-{day:02d}T12:00:00.5Z"
                matched, valid = rust.is_valid(sample), function(sample)
                assert valid or not matched, sample
                assert matched or not valid or (month, day) == (2, 29), sample


def _runs_observed_on(dates: list[str]) -> tuple[str, list[dict[str, Any]]]:
    schema_id = REGISTRY.route(API, "BenchmarkRun").id
    base = next(item for sid, item in VALID_BASES if sid == schema_id)
    runs = []
    for date in dates:
        run = copy.deepcopy(base)
        run["spec"]["observedAt"] = f"{date}T12:00:00.5Z"
        runs.append(run)
    return schema_id, runs


def test_a_run_on_any_day_gets_the_references_verdict() -> None:
    """Days the subset pattern leaves out (February 29th, day 00, year 0) go to the
    full check; the days it covers agree with the reference."""
    dates = [
        f"{year:04d}-{month:02d}-{day:02d}"
        for year in (0, 2023, 2024)
        for month in (1, 2, 4)
        for day in range(33)
    ]
    schema_id, runs = _runs_observed_on(dates)
    verdicts = [assert_agrees(schema_id, run) for run in runs]
    assert any(verdicts) and not all(verdicts)
    assert verdicts[dates.index("2024-02-29")] and not verdicts[dates.index("2023-02-29")]


def test_a_common_timestamp_is_accepted_without_a_call_into_python(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The Rust validator checks the subset pattern itself; the reference's function
    runs only for what the pattern leaves out."""
    calls: list[str] = []

    def counting(name: str) -> Any:
        function = format_function(name)
        assert function is not None

        def counted(value: str) -> bool:
            calls.append(value)
            return function(value)

        return counted

    monkeypatch.setattr(fastengine, "format_function", counting)
    engine = FastEngine(REGISTRY)
    schema_id, (common, leap_day, bad) = _runs_observed_on(
        ["2024-09-03", "2024-02-29", "2023-02-29"]
    )
    assert engine.fast_verdict(schema_id, common) is True
    assert calls == []
    assert engine.fast_verdict(schema_id, leap_day) is True
    assert engine.fast_verdict(schema_id, bad) is False
    assert calls == ["2024-02-29T12:00:00.5Z", "2023-02-29T12:00:00.5Z"]


def test_unknown_format_has_no_function() -> None:
    assert format_function("email") is None


# --------------------------------------------------------------------------- patterns


def _schema_patterns() -> list[str]:
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("pattern"), str):
                found.add(node["pattern"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for entry in (*REGISTRY.entries, *REGISTRY.support):
        walk(entry.contents)
    return sorted(found)


PATTERNS = _schema_patterns()


def test_schema_patterns_are_portable() -> None:
    assert PATTERNS
    for pattern in PATTERNS:
        assert fastengine._pattern_is_portable(pattern), pattern


@pytest.mark.parametrize(
    "pattern",
    [
        r"^\d+$",
        r"\w",
        r"[[:alpha:]]",
        r"(?i)abc",
        r"a{,3}",
        r"[a&&b]",
        r"[a-z--b]",
        r"(?=a)",
        r"a*+",
        r"a{3,2}",
        r"^a$b",
        r"[]a]",
        r"a\Z",
        r"(a",
        r"a)",
        "é",
        r"\p{L}",
    ],
)
def test_unportable_patterns_are_refused(pattern: str) -> None:
    assert not fastengine._pattern_is_portable(pattern)


@pytest.mark.parametrize(
    "pattern",
    [
        r"^[a-z0-9][a-z0-9._-]*$",
        r"^(sm_[0-9]{2,3}[a-z]?|gfx[0-9a-f]{3,4})$",
        r"a|b(?:c)*?$",
        r"^[+-]\.x{2,}",
    ],
)
def test_portable_patterns_are_accepted(pattern: str) -> None:
    assert fastengine._pattern_is_portable(pattern)


@settings(max_examples=examples(300), deadline=None)
@given(pattern=st.sampled_from(PATTERNS), data=st.data())
def test_patterns_match_alike(pattern: str, data: st.DataObject) -> None:
    """Rust accepts only what Python accepts (it differs only on a final newline)."""
    sample = data.draw(
        st.from_regex(pattern)
        | st.text(max_size=20)
        | st.from_regex(pattern).map(lambda s: s + "\n")
    )
    rust = jsonschema_rs.Draft202012Validator(
        {"pattern": pattern}, pattern_options=jsonschema_rs.RegexOptions()
    )
    python = re.search(pattern, sample) is not None
    try:
        verdict = rust.is_valid(sample)
    except ValueError:  # a lone surrogate
        return
    if verdict:
        assert python
    elif python:
        assert sample.endswith("\n")


# --------------------------------------------------------------------------- fallback


def test_default_engine_falls_back_without_jsonschema_rs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema_rs", None)  # import raises ImportError
    fastengine._ENGINES.clear()
    try:
        assert not fastengine.available()
        assert isinstance(fastengine.default_engine(REGISTRY), JsonschemaEngine)
    finally:
        fastengine._ENGINES.clear()


def test_default_engine_can_be_forced_to_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNELINDEX_ENGINE", "jsonschema")
    assert isinstance(fastengine.default_engine(REGISTRY), JsonschemaEngine)
    monkeypatch.delenv("KERNELINDEX_ENGINE")
    assert isinstance(fastengine.default_engine(REGISTRY), FastEngine)


def _registry_with(
    tmp_path: Path, n: dict[str, Any], defs: dict[str, Any] | None = None
) -> SchemaRegistry:
    """A registry of one schema: a Thing whose ``n`` is ``n`` (with ``$defs``)."""
    directory = tmp_path / "example.dev" / "v1"
    directory.mkdir(parents=True)
    schema: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://example.dev/v1/thing.schema.json",
        "type": "object",
        "properties": {"kind": {"const": "Thing"}, "n": n},
    }
    if defs is not None:
        schema["$defs"] = defs
    (directory / "thing.schema.json").write_text(json.dumps(schema), encoding="utf-8")
    return SchemaRegistry.from_directory(tmp_path)


@pytest.mark.parametrize(
    ("schema", "good", "bad"),
    [
        ({"multipleOf": 3}, 9, 10),
        ({"contains": {"const": 1}}, [1], [2]),
        ({"pattern": r"^\d$"}, "1", "x"),
        ({"enum": [1.5]}, 1.5, 2),
        ({"format": "email"}, "a@b.c", "nope"),
        ({"x-custom": 1, "type": "integer"}, 1, "x"),
    ],
)
def test_unsupported_schemas_go_to_the_reference(
    tmp_path: Path, schema: dict[str, Any], good: Any, bad: Any
) -> None:
    registry = _registry_with(tmp_path, schema)
    engine = FastEngine(registry)
    reference = JsonschemaEngine(registry)
    schema_id = registry.entries[0].id
    assert not engine.compiled(schema_id)
    for n in (good, bad):
        instance = {"kind": "Thing", "n": n}
        assert engine.is_valid(schema_id, instance) == reference.is_valid(schema_id, instance)
    assert engine.problems(schema_id, {"kind": "Thing", "n": bad}) == reference.problems(
        schema_id, {"kind": "Thing", "n": bad}
    )


@pytest.mark.parametrize(
    "n",
    [
        {"format": "date-time"},
        {"allOf": [{"type": "string"}, {"format": "date-time"}], "pattern": "^[0-9]"},
        {"properties": {"at": {"allOf": [{"format": "date-time"}]}}, "required": ["at"]},
        {"type": "array", "items": {"format": "date-time"}},  # not a site: no subset
        {"anyOf": [{"format": "date-time"}, {"type": "integer"}]},  # not a site either
    ],
    ids=["plain", "in-allOf-beside-a-pattern", "nested", "in-items", "in-anyOf"],
)
def test_date_times_anywhere_get_the_references_verdict(tmp_path: Path, n: dict[str, Any]) -> None:
    """The stronger schema (a subset pattern beside each date-time) and the full check
    agree with the reference wherever the format sits in a schema."""
    registry = _registry_with(tmp_path, n)
    engine, reference = FastEngine(registry), JsonschemaEngine(registry)
    schema_id = registry.entries[0].id
    assert engine.compiled(schema_id)
    dates = ["2024-09-03T15:38:37Z", "2024-02-29T00:00:00Z", "2023-02-29T00:00:00Z"]
    dates += ["2024-04-31T00:00:00Z", "x", "2024-09-03t15:38:37z", 7]
    check = engine._check(schema_id)
    assert check is not None
    quick = quick_part(check)  # the subset's Rust check, where there is one
    assert (quick is check) == (n.get("type") == "array" or "anyOf" in n)
    for date in dates:
        for value in (date, {"at": date}, [date, "2024-01-31T00:00:00Z"]):
            instance = {"kind": "Thing", "n": value}
            verdict = reference.is_valid(schema_id, instance)
            if engine.fast_verdict(schema_id, instance):
                assert verdict, instance
            assert engine.is_valid(schema_id, instance) == verdict, instance
            if quick(instance):  # what the quick part accepts, the check accepts
                assert check(instance) and verdict, instance
    if quick is not check:  # and it accepts a common timestamp on its own (not dead)
        common = "2024-09-03T15:38:37Z"
        assert any(quick({"kind": "Thing", "n": v}) for v in (common, {"at": common}))


def test_problems_come_from_the_reference() -> None:
    schema_id, base = VALID_BASES[0]
    value = copy.deepcopy(base)
    value["unexpected"] = 1
    assert not FAST.is_valid(schema_id, value)
    assert FAST.problems(schema_id, value, "/x") == REFERENCE.problems(schema_id, value, "/x")


@pytest.mark.parametrize(
    "n",
    [
        # Directly recursive.
        {"$ref": "#/$defs/tree"},
        # The recursion reached only after the same definition was inlined once
        # without it: the flattener's memory of inlined targets must not hide it.
        {
            "type": "object",
            "properties": {"leaf": {"$ref": "#/$defs/leaf"}, "tree": {"$ref": "#/$defs/tree"}},
        },
        # Mutually recursive, entered from either side.
        {"anyOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/b"}]},
    ],
)
def test_recursive_refs_go_to_the_reference(tmp_path: Path, n: dict[str, Any]) -> None:
    defs = {
        "leaf": {"type": "integer"},
        "tree": {
            "type": "object",
            "properties": {"value": {"$ref": "#/$defs/leaf"}, "child": {"$ref": "#/$defs/tree"}},
        },
        "a": {"type": "object", "properties": {"b": {"$ref": "#/$defs/b"}}},
        "b": {"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}}},
    }
    registry = _registry_with(tmp_path, n, defs)
    engine = FastEngine(registry)
    reference = JsonschemaEngine(registry)
    schema_id = registry.entries[0].id
    assert not engine.compiled(schema_id)
    for value in ({"value": 1, "child": {"value": "x"}}, {"leaf": 1, "tree": {"child": {}}}, {}):
        instance = {"kind": "Thing", "n": value}
        assert engine.is_valid(schema_id, instance) == reference.is_valid(schema_id, instance)


def test_a_definition_referenced_twice_is_inlined_at_both_places(tmp_path: Path) -> None:
    n = {"type": "array", "prefixItems": [{"$ref": "#/$defs/leaf"}, {"$ref": "#/$defs/leaf"}]}
    registry = _registry_with(tmp_path, n, {"leaf": {"type": "integer", "minimum": 0}})
    schema_id = registry.entries[0].id
    flat, _ = fastengine._prepare(registry, schema_id)
    leaf = {"type": "integer", "minimum": 0}
    assert flat["properties"]["n"]["prefixItems"] == [leaf, leaf]
    engine = FastEngine(registry)
    assert engine.compiled(schema_id)
    for value, valid in (([1, 2], True), ([1, -2], False), ([-1, 2], False)):
        assert engine.is_valid(schema_id, {"kind": "Thing", "n": value}) is valid


#: Strings a date-time may be given as: well-formed ones, impossible days and times,
#: other spellings of the separators and the zone, and text that is no date.
_DATE_TIME_LIKE = st.one_of(
    st.builds(
        "{:04d}-{:02d}-{:02d}{}{:02d}:{:02d}:{:02d}{}{}".format,
        st.integers(0, 9999),
        st.integers(0, 13),
        st.integers(0, 32),
        st.sampled_from(["T", "t", " ", "_"]),
        st.integers(0, 24),
        st.integers(0, 60),
        st.integers(0, 61),
        st.sampled_from(["", ".5", ".000", ".123456789", ","]),
        st.sampled_from(["Z", "z", "+00:00", "-23:59", "+24:00", "", "+0000"]),
    ),
    st.text(max_size=30),
)


@settings(SETTINGS, max_examples=examples(200))
@given(st.sampled_from(KINDS), st.data())
def test_what_the_quick_part_accepts_the_check_and_the_reference_accept(
    kind: str, data: st.DataObject
) -> None:
    """The law of the quick part (:func:`quick_part`, which ``passes_shared`` asks
    before the shell): a subset. Over drawn instances of every shipped kind, a node
    replaced by a date-time-like string or another value, whatever it accepts the
    whole check accepts, and the reference too; the split shell's likewise."""
    entry = next(e for e in REGISTRY.entries if e.kind == kind)
    instance = data.draw(schema_instances(kind), label="instance")
    path = data.draw(st.sampled_from(list(_paths(instance))), label="path")
    new = data.draw(_DATE_TIME_LIKE | st.integers() | st.none(), label="new")
    split = FAST.split(entry.id)
    for value in (instance, replaced_at(instance, path, new)):
        check = FAST._check(entry.id)
        if check is not None and quick_part(check)(value):
            assert check(value) and REFERENCE.is_valid(entry.id, value), value
        if split is not None and quick_part(split[0])(value):
            assert split[0](value), value
