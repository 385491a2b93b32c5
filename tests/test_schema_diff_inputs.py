"""``schema diff`` on what a side holds: every schema compared or refused, ECMA-262
patterns, and ``format`` read as its dialect reads it — each through the real command.

* Folders whose schemas name no kind, or that hold a schema no kind reaches: exit 2,
  naming the files (never "0 kinds compared", exit 0), whichever way the sides are given.
* A pattern in ECMA-262's own syntax (``(?<name>…)``, ``\\p{L}``, ``\\cJ``) is a valid
  schema; the diff judges the rest, and a claim that needs what Python cannot read is
  undecided.
* ``format``: an annotation unless ``--format-assertion``; every report format says which.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from acceptance.support import Run, run_subprocess

from kernelindex_sdk.models import API_VERSION
from kernelindex_sdk.schemadiff import SchemaInputError, diff
from kernelindex_sdk.schemadiff.inputs import ecma_regex

ROOT = Path(__file__).resolve().parent.parent
RELEASED = ROOT / "schemas-released" / "kernelindex.dev" / "v1alpha1"


def schema_diff(*args: str | Path) -> Run:
    return run_subprocess(["schema", "diff", *args])


def _write(path: Path, schema: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(schema), encoding="utf-8")
    return path


def _object(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


# --------------------------------------------------------------------------- kinds


def test_folders_whose_schemas_name_no_kind_are_refused(tmp_path: Path) -> None:
    old = _write(tmp_path / "a" / "x.schema.json", _object(a={"type": "integer"})).parent
    new = _write(tmp_path / "b" / "x.schema.json", _object(a={"type": "string"})).parent
    run = schema_diff(old, new, "--mode", "full")
    assert run.exit_code == 2, run.output
    assert not run.stdout
    (line,) = run.stderr.splitlines()
    assert "names no kind" in line and str(old / "x.schema.json") in line
    # Against an installed apiVersion, either way round.
    for args in ((old, API_VERSION), (API_VERSION, new)):
        run = schema_diff(*args, "--mode", "full")
        assert run.exit_code == 2 and "names no kind" in run.stderr, run.output


def test_a_schema_no_kind_reaches_is_refused_one_a_kind_reaches_is_compared(
    tmp_path: Path,
) -> None:
    side = tmp_path / "side"
    side.mkdir()
    for path in RELEASED.glob("*.schema.json"):
        (side / path.name).write_bytes(path.read_bytes())
    # common.schema.json names no kind, and every kind reaches it: compared.
    run = schema_diff(side, side, "--mode", "full")
    assert run.exit_code == 0, run.output
    stray = _write(side / "stray.schema.json", _object(a={"type": "integer"}))
    run = schema_diff(side, side, "--mode", "full")
    assert run.exit_code == 2, run.output
    assert str(stray) in run.stderr and "no kind's $ref reaches it" in run.stderr


def test_nothing_to_compare_is_never_compatible() -> None:
    from kernelindex_sdk.schema.registry import SchemaRegistry

    empty = SchemaRegistry((), (), {})
    with pytest.raises(SchemaInputError, match="nothing to compare"):
        diff(empty, empty, mode="full")


# --------------------------------------------------------------------------- ECMA-262


@pytest.mark.parametrize(
    ("regex", "valid"),
    [
        ("^(?<y>[0-9]{4})$", True),
        ("^\\p{L}+$", True),
        ("\\cJ", True),
        ("^[a-z]+$", True),
        ("(?P<y>a)", False),  # Python's spelling, not ECMA-262's
        ("^[a-", False),
    ],
)
def test_a_pattern_is_checked_as_ecma_262(regex: str, valid: bool) -> None:
    assert ecma_regex(regex) is valid


def _with_year(year_pattern: str, b: str, *, required: bool = False) -> dict[str, Any]:
    schema = _object(y={"type": "string", "pattern": year_pattern}, b={"type": b})
    return {**schema, "required": ["y", "b"]} if required else schema


@pytest.mark.parametrize("pattern", ["^(?<y>[0-9]{4})$", "^\\p{L}+$", "^\\cJ$"])
def test_an_ecma_pattern_unchanged_leaves_the_rest_judged(tmp_path: Path, pattern: str) -> None:
    old = _write(tmp_path / "old.schema.json", _with_year(pattern, "integer"))
    same = _write(tmp_path / "same.schema.json", _with_year(pattern, "integer"))
    new = _write(tmp_path / "new.schema.json", _with_year(pattern, "string"))
    run = schema_diff(old, same, "--mode", "full")
    assert run.exit_code == 0, run.output  # the pattern the same on both sides
    run = schema_diff(old, new, "--mode", "full")
    assert run.exit_code == 1, run.output  # the change elsewhere, proven
    assert "TYPE_NARROWED backward" in run.stdout and "TYPE_WIDENED forward" in run.stdout


def test_a_claim_that_needs_a_pattern_python_cannot_read_is_undecided(tmp_path: Path) -> None:
    pattern = "^\\p{L}+$"
    old = _write(tmp_path / "old.schema.json", _with_year(pattern, "integer", required=True))
    new = _write(tmp_path / "new.schema.json", _with_year(pattern, "string", required=True))
    run = schema_diff(old, new, "--mode", "full")
    assert run.exit_code == 3, run.output
    assert "a pattern Python cannot read" in run.stdout
    # A named group is rewritten for Python: judged, the witness holds a year.
    named = "^(?<y>[0-9]{4})$"
    old = _write(tmp_path / "o2.schema.json", _with_year(named, "integer", required=True))
    new = _write(tmp_path / "n2.schema.json", _with_year(named, "string", required=True))
    run = schema_diff(old, new, "--mode", "full")
    assert run.exit_code == 1, run.output


def test_a_pattern_that_is_no_regex_is_still_exit_2(tmp_path: Path) -> None:
    old = _write(tmp_path / "old.schema.json", _object(y={"type": "string", "pattern": "^[a-"}))
    run = schema_diff(old, old, "--mode", "full")
    assert run.exit_code == 2 and "is not a 'regex'" in run.stderr, run.output


# --------------------------------------------------------------------------- format


def _uri_removed(tmp_path: Path, dialect: str | None = None) -> tuple[Path, Path]:
    head = {"$schema": dialect} if dialect else {}
    old = {**head, **_object(u={"type": "string", "format": "uri"}), "required": ["u"]}
    new = {**head, **_object(u={"type": "string"}), "required": ["u"]}
    return _write(tmp_path / "old.schema.json", old), _write(tmp_path / "new.schema.json", new)


@pytest.mark.parametrize(
    "dialect",
    [
        None,
        "https://json-schema.org/draft/2019-09/schema",
        "http://json-schema.org/draft-07/schema#",
    ],
)
def test_format_is_an_annotation_unless_asserted(tmp_path: Path, dialect: str | None) -> None:
    old, new = _uri_removed(tmp_path, dialect)
    run = schema_diff(old, new, "--mode", "full")
    assert run.exit_code == 0, run.output
    assert run.lines == [
        "compatible (mode full, policy strict, format as annotation): 1 kind compared"
    ]
    run = schema_diff(old, new, "--mode", "full", "--format-assertion")
    assert run.exit_code == 1, run.output
    assert run.lines[0].startswith("BOUND_RELAXED forward")
    assert run.lines[-1].startswith("incompatible (mode full, policy strict, format asserted)")


@pytest.mark.parametrize("asserted", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_every_report_format_says_how_format_was_read(tmp_path: Path, asserted: bool) -> None:
    old, new = _uri_removed(tmp_path)
    flag = ["--format-assertion"] if asserted else []
    words = "format asserted" if asserted else "format as annotation"
    text = schema_diff(old, new, "--mode", "full", *flag)
    assert words in text.lines[-1]
    github = schema_diff(old, new, "--mode", "full", "--format", "github", *flag)
    assert words in github.lines[-1]
    report = schema_diff(old, new, "--mode", "full", "--format", "json", *flag).json()
    assert report["format_assertion"] is asserted
    junit = schema_diff(old, new, "--mode", "full", "--format", "junit", *flag)
    properties = {
        p.get("name"): p.get("value") for p in ET.fromstring(junit.stdout_bytes).iter("property")
    }
    assert properties["format"] == ("assertion" if asserted else "annotation")


def test_the_released_check_asserts_formats_as_validate_does() -> None:
    """``.ci/run`` compares the released schemas with formats asserted: ``kernelindex
    validate`` asserts them, so a format dropped from a shipped field is a change."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    line = next(x for x in ci.splitlines() if 'schema diff "${released%/}"' in x)
    assert "--format-assertion" in line
