"""``kernelindex validate``: inputs (files, directories, stdin), output, exit status, references."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .support import INVALID, PROBLEM, SEEDS, SUMMARY, VALID, Invoke

SEED_FILES = sorted(SEEDS.glob("*.json"))

RECORDS_JSONL = VALID / "records.jsonl"
STREAM = VALID / "refs" / "stream.jsonl"
SPLIT = VALID / "refs" / "split"
RUN_ONLY = INVALID / "strict-refs-unresolved.json"


def _copy(source: Path, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(source.read_bytes())
    return target


# ------------------------------------------------------------------ inputs


def test_directory_is_walked_recursively(invoke: Invoke, tmp_path: Path) -> None:
    """.json, .jsonl and .ndjson at any depth; hidden files and folders and other
    suffixes are skipped (each skipped file here would be invalid if read)."""
    _copy(VALID / "workload.json", tmp_path / "a.json")
    _copy(RECORDS_JSONL, tmp_path / "sub" / "b.jsonl")
    _copy(RECORDS_JSONL, tmp_path / "sub" / "deeper" / "c.ndjson")
    _copy(VALID / "seeds" / "000_0dade080a6775df8.json", tmp_path / "x" / "y" / "z" / "d.json")
    (tmp_path / ".hidden.json").write_text("{not json", "utf-8")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config.json").write_text("{not json", "utf-8")
    (tmp_path / "sub" / ".cache").mkdir()
    (tmp_path / "sub" / ".cache" / "e.jsonl").write_text("nope\n", "utf-8")
    (tmp_path / "notes.txt").write_text("{not json", "utf-8")
    (tmp_path / "data.yaml").write_text("a: 1", "utf-8")
    run = invoke("validate", tmp_path)
    assert run.exit_code == 0, run.output
    assert run.lines == ["10 valid, 0 invalid in 4 files"]


def test_directory_problems_name_the_file_inside(invoke: Invoke, tmp_path: Path) -> None:
    _copy(VALID / "workload.json", tmp_path / "ok.json")
    _copy(INVALID / "bad-name.json", tmp_path / "deep" / "bad-name.json")
    run = invoke("validate", tmp_path)
    assert run.exit_code == 1
    assert len(run.problem_lines) == 1
    assert run.problem_lines[0].startswith(str(tmp_path / "deep" / "bad-name.json") + ":5:5: ")
    assert run.summary == "1 valid, 1 invalid in 2 files"


def test_empty_directory(invoke: Invoke, tmp_path: Path) -> None:
    """Validating nothing is a usage error, not a pass: a misdirected hook must not go green."""
    run = invoke("validate", tmp_path)
    assert "0 valid, 0 invalid in 0 files" in run.lines
    assert "no .json, .jsonl or .ndjson files found" in run.stderr
    assert run.exit_code == 2


def test_stdin_json(invoke: Invoke) -> None:
    """A pretty-printed document on stdin is one document, not JSON Lines."""
    seed = (SEEDS / "000_0dade080a6775df8.json").read_bytes()
    assert seed.count(b"\n") > 10
    run = invoke("validate", "-", input=seed)
    assert run.exit_code == 0, run.output
    assert run.lines == ["1 valid, 0 invalid in 1 file"]


def test_stdin_jsonl(invoke: Invoke) -> None:
    run = invoke("validate", "-", input=RECORDS_JSONL.read_bytes())
    assert run.exit_code == 0, run.output
    assert run.lines == ["4 valid, 0 invalid in 1 file"]


def test_stdin_jsonl_bad_line_is_located(invoke: Invoke) -> None:
    data = (INVALID / "jsonl-bad-line.jsonl").read_bytes()
    run = invoke("validate", "-", input=data)
    assert run.exit_code == 2
    assert len(run.problem_lines) == 1
    assert run.problem_lines[0].startswith("<stdin>:3:")
    assert run.summary == "4 valid, 0 invalid, 1 unreadable in 1 file"


def test_stdin_invalid_record(invoke: Invoke) -> None:
    run = invoke("validate", "-", input=(INVALID / "bad-enum-unit.json").read_bytes())
    assert run.exit_code == 1
    assert run.problem_lines == [
        "<stdin>: /spec/measurements/0/unit: 'parsec' is not one of 'ns', 'us', 'ms', 's',"
        " 'bytes', 'KiB', 'MiB', 'GiB'"
    ]


def test_stdin_empty(invoke: Invoke) -> None:
    run = invoke("validate", "-", input=b"")
    assert run.exit_code == 2
    assert run.problem_lines[0].startswith("<stdin>")
    assert "empty" in run.problem_lines[0]


def test_stdin_beside_files(invoke: Invoke) -> None:
    run = invoke("validate", VALID / "workload.json", "-", input=RECORDS_JSONL.read_bytes())
    assert run.exit_code == 0
    assert run.lines == ["5 valid, 0 invalid in 2 files"]


def test_several_files_valid_and_invalid(invoke: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(INVALID.parent)
    run = invoke(
        "validate",
        "valid/workload.json",
        "invalid/bad-name.json",
        "valid/records.jsonl",
        "invalid/p20-above-median.json",
    )
    assert run.exit_code == 1
    # A .json file's problem names the line and column of its pointer's member.
    assert [line.split(": ")[0] for line in run.problem_lines] == [
        "invalid/bad-name.json:5:5",
        "invalid/p20-above-median.json:25:9",
    ]
    assert run.summary == "5 valid, 2 invalid in 4 files"


def test_unreadable_beats_invalid(invoke: Invoke, tmp_path: Path) -> None:
    """Exit 2 when any input cannot be read, even beside invalid records."""
    run = invoke("validate", INVALID / "bad-name.json", tmp_path / "missing.json")
    assert run.exit_code == 2
    assert len(run.problem_lines) == 2
    # A missing path is neither a file read nor an invalid record: it is unreadable.
    assert run.summary == "0 valid, 1 invalid, 1 unreadable in 1 file"


def test_missing_file(invoke: Invoke, tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    run = invoke("validate", missing)
    assert run.exit_code == 2
    assert run.problem_lines == [f"{missing}: no such file or directory"]
    assert run.summary == "0 valid, 0 invalid, 1 unreadable in 0 files"


def test_missing_file_json(invoke: Invoke, tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    run = invoke("validate", "--format", "json", missing)
    assert run.exit_code == 2
    (problem,) = run.json()["problems"]
    assert problem["file"] == str(missing)
    assert problem["code"] == "unreadable-file"


@pytest.mark.parametrize(
    "args",
    [
        ["validate"],
        ["validate", "--format", "yaml", "x.json"],
        ["validate", "--no-such-option", "x.json"],
        ["no-such-command"],
    ],
    ids=["no-args", "bad-format", "bad-option", "bad-command"],
)
def test_usage_errors_exit_2(invoke: Invoke, args: list[str]) -> None:
    run = invoke(*args)
    assert run.exit_code == 2
    assert "Usage:" in run.stderr
    assert run.stdout == ""


def test_every_problem_is_reported(invoke: Invoke, tmp_path: Path) -> None:
    """Three independent schema errors: three lines, each with its own pointer."""
    run = invoke("validate", INVALID / "three-schema-errors.json")
    assert run.exit_code == 1
    pointers = []
    for line in run.problem_lines:
        match = PROBLEM.match(line)
        assert match is not None, line
        pointers.append(match[2])
    assert pointers == ["/metadata/name", "/spec/measurements/1/value", "/spec/status"]


def test_no_duplicate_lines_for_several_missing_fields(invoke: Invoke, tmp_path: Path) -> None:
    """jsonschema raises one error per missing field; the user sees one line."""
    record = json.loads((VALID / "workload.json").read_text("utf-8"))
    record["spec"] = {"dtype": "bf16"}
    path = tmp_path / "w.json"
    path.write_text(json.dumps(record), "utf-8")
    run = invoke("validate", path)
    assert run.exit_code == 1
    assert len(run.problem_lines) == len(set(run.problem_lines)) == 1, run.stdout
    assert "missing required field 'kernel', 'pass', 'parameters'" in run.problem_lines[0]


def test_array_items_are_located_by_pointer(invoke: Invoke, tmp_path: Path) -> None:
    good = json.loads((VALID / "workload.json").read_text("utf-8"))
    bad = json.loads((INVALID / "bad-name.json").read_text("utf-8"))
    path = tmp_path / "array.json"
    path.write_text(json.dumps([good, bad, 7]), "utf-8")
    run = invoke("validate", path)
    assert run.exit_code == 1
    assert re.match(rf"{re.escape(str(path))}:\d+:\d+: /1/metadata/name: ", run.problem_lines[0])
    assert re.match(
        rf"{re.escape(str(path))}:\d+:\d+: /2: not a kernelindex record", run.problem_lines[1]
    )
    assert run.summary == "1 valid, 2 invalid in 1 file"


def test_jsonl_problems_carry_the_line(invoke: Invoke, tmp_path: Path) -> None:
    good = (VALID / "workload.json").read_text("utf-8")
    bad = (INVALID / "bad-name.json").read_text("utf-8")
    path = tmp_path / "s.ndjson"
    lines = [json.dumps(json.loads(t)) for t in (good, good, bad)]
    path.write_text("\n".join(lines) + "\n\n", "utf-8")
    run = invoke("validate", path)
    assert run.exit_code == 1
    assert run.problem_lines == [
        f"{path}:3: /metadata/name: 'Liger GeGLU' does not match '^[a-z0-9][a-z0-9._-]*$'"
    ]
    assert run.summary == "2 valid, 1 invalid in 1 file"


def test_verbose_lists_valid_items(invoke: Invoke) -> None:
    run = invoke("validate", "-v", VALID / "bundle-all-five.json")
    assert run.exit_code == 0
    assert len(run.problem_lines) == 1
    assert run.problem_lines[0].endswith("ok (Bundle liger-geglu-backward-h100-2024-09-03)")


# ------------------------------------------------------------------ --format json


def test_json_report_shape(invoke: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(INVALID)
    run = invoke("validate", "--format", "json", "three-schema-errors.json", "nan.json")
    assert run.exit_code == 2
    report = run.json()
    assert list(report) == ["valid", "invalid", "unreadable", "files", "ok", "problems"]
    assert (
        report["valid"],
        report["invalid"],
        report["unreadable"],
        report["files"],
        report["ok"],
    ) == (0, 1, 1, 2, False)
    assert len(report["problems"]) == 4
    for problem in report["problems"]:
        assert list(problem) == ["file", "line", "column", "pointer", "code", "message"]
    assert report["problems"][-1] == {
        "file": "nan.json",
        "line": 8,
        "column": 29,
        "pointer": "/spec/parameters/batch",
        "code": "non-finite-number",
        "message": "NaN is not valid JSON: RFC 8259 numbers are finite (and JCS cannot write it)",
    }
    assert {p["code"] for p in report["problems"][:3]} == {"schema"}
    # Located as the text and github formats locate them: the line and column of the
    # member the pointer names, read off the file once it is done.
    assert all(p["line"] and p["column"] for p in report["problems"][:3])
    text = invoke("validate", "three-schema-errors.json")
    assert [f"{p['file']}:{p['line']}:{p['column']}" for p in report["problems"][:3]] == [
        line.split(": ")[0] for line in text.problem_lines
    ]


def test_json_report_is_the_only_output(invoke: Invoke) -> None:
    """No summary line or problem text around the JSON object."""
    run = invoke("validate", "--format", "json", RECORDS_JSONL)
    assert run.exit_code == 0
    assert run.json()["valid"] == 4
    assert run.stderr == ""


# ------------------------------------------------------------------ summary line


@pytest.mark.parametrize(
    ("paths", "summary"),
    [
        (["valid/workload.json"], "1 valid, 0 invalid in 1 file"),
        (["valid/records.jsonl"], "4 valid, 0 invalid in 1 file"),
        (["valid/array-of-records.json"], "3 valid, 0 invalid in 1 file"),
        (["valid/refs/split"], "5 valid, 0 invalid in 5 files"),
        (["invalid/jsonl-bad-line.jsonl"], "4 valid, 0 invalid, 1 unreadable in 1 file"),
    ],
)
def test_summary_line(
    invoke: Invoke, monkeypatch: pytest.MonkeyPatch, paths: list[str], summary: str
) -> None:
    monkeypatch.chdir(INVALID.parent)
    run = invoke("validate", *paths)
    assert run.summary == summary
    assert SUMMARY.match(run.summary)


# ------------------------------------------------------------------ references


def test_stream_resolves_its_own_references(invoke: Invoke) -> None:
    run = invoke("validate", "--strict-refs", STREAM)
    assert run.exit_code == 0, run.output
    assert run.lines == ["5 valid, 0 invalid in 1 file"]


def test_files_resolve_each_other_in_any_order(invoke: Invoke) -> None:
    """The run comes first: references are settled once everything was read."""
    names = ["run", "protocol", "workload", "environment", "implementation"]
    run = invoke("validate", "--strict-refs", *(SPLIT / f"{n}.json" for n in names))
    assert run.exit_code == 0, run.output
    assert run.lines == ["5 valid, 0 invalid in 5 files"]


def test_directory_resolves_references(invoke: Invoke) -> None:
    run = invoke("validate", "--strict-refs", SPLIT)
    assert run.exit_code == 0, run.output


def test_stdin_stream_resolves_references(invoke: Invoke) -> None:
    run = invoke("validate", "--strict-refs", "-", input=STREAM.read_bytes())
    assert run.exit_code == 0, run.output
    assert run.lines == ["5 valid, 0 invalid in 1 file"]


def test_bundle_resolves_its_members(invoke: Invoke) -> None:
    run = invoke("validate", "--strict-refs", VALID / "bundle-all-five.json")
    assert run.exit_code == 0, run.output


def test_unresolved_reference_is_valid_by_default(invoke: Invoke) -> None:
    run = invoke("validate", RUN_ONLY)
    assert run.exit_code == 0
    assert run.lines == ["1 valid, 0 invalid in 1 file"]


def test_unresolved_reference_under_strict_refs(invoke: Invoke) -> None:
    run = invoke("validate", "--strict-refs", SPLIT / "run.json", SPLIT / "protocol.json")
    assert run.exit_code == 1
    assert len(run.problem_lines) == 3
    fields = ["workloadDigest", "environmentDigest", "implementationDigest"]
    kinds = ["Workload", "ExecutionEnvironment", "Implementation"]
    for line, field, kind in zip(run.problem_lines, fields, kinds, strict=True):
        assert re.match(rf"{re.escape(str(SPLIT / 'run.json'))}:\d+:5: /spec/{field}: ", line)
        assert line.endswith(f"refers to no {kind} given")
    # The run counted valid on its own; its references make it invalid.
    assert run.summary == "1 valid, 1 invalid in 2 files"


def _committed(tmp_path: Path) -> tuple[Path, Path]:
    """A records folder holding SPLIT's referenced records (and files that are no
    records: a package.json, broken JSON), and SPLIT's run outside it."""
    results = tmp_path / "results"
    for path in sorted(SPLIT.glob("*.json")):
        if path.name != "run.json":
            _copy(path, results / "earlier" / path.name)
    (results / "package.json").write_text('{"name": "x", "version": "1.0.0"}', "utf-8")
    (results / "broken.json").write_text('{"apiVersion": ', "utf-8")
    return results, _copy(SPLIT / "run.json", tmp_path / "staged" / "run.json")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_refs_from_resolves_without_reporting(invoke: Invoke, tmp_path: Path, jobs: str) -> None:
    """--refs-from DIR: references resolve against DIR's records, which are neither
    validated, reported nor counted (pre-commit passes only the staged files)."""
    results, run_file = _committed(tmp_path)
    alone = invoke("validate", "--jobs", jobs, "--strict-refs", run_file)
    assert alone.exit_code == 1 and len(alone.problem_lines) == 4
    run = invoke("validate", "--jobs", jobs, "--refs-from", results, run_file)
    assert run.exit_code == 0, run.output
    assert run.lines == ["1 valid, 0 invalid in 1 file"]
    assert "package.json" not in run.output and "broken.json" not in run.output
    # Repeatable; a folder without the records resolves nothing.
    (tmp_path / "empty").mkdir()
    split = invoke("validate", "--refs-from", tmp_path / "empty", "--refs-from", results, run_file)
    assert split.exit_code == 0, split.output
    nothing = invoke("validate", "--refs-from", tmp_path / "empty", run_file)
    assert nothing.exit_code == 1 and len(nothing.problem_lines) == 4
    assert all(line.endswith("given") for line in nothing.problem_lines)


def test_refs_from_still_checks_the_kind(invoke: Invoke, tmp_path: Path) -> None:
    results, run_file = _committed(tmp_path)
    record = json.loads(run_file.read_text("utf-8"))
    environment = record["spec"]["environmentDigest"]
    record["spec"]["protocolDigest"] = environment
    run_file.write_text(json.dumps(record), "utf-8")
    run = invoke("validate", "--refs-from", results, run_file)
    assert run.exit_code == 1
    (line,) = run.problem_lines
    assert line.endswith(
        f"protocolDigest {environment} refers to an ExecutionEnvironment, not a BenchmarkProtocol"
    )


def test_refs_from_must_exist(invoke: Invoke, tmp_path: Path) -> None:
    run = invoke("validate", "--refs-from", tmp_path / "missing", SPLIT / "run.json")
    assert run.exit_code == 2
    assert "--refs-from" in run.stderr and "does not exist" in run.stderr


def test_unresolved_reference_json(invoke: Invoke) -> None:
    run = invoke("validate", "--strict-refs", "--format", "json", RUN_ONLY)
    assert run.exit_code == 1
    report = run.json()
    assert (report["valid"], report["invalid"], report["ok"]) == (0, 1, False)
    assert {p["code"] for p in report["problems"]} == {"unresolved-reference"}
    assert len(report["problems"]) == 4


def test_wrong_kind_is_fine_without_strict_refs(invoke: Invoke) -> None:
    run = invoke("validate", INVALID / "strict-refs-wrong-kind.jsonl")
    assert run.exit_code == 0


# ------------------------------------------------------------------ CI formats


def test_github_annotations(invoke: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(INVALID.parent)
    run = invoke(
        "validate",
        "--format",
        "github",
        "invalid/jsonl-bad-line.jsonl",
        "invalid/bad-name.json",
        "valid/workload.json",
    )
    assert run.exit_code == 2
    lines = run.stdout.splitlines()
    assert lines[0].startswith(
        "::error file=invalid/jsonl-bad-line.jsonl,line=3,col=51,"
        "title=kernelindex malformed-json at /kind::/kind: expected a JSON value"
    )
    assert lines[1] == (
        "::error file=invalid/bad-name.json,line=5,col=5,title=kernelindex schema at"
        " /metadata/name::/metadata/name: 'Liger GeGLU' does not match '^[a-z0-9][a-z0-9._-]*$'"
    )
    assert lines[-1] == "5 valid, 1 invalid, 1 unreadable in 3 files"


def test_github_annotations_escape_what_github_parses(invoke: Invoke, tmp_path: Path) -> None:
    path = tmp_path / "a,b:c%.json"
    record = json.loads((INVALID / "bad-name.json").read_text("utf-8"))
    record["metadata"]["name"] = "x\nsha%"
    path.write_text(json.dumps(record), encoding="utf-8")
    run = invoke("validate", "--format", "github", path)
    (line, _) = run.stdout.splitlines()
    assert line.startswith(f"::error file={tmp_path}/a%2Cb%3Ac%25.json,")
    assert "'x\\nsha%25'" in line  # repr escaped the newline; then % was encoded


_ANNOTATION = re.compile(r"^::error file=([^,]*),line=(\d+),col=(\d+),title=[^:]*::(/\S*): ")


def _key_at(path: Path, line: int, column: int) -> str:
    """The text a ``line=``/``col=`` pair points at in ``path``, up to 40 characters."""
    return path.read_text("utf-8").splitlines()[line - 1][column - 1 : column + 39]


def test_github_annotations_sit_on_the_pointers_line(invoke: Invoke, tmp_path: Path) -> None:
    """A .json record, an array and a bundle (the seeds' shape, the importers' default
    layout): every annotation has the line and column of its pointer's member."""
    seed = json.loads(SEED_FILES[0].read_text("utf-8"))
    bad = json.loads(json.dumps(seed))
    bad["run"]["spec"]["status"] = "exploded"
    bad["environment"]["metadata"]["name"] = "Not A Slug"
    del bad["protocol"]["spec"]["measurement"]
    bundle = tmp_path / "bundle.json"
    bundle.write_text(json.dumps(bad, indent=2), "utf-8")
    array = tmp_path / "array.json"
    array.write_text(json.dumps([seed, bad], indent=1), "utf-8")
    record = INVALID / "three-schema-errors.json"
    run = invoke("validate", "--format", "github", bundle, array, record)
    assert run.exit_code == 1
    annotations = run.stdout.splitlines()[:-1]
    assert len(annotations) == 4 + 4 + 3, run.stdout  # with the digest mismatch
    for annotation in annotations:
        match = _ANNOTATION.match(annotation)
        assert match is not None, annotation
        path, line, column, pointer = match.groups()
        at = _key_at(Path(path), int(line), int(column))
        token = pointer.rsplit("/", 1)[-1]
        if pointer.endswith("/spec") and "measurement" in annotation:
            assert at.startswith('"spec": {'), annotation  # a missing member: its object
        else:
            assert at.startswith(f'"{token}":'), (annotation, at)
    assert sum(a.startswith(f"::error file={array},") for a in annotations) == 4
    assert any("/1/run/spec/status" in a for a in annotations)


def test_github_annotations_read_no_valid_file_again(
    invoke: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Positions cost nothing on the valid path: no valid file is read a second time."""
    import kernelindex_sdk.reading.positions

    def refuse(text: str, pointers: object) -> None:
        raise AssertionError("positions computed for a valid file")

    monkeypatch.setattr(kernelindex_sdk.reading.positions, "pointer_positions", refuse)
    run = invoke("validate", "--format", "github", *SEED_FILES)
    assert run.exit_code == 0, run.output


def test_github_annotations_encode_a_newline_in_a_file_name(invoke: Invoke, tmp_path: Path) -> None:
    """GitHub's workflow-command escaping: LF as %0A, CR as %0D (its runner decodes them),
    not a backslash escape GitHub would show as it is."""
    path = tmp_path / "two\nlines\r.json"
    path.write_bytes((INVALID / "bad-name.json").read_bytes())
    run = invoke("validate", "--format", "github", path)
    (line, _) = run.stdout.splitlines()
    assert line.startswith(f"::error file={tmp_path}/two%0Alines%0D.json,line=5,col=5,")


def test_junit_report(invoke: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    import xml.etree.ElementTree as ET

    monkeypatch.chdir(INVALID.parent)
    run = invoke(
        "validate",
        "--format",
        "junit",
        "invalid/jsonl-bad-line.jsonl",
        "invalid/three-schema-errors.json",
        "valid/workload.json",
        "missing.json",
    )
    assert run.exit_code == 2
    root = ET.fromstring(run.stdout)
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("8", "1", "2")
    cases = root.findall("./testsuite/testcase")
    assert len(cases) == 8
    failed = [c for c in cases if c.find("failure") is not None]
    assert [c.get("classname") for c in failed] == ["invalid/three-schema-errors.json"]
    failure = failed[0].find("failure")
    assert failure is not None and failure.get("type") == "schema"
    assert len((failure.text or "").splitlines()) == 3
    errors = [c.find("error") for c in cases if c.find("error") is not None]
    assert [e.get("type") for e in errors if e is not None] == [
        "malformed-json",
        "unreadable-file",
    ]
    names = [c.get("name") for c in cases]
    assert "invalid/jsonl-bad-line.jsonl:1 / (Workload w)" in names or any(
        n and n.startswith("invalid/jsonl-bad-line.jsonl:1 ") for n in names
    )


def test_verbose_json_lists_every_item(invoke: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(INVALID.parent)
    run = invoke(
        "validate", "-v", "--format", "json", "valid/records.jsonl", "invalid/bad-name.json"
    )
    report = run.json()
    statuses = [(i["file"], i["line"], i["status"]) for i in report["items"]]
    assert statuses == [
        ("valid/records.jsonl", 1, "valid"),
        ("valid/records.jsonl", 2, "valid"),
        ("valid/records.jsonl", 3, "valid"),
        ("valid/records.jsonl", 4, "valid"),
        ("invalid/bad-name.json", None, "invalid"),
    ]
    assert "items" not in invoke("validate", "--format", "json", "valid/records.jsonl").json()
