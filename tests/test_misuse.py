"""Library misuse is a ``TypeError``, a ``ValueError`` or the SDK's own error, with a
clear message — never an exception of Python's internals or of a library the SDK uses
(``RecursionError``, ``OverflowError``, ``AttributeError``, cattrs, rfc8785,
jsonschema), the rule ``docs/library.md`` states ("Misuse and errors").

One test per way in that once escaped (issue #29, item 10), then a property test that
drives every public function (``ki.__all__``, the registry's methods, and the
submodule functions the library guide documents) with hostile values.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from profiles import examples

import kernelindex_sdk as ki
from kernelindex_sdk import models as m
from kernelindex_sdk.base.escaping import int_text, short_repr
from kernelindex_sdk.errors import InvalidEncoding, KernelIndexError
from kernelindex_sdk.reading import sources
from kernelindex_sdk.schema.bundled import bundled_schema, inlined_schema
from kernelindex_sdk.validating.validation import ValidationSession

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "tests" / "examples" / "valid" / "seeds" / "000_0dade080a6775df8.json"

#: More digits than Python turns into text by default (the int-to-str limit: 4,300).
HUGE = 10**5000


def _bundle() -> dict[str, Any]:
    value: dict[str, Any] = json.loads(SEED.read_text("utf-8"))
    return value


def _deep(depth: int = 100_000) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def _cyclic_list() -> list[Any]:
    value: list[Any] = []
    value.append(value)
    return value


def _cyclic_dict() -> dict[str, Any]:
    value: dict[str, Any] = {}
    value["self"] = value
    return value


def _record(spec: Any) -> dict[str, Any]:
    return {"apiVersion": "kernelindex.dev/v1alpha1", "kind": "Workload", "spec": spec}


# ------------------------------------------------------------------------ each way in


def test_find_takes_a_kind_name() -> None:
    registry = ki.default_registry()
    for wrong in (None, 1, b"bundle", ["bundle"]):
        with pytest.raises(TypeError, match=r"find\(\) takes a kind name"):
            registry.find(wrong)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="api_version"):
        registry.find("bundle", 1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="apiVersion"):
        registry.status(None)  # type: ignore[arg-type]
    assert registry.find("BUNDLE").kind == "Bundle"


def test_structure_into_what_is_no_model() -> None:
    for wrong in (1, "BenchmarkRun", object()):
        with pytest.raises(TypeError, match="cannot build"):
            ki.structure({}, wrong)  # type: ignore[arg-type]
    with pytest.raises(ki.ModelError):  # a model, wrong data: still the model's error
        ki.structure({"name": 1}, m.Metadata)


@pytest.mark.parametrize(
    ("value", "code"),
    [(_cyclic_list(), "not-json"), (_cyclic_dict(), "not-json"), (_deep(), "nesting-too-deep")],
    ids=["cyclic-list", "cyclic-dict", "100k-deep"],
)
def test_unstructure_of_a_cyclic_or_deep_value(value: Any, code: str) -> None:
    with pytest.raises(ki.NotJSON) as raised:
        ki.unstructure(value)
    assert [p.code for p in raised.value.problems] == [code]
    assert ki.unstructure([[1], {"a": None}]) == [[1], {"a": None}]  # plain JSON: unchanged


def test_route_and_bundle_of_a_deep_or_cyclic_value() -> None:
    registry = ki.default_registry()
    for value in (_deep(), _cyclic_list(), HUGE):
        with pytest.raises(ki.UnknownKind) as raised:
            registry.route(value, "BenchmarkRun")
        assert len(str(raised.value)) < 1000
        with pytest.raises(ki.UnknownKind):
            registry.bundle(value)
    # A value that is not a string is named by its JSON type, never by Python's repr
    # (tests/examples/invalid/api-version-not-a-string expects it so).
    with pytest.raises(ki.UnknownKind, match=r"\(an array, not a string\)/'BenchmarkRun'"):
        registry.route(["kernelindex.dev/v1alpha1"], "BenchmarkRun")


def test_an_integer_of_5000_digits() -> None:
    record = _record({"kernel": HUGE})
    (problem,) = ki.validate(record)
    assert (problem.pointer, problem.code) == ("/spec/kernel", "number-out-of-range")
    assert "≥2**16609" in problem.message
    for call in (ki.digest, ki.canonicalize, ki.dumps):
        with pytest.raises(ki.NotJSON, match=r"integer ≥2\*\*16609 is outside"):
            call(record)
    with pytest.raises(ki.NotJSON, match=r"integer ≤-2\*\*16609 is outside"):
        ki.canonicalize([-HUGE])


@pytest.mark.parametrize(
    ("value", "pointer", "what"),
    [
        ({"kernel": "a\ud800"}, "/spec/kernel", "string"),
        ({"x\udfff": 1}, "/spec", "object key"),
        (["\ud83d\ude00"], "/spec/0", "string"),  # a pair as two code points: two lone ones
    ],
    ids=["in-a-string", "in-a-key", "a-split-pair"],
)
def test_a_lone_surrogate(value: Any, pointer: str, what: str) -> None:
    record = _record(value)
    message = f"lone surrogate U\\+D[0-9A-F]{{3}} in {what}"
    for call in (ki.digest, ki.canonicalize, ki.dumps):
        with pytest.raises(ki.NotJSON, match=message) as raised:
            call(record)
        assert [(p.pointer, p.code) for p in raised.value.problems] == [
            (pointer, "invalid-encoding")
        ]
    run = _bundle()["run"]
    with pytest.raises(ki.NotJSON, match=message):
        ki.link(run, protocol=_record(value) | {"kind": "BenchmarkProtocol"}, environment=None)


def test_dumps_writes_only_what_loads_reads_back() -> None:
    # The promise in docs/library.md: loads(dumps(x)) == x. Strict intake refuses a
    # lone surrogate, so dumps refuses to write one, with the same words.
    with pytest.raises(InvalidEncoding, match="lone surrogate U\\+D800 in string"):
        ki.loads('"\ud800"')
    with pytest.raises(ki.NotJSON, match="lone surrogate U\\+D800 in string"):
        ki.dumps("\ud800")
    for value in ("\U0001f600 é \u2028", {"\ue000": ["\uffff"]}):
        for indent in (None, 0, 2, 4):
            assert ki.loads(ki.dumps(value, indent=indent)) == value


def test_nanoseconds_of_a_huge_number() -> None:
    for amount in (10**400, HUGE, 2**53, 1e300):
        with pytest.raises(ValueError, match="beyond 2\\*\\*53 - 1"):
            ki.nanoseconds(ms=amount)
    with pytest.raises(ValueError, match="finite and >= 0"):
        ki.nanoseconds(ns=-HUGE)


def test_dumps_indent() -> None:
    for wrong in (2**64, -1, 17):
        with pytest.raises(ValueError, match="0 to 16 spaces"):
            ki.dumps([1], indent=wrong)
    for wrong_type in ("\t", 2.0, True):
        with pytest.raises(TypeError, match="indent"):
            ki.dumps([1], indent=wrong_type)  # type: ignore[arg-type]
    assert ki.dumps([1], indent=0) == "[\n1\n]"

    class Two:  # an integer of another library (numpy.int64): it has __index__
        def __index__(self) -> int:
            return 2

    assert ki.dumps([1], indent=Two()) == ki.dumps([1], indent=2)  # type: ignore[arg-type]


def test_a_schema_directory_that_cannot_be_read(tmp_path: Path) -> None:
    with pytest.raises(ki.SchemaDirectoryError, match="File name too long"):
        ki.SchemaRegistry.from_directory("x" * 5000)
    folder = tmp_path / "g" / "v1"
    folder.mkdir(parents=True)
    schema = folder / "a.schema.json"
    for text, reason in [
        ('{"$id": "https://g/a"', "Expecting"),
        ("[1]", "not an object"),
        ('{"type": "object"}', "no \\$id"),
        ('{"$schema": 5, "$id": "https://g/a"}', "\\$schema must be a URI"),
    ]:
        schema.write_text(text, encoding="utf-8")
        with pytest.raises(ki.SchemaDirectoryError, match=f"a.schema.json: .*{reason}"):
            ki.SchemaRegistry.from_directory(tmp_path)
    schema.write_bytes(b'{"$id": "\xff"}')
    not_utf8 = r"a\.schema\.json: not a JSON schema file: .*utf-8"
    with pytest.raises(ki.SchemaDirectoryError, match=not_utf8):
        ki.SchemaRegistry.from_directory(tmp_path)


def test_a_schema_file_without_read_permission(tmp_path: Path) -> None:
    """Mode 000, read by a process without the capabilities that let root read it."""
    folder = tmp_path / "g" / "v1"
    folder.mkdir(parents=True)
    schema = folder / "a.schema.json"
    schema.write_text('{"$id": "https://g/a"}', encoding="utf-8")
    schema.chmod(0)
    drop = "-dac_override,-dac_read_search"
    code = (
        "import sys, kernelindex_sdk as ki\n"
        "try:\n    ki.SchemaRegistry.from_directory(sys.argv[1])\n"
        "except ki.SchemaDirectoryError as e:\n    print('refused:', e)\n"
    )
    command = [sys.executable, "-c", code, str(tmp_path)]
    if os.geteuid() == 0:
        command = ["setpriv", f"--bounding-set={drop}", f"--inh-caps={drop}", "--", *command]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"refused: {schema}: cannot read: Permission denied\n"


def _unresolvable_registry(tmp_path: Path) -> ki.SchemaRegistry:
    folder = tmp_path / "ex.dev" / "v1"
    folder.mkdir(parents=True)
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://ex.dev/v1/thing.schema.json",
        "type": "object",
        "properties": {
            "apiVersion": {"const": "ex.dev/v1"},
            "kind": {"const": "Thing"},
            "spec": {"$ref": "https://ex.dev/v1/missing.schema.json"},
        },
    }
    (folder / "thing.schema.json").write_text(json.dumps(schema), encoding="utf-8")
    return ki.SchemaRegistry.from_directory(tmp_path)


@pytest.mark.usefixtures("no_network")
def test_a_registry_whose_ref_cannot_resolve(tmp_path: Path) -> None:
    session = ValidationSession(registry=_unresolvable_registry(tmp_path))
    record = {"apiVersion": "ex.dev/v1", "kind": "Thing", "metadata": {"name": "t"}, "spec": {}}
    with pytest.raises(ki.UnresolvableReference) as raised:
        list(session.check_document(record, source="thing.json"))
    assert raised.value.schema == "https://ex.dev/v1/thing.schema.json"
    assert raised.value.ref == "https://ex.dev/v1/missing.schema.json"
    assert "resolves to no schema of the registry" in str(raised.value)


@pytest.mark.parametrize(
    ("spec", "code"),
    [({"kernel": HUGE}, "number-out-of-range"), ({"parameters": _deep()}, "nesting-too-deep")],
    ids=["5000-digits", "100k-deep"],
)
def test_a_session_given_what_is_no_strict_json(spec: Any, code: str) -> None:
    """``ki.validate`` walks a value before validating; a session is given documents as
    they are (only ``strict_json=True`` promises they came from strict intake)."""
    record = {**_record(spec), "metadata": {"name": "w"}}
    (item,) = ValidationSession().check_document(record, source="mine", line=3)
    (problem,) = item.problems
    assert (problem.code, problem.source, problem.line) == (code, "mine", 3)
    assert problem.pointer.startswith(f"/spec/{next(iter(spec))}")
    assert item.name == "w" and not item.valid


def test_document_sources_of_what_is_no_path() -> None:
    for wrong in ([1], [None], [b"x.json"]):
        with pytest.raises(TypeError, match="a path is a str"):
            list(sources.documents(wrong))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not one str"):
        list(sources.documents("records/"))
    with pytest.raises(TypeError, match="takes a path"):
        list(sources.iter_documents(None))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="schema \\$id"):
        inlined_schema(None, ki.default_registry())  # type: ignore[arg-type]
    (document,) = sources.iter_documents(SEED)  # type: ignore[arg-type]  # a Path is fine
    assert not isinstance(document, ki.IntakeError)


def test_messages_quote_huge_and_deep_values_short() -> None:
    assert int_text(12345) == "12345"
    assert int_text(HUGE) == "≥2**16609" and int_text(-HUGE) == "≤-2**16609"
    assert int_text(10**100) == "1" + "0" * 28 + "…" + "0" * 10
    assert short_repr([HUGE]) == "[≥2**16609]"
    assert short_repr(_deep()) == "[[[[[[[...]]]]]]]"


# ------------------------------------------------------------- every function, hostile


def _hostile_leaf() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        # (drawn by index: hypothesis would show the values, and HUGE has no digits)
        st.integers(0, 5).map(lambda i: [HUGE, -HUGE, 2**53, 2**64, 10**400, -1][i]),
        st.floats(),  # NaN, infinities, 1e308
        st.text(max_size=5),
        st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1, max_size=2),
        st.binary(max_size=4),
        st.sampled_from([object(), {1, 2}, (1, 2), frozenset(), 1j, Path("x"), m.Metadata]),
    )


class Box:
    """A drawn value, shown short: hypothesis would print it with a recursive printer
    (which a 100,000-deep value breaks) and ``repr`` (which HUGE breaks)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"Box({short_repr(self.value)})"


def _hostile() -> st.SearchStrategy[Box]:
    keys = st.text(max_size=3) | st.integers(0, 2) | st.just("\udc80") | st.none()
    nested = st.recursive(
        _hostile_leaf(),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
        max_leaves=8,
    )
    built = st.sampled_from([_deep, _cyclic_list, _cyclic_dict]).map(lambda make: make())
    records = nested.map(_record) | nested.map(lambda v: {**_bundle()["run"], "spec": v})
    return st.one_of(nested, built, records, st.builds(_bundle)).map(Box)


def _calls(h: Any, g: Any) -> list[tuple[str, Callable[[], Any]]]:
    """Every public function of ``kernelindex_sdk`` (``ki.__all__``), and the schema
    registry's methods, given hostile values ``h`` and ``g`` where it takes a value."""
    registry = ki.default_registry()
    valid_run = _bundle()["run"]
    paths = [h if not isinstance(h, str) else "x" * 5000, "a\x00b", "\ud800", "/nonexistent/x"]
    return [
        ("loads", lambda: ki.loads(h)),
        ("loads(source=)", lambda: ki.loads("{}", source=h)),
        *[(f"load_file({short_repr(p)})", lambda p=p: ki.load_file(p)) for p in paths],
        ("validate", lambda: ki.validate(h)),
        ("validate(source=)", lambda: ki.validate(valid_run, source=h)),
        ("digest", lambda: ki.digest(h)),
        ("canonicalize", lambda: ki.canonicalize(h)),
        ("dumps", lambda: ki.dumps(h)),
        ("dumps(indent=2)", lambda: ki.dumps(h, indent=2)),
        ("dumps(indent=)", lambda: ki.dumps([1], indent=g)),
        ("link", lambda: ki.link(h, protocol=g, environment=None)),
        ("link(protocol=)", lambda: ki.link(valid_run, protocol=h, environment=g)),
        ("timestamp", lambda: ki.timestamp(h)),
        ("nanoseconds(ms=)", lambda: ki.nanoseconds(ms=h)),
        ("nanoseconds(s=)", lambda: ki.nanoseconds(s=g)),
        ("structure", lambda: ki.structure(h, m.BenchmarkRun)),
        ("structure(Bundle)", lambda: ki.structure(h, m.Bundle)),
        ("structure(cls=)", lambda: ki.structure({}, h)),
        ("unstructure", lambda: ki.unstructure(h)),
        *[
            (f"from_directory({short_repr(p)})", lambda p=p: ki.SchemaRegistry.from_directory(p))
            for p in paths
        ],
        ("route", lambda: registry.route(h, g)),
        ("route(kind=)", lambda: registry.route("kernelindex.dev/v1alpha1", h)),
        ("bundle", lambda: registry.bundle(h)),
        ("find", lambda: registry.find(h)),
        ("find(api_version=)", lambda: registry.find("bundle", h)),
        ("status", lambda: registry.status(h)),
    ]


def _documented_calls(h: Any, g: Any) -> list[tuple[str, Callable[[], Any]]]:
    """The submodule functions ``docs/library.md`` documents that take a value."""
    registry = ki.default_registry()
    return [
        ("check_document", lambda: ValidationSession().check_document(h, source="x")),
        (
            "check_document(strict_refs)",
            lambda: [ValidationSession(strict_refs=True).check_document(h), ValidationSession()],
        ),
        ("bundled_schema", lambda: bundled_schema(h)),
        ("bundled_schema(api_version=)", lambda: bundled_schema("bundle", g)),
        ("inlined_schema", lambda: inlined_schema(h, registry)),
        ("iter_documents", lambda: list(sources.iter_documents(h))),
        ("documents", lambda: list(sources.documents(h))),
    ]


def test_every_public_function_is_driven() -> None:
    """The property test below calls every function ``ki.__all__`` names."""
    called = {name.split("(")[0] for name, _ in _calls(None, None)}
    functions = {
        name
        for name in ki.__all__
        if callable(getattr(ki, name)) and not isinstance(getattr(ki, name), type)
    }
    assert functions - {"default_registry"} <= called
    assert "from_directory" in called  # SchemaRegistry's constructor of a folder


def _refused_cleanly(name: str, error: BaseException) -> str | None:
    """Why ``error`` is not a clean refusal, or None when it is."""
    if not isinstance(error, (TypeError, ValueError, KernelIndexError)):
        return f"{name}: {type(error).__name__} escaped: {error!r:.200}"
    module = type(error).__module__
    if module != "builtins" and not module.startswith("kernelindex_sdk"):
        return f"{name}: {module}.{type(error).__name__} escaped: {error!r:.200}"
    if isinstance(error, UnicodeError):
        return f"{name}: {type(error).__name__} escaped: {error!r:.200}"
    text = str(error)
    if not text or "int_max_str_digits" in text:
        return f"{name}: unclear message: {text[:200]!r}"
    return None


@settings(
    max_examples=examples(300),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(_hostile(), _hostile())
def test_every_public_function_refuses_hostile_values_cleanly(x: Box, y: Box) -> None:
    h, g = x.value, y.value
    failures = []
    for name, call in [*_calls(h, g), *_documented_calls(h, g)]:
        try:
            result = call()
        except Exception as error:  # what we check: every exception that escapes
            failure = _refused_cleanly(name, error)
            if failure is not None:
                failures.append(failure)
        else:
            if name.startswith("dumps(indent=2)"):
                ki.loads(result)  # what dumps writes reads back
    assert not failures, "\n".join(failures)
    assert isinstance(ki.validate(h), list)  # validate reports; it never raises
