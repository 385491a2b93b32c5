"""``schema diff`` on real version histories: consecutive SchemaStore releases.

The pairs are in ``tests/fixtures/schemastore/`` (its README: where each version came
from; ``benchmarks/bench_schema_diff_real.py`` measures the whole set). Each pair is
diffed in both directions, and every violation's witness is judged by a plain
python-jsonschema validator of each side's own dialect (formats asserted), not by the
engine the diff used: accepted by the side the violation names, rejected by the other.
Plain ``pytest`` runs a few small histories; the ``slow`` test runs all but the two
largest (``TOO_LARGE_FOR_CI``, diffed by the benchmark only).
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from jsonschema.validators import validator_for
from referencing import Registry

from kernelindex_sdk.schemadiff import SchemaInputError, diff

FIXTURES = Path(__file__).parent / "fixtures" / "schemastore"
MANIFEST = json.loads((FIXTURES / "provenance.json").read_text(encoding="utf-8"))
HISTORIES: dict[str, list[dict[str, Any]]] = MANIFEST["schemas"]
#: Small histories (a few kB a version, under a second a pair) for plain ``pytest``.
#: (taskfile's, since patternProperties are compared, spends minutes on witness
#: searches: it runs with the slow tests, in test_every_history_is_never_wrong.)
QUICK = ("readthedocs", "codecov", "cloudbuild")
#: Histories some of whose versions cannot be read by Python's regex engine
#: (``\p{Cc}`` in a pattern): exit 2 is expected. (A ``$ref`` to another SchemaStore
#: URL — drone-ci's, dependabot's — is an external schema, assumed unchanged.)
UNREADABLE = {"circle-ci"}
#: Histories of 1.6-2.3 MB versions (azure-pipelines: 10-25 s a diff; renovate) that
#: would make the slow run take many minutes: only the benchmark diffs them.
TOO_LARGE_FOR_CI = {"azure-pipelines", "renovate"}


def _pairs(names: tuple[str, ...] | list[str]) -> list[tuple[str, int]]:
    return [(name, i) for name in names for i in range(len(HISTORIES[name]) - 1)]


def _write(entry: dict[str, Any], folder: Path) -> tuple[Path, Any]:
    data = gzip.decompress((FIXTURES / entry["file"]).read_bytes())
    folder.mkdir(parents=True)
    path = folder / "s.schema.json"
    path.write_bytes(data)
    return path, json.loads(data)


def _validator(schema: Any) -> Any:
    """Nothing fetched: a witness whose verdict reaches a ``$ref`` into another document
    (an external schema, never read by the diff) raises there, and fails the test."""
    cls = validator_for(schema, default=Draft202012Validator)
    return cls(schema, format_checker=cls.FORMAT_CHECKER, registry=Registry())


def _check_pair(name: str, index: int, tmp_path: Path) -> list[int]:
    """The exit statuses of both directions (strict), every witness judged."""
    history = HISTORIES[name]
    old, old_schema = _write(history[index], tmp_path / "old")
    new, new_schema = _write(history[index + 1], tmp_path / "new")
    judges = {"old": _validator(old_schema), "new": _validator(new_schema)}
    statuses = []
    for a, b, names in ((old, new, ("old", "new")), (new, old, ("new", "old"))):
        try:
            report = diff(a, b, mode="backward")
        except SchemaInputError:
            assert name in UNREADABLE, name
            statuses.append(2)
            continue
        statuses.append(report.exit_status())
        for violation in report.violations:
            # The run's "old" is names[0], its "new" names[1].
            accepting = names[0] if violation.accepted_by == "old" else names[1]
            rejecting = names[1] if accepting == names[0] else names[0]
            assert judges[accepting].is_valid(violation.witness), (name, index, violation)
            assert not judges[rejecting].is_valid(violation.witness), (name, index, violation)
    return statuses


def test_the_fixtures_are_the_bytes_their_provenance_names() -> None:
    files = {e["file"] for history in HISTORIES.values() for e in history}
    assert files == {str(p.relative_to(FIXTURES)) for p in FIXTURES.glob("*/*.json.gz")}
    for history in HISTORIES.values():
        for entry in history:
            data = gzip.decompress((FIXTURES / entry["file"]).read_bytes())
            assert hashlib.sha256(data).hexdigest() == entry["sha256"], entry["file"]
            assert entry["wheel_path"].startswith("check_jsonschema/builtin_schemas/vendor/")


@pytest.mark.parametrize(("name", "index"), _pairs(QUICK))
def test_small_histories_are_decided_with_true_witnesses(
    name: str, index: int, tmp_path: Path
) -> None:
    statuses = _check_pair(name, index, tmp_path)
    assert 2 not in statuses


@pytest.mark.usefixtures("no_network")
def test_a_ref_to_another_schemastore_url_is_assumed_unchanged(tmp_path: Path) -> None:
    """drone-ci 02->03: each side refers to six kubernetes definitions at
    json.schemastore.org; never fetched, they are taken to be the same on both sides,
    said so, and the pair is decided (it was a usage error)."""
    assert _check_pair("drone-ci", 1, tmp_path / "checked") == [0, 0]
    history = HISTORIES["drone-ci"]
    old, _ = _write(history[1], tmp_path / "old")
    new, _ = _write(history[2], tmp_path / "new")
    report = diff(old, new, mode="full")
    assert report.compatible
    assert len(report.assumed_unchanged) == 6
    assert all(
        uri.startswith("https://json.schemastore.org/kubernetes-definitions.json#/definitions/")
        for uri in report.assumed_unchanged
    )


#: Pairs decided only since ``patternProperties`` is compared member by member (a
#: root of hidden-key patterns beside ``additionalProperties``; pattern-keyed maps), by
#: the exit statuses of both directions. gitlab-ci's (~5 s) runs with the slow tests.
PATTERNED = {("bamboo-spec", 3): [0, 0], ("gitlab-ci", 2): [1, 1]}


@pytest.mark.parametrize(
    ("name", "index"),
    [
        pytest.param(*pair, marks=[pytest.mark.slow] if pair[0] == "gitlab-ci" else [])
        for pair in sorted(PATTERNED)
    ],
)
def test_pairs_with_pattern_properties_are_decided(name: str, index: int, tmp_path: Path) -> None:
    assert _check_pair(name, index, tmp_path) == PATTERNED[name, index]


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", sorted(n for n in set(HISTORIES) - TOO_LARGE_FOR_CI if len(HISTORIES[n]) > 1)
)
def test_every_history_is_never_wrong(name: str, tmp_path: Path) -> None:
    """One schema's history a test, so that the workers share them (~8 CPU minutes in
    all since patternProperties, unions and recursion are compared: witness searches)."""
    statuses = []
    for _, index in _pairs([name]):
        statuses += _check_pair(name, index, tmp_path / str(index))
    # How much is decided is measured by benchmarks/bench_schema_diff_real.py; here,
    # that every history is read and every witness is true.
    assert statuses
