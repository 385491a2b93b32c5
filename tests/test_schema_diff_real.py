"""``schema diff`` on schemas no one here wrote: SchemaStore's and the metaschemas.

* The SchemaStore schemas check-jsonschema vendors (Apache-2.0; a test dependency, read
  where it is installed, ``check_jsonschema/builtin_schemas/vendor/``) — Draft 7 and
  2020-12, recursive, with unions, ``definitions``, ``unevaluatedProperties`` — each
  compared with a copy of itself: never a violation, and most decided compatible.
* The Draft 4, 6 and 7 metaschemas (``jsonschema_specifications``, python-jsonschema's
  own, MIT), consecutive versions of one recursive schema in three dialects: decided,
  and every witness judged as claimed by python-jsonschema's class for each side's
  dialect.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import check_jsonschema
import jsonschema_specifications
import pytest
from jsonschema import Draft202012Validator
from jsonschema.validators import validator_for

from kernelindex_sdk.schemadiff import SchemaInputError, diff

VENDORED = sorted(
    (Path(check_jsonschema.__file__).parent / "builtin_schemas" / "vendor").glob("*.json")
)
METASCHEMAS = Path(jsonschema_specifications.__file__).parent / "schemas"
#: SchemaStore schemas that cannot be read by Python's regex engine (``\p{Cc}`` in a
#: pattern): exit 2, said so. (drone-ci's ``$ref``s to another SchemaStore URL are
#: external schemas, the same on both sides.)
UNREADABLE = {"circle-ci"}

pytestmark = pytest.mark.slow


def _copy(source: Path, folder: Path) -> Path:
    folder.mkdir(parents=True)
    target = folder / "s.schema.json"
    shutil.copyfile(source, target)
    return target


def test_every_vendored_schemastore_schema_is_compatible_with_itself(tmp_path: Path) -> None:
    assert len(VENDORED) >= 20
    decided = []
    for source in VENDORED:
        old = _copy(source, tmp_path / source.stem / "old")
        new = _copy(source, tmp_path / source.stem / "new")
        try:
            report = diff(old, new, mode="full")
        except SchemaInputError:
            assert source.stem in UNREADABLE, source.stem
            continue
        assert not report.violations, (source.stem, report.violations[:3])
        if report.compatible:
            decided.append(source.stem)
        else:
            assert report.exit_status() == 3 and report.undecided
    # Every readable one, 24 of 26, in this version of check-jsonschema (median 0.1 s
    # each): an unevaluatedProperties beside allOf (compose-spec, meltano) and a
    # recursion inside a constraint compared whole (bamboo-spec, github-workflows) are
    # compared too.
    assert len(decided) >= 24, decided


def _validator(path: Path) -> Any:
    schema = json.loads(path.read_text(encoding="utf-8"))
    cls = validator_for(schema, default=Draft202012Validator)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


@pytest.mark.parametrize(("old", "new"), [("draft4", "draft6"), ("draft6", "draft7")])
def test_consecutive_metaschemas_are_decided_with_true_witnesses(
    tmp_path: Path, old: str, new: str
) -> None:
    sides = {
        "old": _copy(METASCHEMAS / old / "metaschema.json", tmp_path / "old"),
        "new": _copy(METASCHEMAS / new / "metaschema.json", tmp_path / "new"),
    }
    report = diff(sides["old"], sides["new"], mode="full")
    assert report.violations
    judges = {name: _validator(path) for name, path in sides.items()}
    for violation in report.violations:
        other = "new" if violation.accepted_by == "old" else "old"
        assert judges[violation.accepted_by].is_valid(violation.witness), violation
        assert not judges[other].is_valid(violation.witness), violation
