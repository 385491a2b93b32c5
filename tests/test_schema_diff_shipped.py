"""``schema diff`` on kernelindex's own schemas, and the command itself.

* The installed registry, the released snapshot and their normal forms compare equal,
  and the normal form accepts exactly the records the schemas accept (drawn by the
  shipped strategies).
* Changes to a copy of the shipped schemas — the kind a pull request makes — give the
  expected rules, each with a witness a plain validator confirms; where the verdict
  is "compatible", records drawn by :func:`kernelindex_sdk.models.strategies.records` from
  the old schemas are searched for a counterexample.
* ``kernelindex schema diff``: exit statuses 0/1/2/3, the four formats, one line per
  violation whatever the schemas hold, no traceback, nothing fetched.
"""

from __future__ import annotations

import json
import os
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from acceptance.support import Invoke, make_invoke
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012
from strategies import law_settings

from kernelindex_sdk.models import API_VERSION
from kernelindex_sdk.models.strategies import RECORD_KINDS, records
from kernelindex_sdk.schema.bundled import bundled_schema
from kernelindex_sdk.schema.registry import default_registry, packaged_schema_root
from kernelindex_sdk.schemadiff import DiffReport, diff, load, normalized
from kernelindex_sdk.validating.engine import JsonschemaEngine

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = packaged_schema_root() / "kernelindex.dev" / "v1alpha1"
RELEASED = ROOT / "schemas-released" / "kernelindex.dev" / "v1alpha1"
KINDS = [*RECORD_KINDS, "Bundle"]


@pytest.fixture
def invoke() -> Invoke:
    return make_invoke()


# --------------------------------------------------------------------------- as shipped


def test_the_installed_schemas_against_themselves_and_their_normal_form() -> None:
    assert diff(API_VERSION, API_VERSION, mode="full").compatible
    report = diff(API_VERSION, normalized(load(API_VERSION)), mode="full")
    assert report.compatible, report
    assert report.kinds == tuple(sorted(KINDS))


def test_the_released_snapshot_against_itself_and_its_normal_form() -> None:
    assert sorted(p.name for p in RELEASED.glob("*.schema.json")) == sorted(
        p.name for p in SHIPPED.glob("*.schema.json")
    )
    assert diff(RELEASED, RELEASED, mode="full").compatible
    assert diff(RELEASED, normalized(load(RELEASED)), mode="full").compatible


@pytest.mark.parametrize("kind", KINDS)
def test_a_bundled_schema_is_a_refactor(tmp_path: Path, kind: str) -> None:
    """Every $ref inlined (schema show --bundled): the same records, nothing to report."""
    entry = default_registry().find(kind)
    inlined = tmp_path / "inlined.schema.json"
    inlined.write_text(json.dumps(bundled_schema(kind)), encoding="utf-8")
    assert diff(entry.path, inlined, mode="full").compatible


_NORMAL = {kind: JsonschemaEngine(normalized(load(API_VERSION)).registry) for kind in ("engine",)}[
    "engine"
]
_ENGINE = JsonschemaEngine(default_registry())


@law_settings(60)
@given(data=st.data(), kind=st.sampled_from(KINDS))
def test_the_normal_form_accepts_what_the_schemas_accept(data: st.DataObject, kind: str) -> None:
    record = data.draw(records(kind))
    entry = default_registry().find(kind)
    assert _ENGINE.is_valid(entry.id, record)
    assert _NORMAL.is_valid(entry.id, record)
    broken = json.loads(json.dumps(record))
    target = broken["run"] if kind == "Bundle" else broken
    target["spec"][data.draw(st.sampled_from(["x", "status", "hardware", "kernel"]))] = [None]
    assert _NORMAL.is_valid(entry.id, broken) == _ENGINE.is_valid(entry.id, broken)


# --------------------------------------------------------------------------- changes


def _copy_shipped(root: Path) -> Path:
    target = root / "kernelindex.dev" / "v1alpha1"
    shutil.copytree(SHIPPED, target)
    return target


def _edit(folder: Path, name: str, change: Callable[[dict[str, Any]], None]) -> None:
    path = folder / name
    schema = json.loads(path.read_text(encoding="utf-8"))
    change(schema)
    path.write_text(json.dumps(schema, indent=2), encoding="utf-8")


def _hardware(s: dict[str, Any]) -> dict[str, Any]:
    return s["$defs"]["hardware"]  # type: ignore[no-any-return]


def _measurement(s: dict[str, Any]) -> dict[str, Any]:
    return s["$defs"]["measurement"]  # type: ignore[no-any-return]


def _move_entry_point(folder: Path) -> None:
    """Implementation.spec.entryPoint moved to metadata (shared by every kind)."""
    _edit(
        folder,
        "implementation.schema.json",
        lambda s: s["$defs"]["spec"]["properties"].pop("entryPoint"),
    )
    _edit(
        folder,
        "common.schema.json",
        lambda s: s["$defs"]["metadata"]["properties"].update(entryPoint={"$ref": "#/$defs/text"}),
    )


#: name → (what to change, {(direction, policy): sorted rules}, kinds the rules are in).
CHANGES: dict[str, tuple[Callable[[Path], None], dict[tuple[str, str], list[str]], set[str]]] = {
    "optional hardware field": (
        lambda f: _edit(
            f, "execution-environment.schema.json",
            lambda s: _hardware(s)["properties"].update(tdpWatts={"type": "integer", "minimum": 1}),
        ),
        {("backward", "strict"): [], ("forward", "strict"): ["PROPERTY_ADDED"],
         ("backward", "lenient"): [], ("forward", "lenient"): []},
        {"ExecutionEnvironment"},
    ),
    "hardware count required": (
        lambda f: _edit(
            f, "execution-environment.schema.json",
            lambda s: _hardware(s)["required"].append("count"),
        ),
        {("backward", "lenient"): ["REQUIRED_ADDED"], ("forward", "lenient"): []},
        {"ExecutionEnvironment"},
    ),
    "timer value removed": (
        lambda f: _edit(
            f, "benchmark-protocol.schema.json",
            lambda s: _measurement(s)["properties"]["timer"]["enum"].remove("cupti"),
        ),
        {("backward", "lenient"): ["ENUM_VALUE_REMOVED"], ("forward", "lenient"): []},
        {"BenchmarkProtocol"},
    ),
    "run status added": (
        lambda f: _edit(
            f, "benchmark-run.schema.json",
            lambda s: s["$defs"]["spec"]["properties"]["status"]["enum"].append("timeout"),
        ),
        {("backward", "strict"): [], ("forward", "strict"): ["ENUM_VALUE_ADDED"]},
        {"BenchmarkRun"},
    ),
    "label values longer": (
        lambda f: _edit(
            f, "common.schema.json",
            lambda s: s["$defs"]["labels"]["additionalProperties"].update(maxLength=2048),
        ),
        {("backward", "strict"): [], ("forward", "strict"): ["BOUND_RELAXED"] * 5},
        set(RECORD_KINDS),
    ),
    "workload settings typed": (
        lambda f: _edit(
            f, "workload.schema.json",
            lambda s: s["$defs"]["spec"]["properties"]["settings"].update(
                additionalProperties={"type": "string"}
            ),
        ),
        {("backward", "lenient"): ["ADDITIONAL_PROPERTIES_NARROWED"], ("forward", "lenient"): []},
        {"Workload"},
    ),
    "entryPoint moved out of spec": (
        _move_entry_point,
        {
            ("backward", "lenient"): ["DIGEST_SCOPE_CHANGED"],
            ("forward", "lenient"): ["DIGEST_SCOPE_CHANGED"],
            ("forward", "strict"): ["DIGEST_SCOPE_CHANGED", *["PROPERTY_ADDED"] * 5],
        },
        set(RECORD_KINDS),
    ),
}  # fmt: skip


@pytest.fixture(scope="module")
def changed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folders = {}
    for index, (name, (change, _, _)) in enumerate(CHANGES.items()):
        folder = _copy_shipped(tmp_path_factory.mktemp(f"change{index}"))
        change(folder)
        folders[name] = folder
    return folders


@pytest.mark.parametrize("name", list(CHANGES))
def test_a_change_to_the_shipped_schemas(changed: dict[str, Path], name: str) -> None:
    _, expected, kinds = CHANGES[name]
    validators = {"old": _validators(SHIPPED), "new": _validators(changed[name])}
    for (direction, policy), rules in expected.items():
        report = diff(SHIPPED, changed[name], mode=direction, policy=policy)
        assert sorted(v.rule for v in report.violations) == sorted(rules), (direction, policy)
        assert not report.undecided, report.undecided
        assert {v.kind for v in report.violations} <= kinds
        for v in report.violations:
            other = "new" if v.accepted_by == "old" else "old"
            assert validators[v.accepted_by][v.kind].is_valid(v.witness), v
            assert not validators[other][v.kind].is_valid(v.witness), v


@pytest.mark.parametrize(
    "name", [n for n, (_, e, _) in CHANGES.items() if not e.get(("backward", "strict"), [None])]
)
@law_settings(40)
@given(data=st.data())
def test_no_old_record_breaks_a_backward_compatible_change(
    changed: dict[str, Path], name: str, data: st.DataObject
) -> None:
    """Records of the shipped schemas, drawn by the shipped strategies, all validate
    under a change the diff calls backward compatible."""
    new = _validators(changed[name])
    kind = data.draw(st.sampled_from(sorted(CHANGES[name][2])))
    record = data.draw(records(kind))
    assert new[kind].is_valid(record), record


def _validators(folder: Path) -> dict[str, Draft202012Validator]:
    """kind → a plain python-jsonschema validator over the folder's files."""
    registry: Registry[Any] = Registry()
    roots = {}
    for path in sorted(folder.glob("*.schema.json")):
        contents = json.loads(path.read_text(encoding="utf-8"))
        resource = Resource.from_contents(contents, default_specification=DRAFT202012)
        registry = registry.with_resource(contents["$id"], resource)
        kind = contents.get("properties", {}).get("kind", {}).get("const")
        if path.name == "bundle.schema.json":
            kind = "Bundle"
        if kind:
            roots[kind] = contents
    return {
        kind: Draft202012Validator(
            schema, registry=registry, format_checker=Draft202012Validator.FORMAT_CHECKER
        )
        for kind, schema in roots.items()
    }


# --------------------------------------------------------------------------- the command


def _one_file(tmp_path: Path, name: str, schema: Any) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(schema), encoding="utf-8")
    return path


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    """A closed object gaining an optional member and losing an enum value."""
    old = {
        "type": "object",
        "properties": {"a": {"enum": ["x", "y"]}},
        "required": ["a"],
        "additionalProperties": False,
    }
    new = json.loads(json.dumps(old))
    new["properties"]["a"]["enum"] = ["x"]
    new["properties"]["b"] = {"type": "integer"}
    return _one_file(tmp_path, "old/s.schema.json", old), _one_file(
        tmp_path, "new/s.schema.json", new
    )


def test_text_output_and_exit_status(invoke: Invoke, pair: tuple[Path, Path]) -> None:
    old, new = pair
    run = invoke("schema", "diff", old, new, "--mode", "full")
    assert run.exit_code == 1
    assert len(run.lines) == 3
    removed, added, verdict = run.lines
    assert removed.startswith("ENUM_VALUE_REMOVED backward s.schema.json#/properties/a/enum → ")
    assert 'witness (old accepts, new rejects): {"a":"y"}' in removed
    assert added.startswith("PROPERTY_ADDED forward s.schema.json#/additionalProperties → ")
    assert (
        verdict
        == "incompatible (mode full, policy strict, format as annotation): 2 violations in 1 kind"
    )
    lenient = invoke("schema", "diff", old, new, "--mode", "forward", "--policy", "lenient")
    assert lenient.exit_code == 0
    assert lenient.lines == [
        "compatible (mode forward, policy lenient, format as annotation): 1 kind compared"
    ]


def test_json_output(invoke: Invoke, pair: tuple[Path, Path]) -> None:
    run = invoke("schema", "diff", *pair, "--mode", "backward", "--format", "json")
    assert run.exit_code == 1
    report = run.json()
    assert report["compatible"] is False and report["decided"] is True
    (violation,) = report["violations"]
    assert {"rule", "mode", "old", "new", "witness"} <= set(violation)
    assert violation["rule"] == "ENUM_VALUE_REMOVED" and violation["mode"] == "backward"
    assert violation["witness"] == {"a": "y"} and violation["accepted_by"] == "old"
    assert run.stdout.isascii()


def test_github_and_junit_output(invoke: Invoke, pair: tuple[Path, Path]) -> None:
    github = invoke("schema", "diff", *pair, "--mode", "full", "--format", "github")
    assert github.exit_code == 1
    first, _, verdict = github.lines
    assert first.startswith("::error file=")
    assert f"file={pair[1]}," in first  # the new side's file: where the change was made
    assert ",title=kernelindex schema diff ENUM_VALUE_REMOVED (backward)::" in first
    assert verdict.startswith("incompatible")
    junit = invoke("schema", "diff", *pair, "--mode", "full", "--format", "junit")
    assert junit.exit_code == 1
    suites = ET.fromstring(junit.stdout_bytes)
    assert suites.get("tests") == "2" and suites.get("failures") == "2"
    types = sorted(f.get("type") or "" for f in suites.iter("failure"))
    assert types == ["ENUM_VALUE_REMOVED", "PROPERTY_ADDED"]


def test_the_formats_offered_are_the_reporters() -> None:
    from kernelindex_sdk.cli.report import REPORTERS
    from kernelindex_sdk.cli.schema_cmd import DIFF_FORMATS

    assert sorted(DIFF_FORMATS) == sorted(f for c, f in REPORTERS if c == "schema diff")


def test_undecided_is_exit_3(invoke: Invoke, tmp_path: Path) -> None:
    # The same strings said two ways: a not is compared whole, and no record differs.
    old = _one_file(tmp_path, "o.schema.json", {"type": "string", "minLength": 1})
    new = _one_file(tmp_path, "n.schema.json", {"type": "string", "not": {"const": ""}})
    run = invoke("schema", "diff", old, new, "--mode", "backward")
    assert run.exit_code == 3
    assert run.lines[0].startswith("UNDECIDED backward ")
    assert "not of new is not one of old's" in run.lines[0]
    setting = "mode backward, policy strict, format as annotation"
    assert run.lines[-1] == f"cannot decide ({setting}): 1 undecided in 1 kind"
    assert invoke("schema", "diff", old, new, "--mode", "forward").exit_code == 3


@pytest.mark.usefixtures("no_network")
@pytest.mark.parametrize(
    ("ref", "uri"),
    [
        ("https://example.com/elsewhere.schema.json", "https://example.com/elsewhere.schema.json"),
        ("missing.schema.json#/$defs/x", "/n/missing.schema.json#/$defs/x"),
    ],
)
def test_a_ref_into_a_document_not_given_is_an_external_schema_never_fetched(
    invoke: Invoke, tmp_path: Path, ref: str, uri: str
) -> None:
    """Added on one side, it is undecided (its content is not read); the same on both
    sides, it is assumed unchanged and said so, and the rest is decided."""
    old = _one_file(tmp_path, "o.schema.json", {"type": "object"})
    new = _one_file(
        tmp_path, "n/n.schema.json", {"type": "object", "properties": {"a": {"$ref": ref}}}
    )
    run = invoke("schema", "diff", old, new, "--mode", "full")
    assert run.exit_code == 3, run.output
    assert run.stderr == ""
    (line,) = [line for line in run.lines if line.startswith("UNDECIDED backward")]
    assert "n.schema.json#/properties/a/$ref" in line and uri in line
    assert "assumed unchanged" not in run.stdout
    assert invoke("schema", "diff", old, new, "--mode", "forward").exit_code == 0
    same = invoke("schema", "diff", new, new, "--mode", "full", "--format", "json")
    assert same.exit_code == 0, same.output
    (assumed,) = same.json()["assumed_unchanged"]
    assert assumed.endswith(uri)
    text = invoke("schema", "diff", new, new, "--mode", "full")
    assert text.lines[-2] == f"assumed unchanged: {assumed}"


@pytest.mark.usefixtures("no_network")
@pytest.mark.parametrize(
    ("ref", "sibling"),
    [("#/$defs/missing", False), ("s.schema.json#/$defs/missing", True)],
)
def test_a_ref_to_nothing_in_a_document_given_is_one_line_and_exit_2(
    invoke: Invoke, tmp_path: Path, ref: str, sibling: bool
) -> None:
    old = _one_file(tmp_path, "o.schema.json", {"type": "object"})
    if sibling:
        _one_file(tmp_path, "n/s.schema.json", {"$defs": {"x": {"type": "string"}}})
    new = _one_file(
        tmp_path, "n/n.schema.json", {"type": "object", "properties": {"a": {"$ref": ref}}}
    )
    run = invoke("schema", "diff", old, new, "--mode", "full")
    assert run.exit_code == 2
    assert run.stdout == ""
    (line,) = run.stderr.splitlines()
    assert line.startswith(
        f"kernelindex schema diff: {new}: n.schema.json#/properties/a/$ref: $ref "
    )
    assert "cannot be resolved offline" in line


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (
            ["kernelindex.dev/v9", "kernelindex.dev/v1alpha1", "--mode", "full"],
            "neither a schema file",
        ),
        (["kernelindex.dev/v1alpha1", "kernelindex.dev/v1alpha1"], "Missing option '--mode'"),
        (["a", "b", "--mode", "sideways"], "'sideways' is not one of"),
    ],
)
def test_usage_errors_are_exit_2(invoke: Invoke, args: list[str], fragment: str) -> None:
    run = invoke("schema", "diff", *args)
    assert run.exit_code == 2
    assert fragment in run.stderr


def test_unreadable_schemas_are_exit_2(invoke: Invoke, tmp_path: Path) -> None:
    broken = tmp_path / "b.schema.json"
    broken.write_text('{"type": "object", "type": "string"}', encoding="utf-8")
    run = invoke("schema", "diff", broken, broken, "--mode", "full")
    assert run.exit_code == 2 and "duplicate" in run.stderr
    malformed = _one_file(tmp_path, "m/m.schema.json", {"type": "object", "required": 5})
    run = invoke("schema", "diff", malformed, malformed, "--mode", "full")
    assert run.exit_code == 2
    assert "not a Draft 2020-12 schema: /required: 5 is not of type 'array'" in run.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    run = invoke("schema", "diff", empty, API_VERSION, "--mode", "full")
    assert run.exit_code == 2 and "no *.schema.json files" in run.stderr


def test_a_folder_is_walked_as_validate_walks_it(invoke: Invoke, tmp_path: Path) -> None:
    """Links followed, names starting with "." left out; what holds no schema (a dangling
    link, a FIFO, by other names) passed over; a schema file that cannot be read named."""
    schema = {"type": "object", "properties": {"kind": {"const": "K"}}}
    side = tmp_path / "side"
    _one_file(tmp_path, "elsewhere/g/v1/k.schema.json", schema)
    side.mkdir()
    (side / "g").symlink_to(tmp_path / "elsewhere" / "g")
    _one_file(side, ".git/g/v2/k.schema.json", {"type": "object", "required": 5})
    (side / "README").symlink_to(tmp_path / "nowhere")
    os.mkfifo(side / "data.json")
    run = invoke("schema", "diff", side, side, "--mode", "full", "--format", "json")
    assert run.exit_code == 0, run.output
    assert run.json()["kinds"] == ["K"]
    (side / "g" / "v1" / "gone.schema.json").symlink_to(tmp_path / "nowhere")
    run = invoke("schema", "diff", side, side, "--mode", "full")
    assert run.exit_code == 2
    assert run.stderr == (
        f"kernelindex schema diff: {side}/g/v1/gone.schema.json:"
        " dangling symbolic link: its target does not exist\n"
    )
    (side / "g" / "v1" / "gone.schema.json").unlink()
    os.mkfifo(side / "g" / "v1" / "p.schema.json")
    run = invoke("schema", "diff", side, side, "--mode", "full")
    assert run.exit_code == 2
    assert run.stderr == (
        f"kernelindex schema diff: {side}/g/v1/p.schema.json:"
        " is a FIFO (named pipe), not a regular file: not read\n"
    )


def test_two_versions_of_one_file_side_by_side(invoke: Invoke, tmp_path: Path) -> None:
    """Siblings resolve a file's $refs; a sibling with its $id (the other version of the
    same file) or one that cannot be read is left out, not an error."""
    schema = {"$id": "https://example.com/w.schema.json", "type": "object", "properties": {}}
    old = _one_file(
        tmp_path, "w-old.schema.json", {**schema, "properties": {"a": {"type": "string"}}}
    )
    new = _one_file(
        tmp_path, "w-new.schema.json", {**schema, "properties": {"a": {"type": "integer"}}}
    )
    _one_file(tmp_path, "broken.schema.json", {"required": 5})
    run = invoke("schema", "diff", old, new, "--mode", "backward", "--format", "json")
    assert run.exit_code == 1, run.output
    (violation,) = run.json()["violations"]
    assert violation["rule"] == "TYPE_NARROWED" and violation["witness"] == {"a": "a"}
    assert violation["old"] == "w.schema.json#/properties/a"


def test_what_the_schemas_hold_stays_on_one_line(invoke: Invoke, tmp_path: Path) -> None:
    name = "evil\nENUM_VALUE_ADDED forward x → y: forged\x1b[2J"
    old = _one_file(
        tmp_path, "o.schema.json", {"type": "object", "properties": {name: {"type": "string"}}}
    )
    new = _one_file(
        tmp_path, "n.schema.json", {"type": "object", "properties": {name: {"type": "integer"}}}
    )
    run = invoke("schema", "diff", old, new, "--mode", "backward")
    assert run.exit_code == 1
    assert len(run.lines) == 2
    assert run.lines[0].startswith("TYPE_NARROWED backward ")
    assert "\\n" in run.lines[0] and "\x1b" not in run.stdout


def test_the_released_snapshot_against_the_registry_in_text(invoke: Invoke) -> None:
    """What .ci/run runs, on the snapshot against itself (the working tree may hold
    changes another branch is about to snapshot)."""
    run = invoke(
        "schema", "diff", RELEASED, RELEASED, "--mode", "full", "--policy", "lenient",
        "--format-assertion",
    )  # fmt: skip
    assert run.exit_code == 0
    assert run.lines == [
        "compatible (mode full, policy lenient, format asserted): 6 kinds compared"
    ]


def _report(old: Path | str, new: Path | str) -> DiffReport:
    return diff(old, new, mode="full", policy="strict")
