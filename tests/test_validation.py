"""Validation sessions: routing, bundles, references across documents."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples
from strategies import replaced_at, value_paths

from kernelindex_sdk.canonical import digest
from kernelindex_sdk.models import unstructure
from kernelindex_sdk.models.strategies import consistent_bundles, json_values
from kernelindex_sdk.validating.validation import ValidationSession, validate


def test_bundle_reference_mismatch(seed_bundle: dict[str, Any]) -> None:
    seed_bundle["environment"]["spec"]["hardware"]["architecture"] = "sm_89"
    (problem,) = validate(seed_bundle, source="b.json")
    assert problem.pointer == "/run/spec/environmentDigest"
    assert problem.code == "digest-mismatch"
    assert digest(seed_bundle["environment"]) in problem.message


def test_metadata_does_not_break_bundle_references(seed_bundle: dict[str, Any]) -> None:
    seed_bundle["protocol"]["metadata"]["title"] = "renamed"
    assert validate(seed_bundle) == []


def test_array_items_are_located(seed_bundle: dict[str, Any]) -> None:
    bad = copy.deepcopy(seed_bundle)
    bad["run"]["spec"]["status"] = "exploded"
    found = validate([seed_bundle, bad, 7])
    pointers = sorted(p.pointer for p in found)
    assert pointers == ["/1/run/spec/status", "/2"]


def test_unknown_kind_lists_known(seed_bundle: dict[str, Any]) -> None:
    record = seed_bundle["protocol"]
    record["kind"] = "BenchmarkPotato"
    (problem,) = validate(record)
    assert problem.code == "unknown-kind"
    assert "BenchmarkProtocol" in problem.message and "BenchmarkRun" in problem.message


@pytest.mark.parametrize(
    ("value", "code", "says"),
    [
        # Any JSON object that is no record (a package.json): docs/format.md's code.
        ({"name": "pkg", "version": "1.0.0"}, "not-a-record", "not a kernelindex record"),
        ({}, "not-a-record", "not a kernelindex record"),
        ({"kind": "BenchmarkRun"}, "unknown-kind", "(missing)/'BenchmarkRun'"),
        ({"apiVersion": "kernelindex.dev/v1alpha1"}, "unknown-kind", "'/(missing)"),
        ({"apiVersion": None, "kind": None}, "unknown-kind", "(missing)/(missing)"),
        ({"apiVersion": 1, "kind": [2]}, "unknown-kind", "(a number, not a string)/(an array,"),
        ({"run": {"name": "x"}}, "unknown-kind", "(missing)/(missing)"),
    ],
)
def test_what_is_no_record_never_shows_python_none(value: Any, code: str, says: str) -> None:
    (problem,) = validate(value, source="package.json")
    assert problem.code == code
    assert says in problem.message
    assert "None" not in str(problem)


def test_references_resolve_across_documents(seed_bundle: dict[str, Any]) -> None:
    run, protocol, environment = (seed_bundle[k] for k in ("run", "protocol", "environment"))
    session = ValidationSession(strict_refs=True)
    items = [
        *session.check_document(protocol, source="p.json"),
        *session.check_document(environment, source="e.json"),
        *session.check_document(run, source="r.jsonl", line=3),
    ]
    assert all(item.valid for item in items)
    late = session.finish()
    # Workload and implementation were never given.
    assert sorted(p.pointer for p in late) == ["/spec/implementationDigest", "/spec/workloadDigest"]
    assert all(p.source == "r.jsonl" and p.line == 3 for p in late)
    assert session.invalidated == 1


def test_reference_to_wrong_kind(seed_bundle: dict[str, Any]) -> None:
    run, protocol = seed_bundle["run"], seed_bundle["protocol"]
    run["spec"]["environmentDigest"] = digest(protocol)
    session = ValidationSession(strict_refs=True)
    session.check_document([protocol, run])
    messages = [p.message for p in session.finish()]
    assert any("refers to a BenchmarkProtocol, not an ExecutionEnvironment" in m for m in messages)


def test_without_strict_refs_nothing_is_kept(seed_bundle: dict[str, Any]) -> None:
    session = ValidationSession()
    for _ in range(3):
        session.check_document(seed_bundle["run"])
    assert session.finish() == []
    assert session._pending == [] and session._known == {}


def test_value_jcs_cannot_represent_is_reported(seed_bundle: dict[str, Any]) -> None:
    """Only a document built in Python can hold one; the intake refuses such input."""
    workload = {
        "apiVersion": "kernelindex.dev/v1alpha1",
        "kind": "Workload",
        "metadata": {"name": "w"},
        "spec": {"kernel": "k", "pass": "full", "parameters": {}, "dtype": "bf16",
                 "settings": {"seed": 2**60}},
    }  # fmt: skip
    (problem,) = validate(workload)
    assert problem.code == "not-canonicalizable" and problem.pointer == ""


def test_pattern_dollar_is_the_ecma_end_of_input(seed_bundle: dict[str, Any]) -> None:
    """Python's ``$`` also matches before a final newline; ECMA-262's (the spec's) does not."""
    seed_bundle["environment"]["metadata"]["name"] = "liger-bench\n"
    (problem,) = validate(seed_bundle)
    assert problem.pointer == "/environment/metadata/name"
    assert "does not match" in problem.message


def test_strict_json_session_defers_only_run_digests(seed_bundle: dict[str, Any]) -> None:
    """validate's sessions (documents from intake) put off the digest nothing needs —
    and compute it when asked, so the speed switch never changes a result."""
    (plain,) = ValidationSession().check_document(seed_bundle)
    (strict,) = ValidationSession(strict_json=True).check_document(seed_bundle)
    assert plain.valid and strict.valid
    run_ref = strict.records[0]
    assert run_ref.kind == "BenchmarkRun" and run_ref[3][1] is not None  # not yet computed
    assert strict == plain
    assert run_ref[3][1] is None and run_ref.digest == plain.records[0].digest
    # The embedded records' digests are still compared with the run's references.
    seed_bundle["environment"]["spec"]["hardware"]["architecture"] = "sm_89"
    (broken,) = ValidationSession(strict_json=True).check_document(seed_bundle)
    assert [p.code for p in broken.problems] == ["digest-mismatch"]


def test_strict_json_with_strict_refs_keeps_run_digests(seed_bundle: dict[str, Any]) -> None:
    """A run digest written where a protocol belongs is still named as a run."""
    run, protocol = seed_bundle["run"], seed_bundle["protocol"]
    session = ValidationSession(strict_refs=True, strict_json=True)
    (item,) = session.check_document(run)
    assert item.records[0].digest == digest(run)
    run2 = copy.deepcopy(run)
    run2["spec"]["protocolDigest"] = digest(run)
    session.check_document([protocol, run2])
    messages = [p.message for p in session.finish()]
    assert any("refers to a BenchmarkRun, not a BenchmarkProtocol" in m for m in messages)


def test_a_bundle_with_schema_problems_still_has_its_references_checked(
    seed_bundle: dict[str, Any],
) -> None:
    """An invalid name and a changed protocol: both reported at once, not one by one."""
    seed_bundle["run"]["metadata"]["name"] = "Not A Slug"
    seed_bundle["protocol"]["spec"]["harness"]["name"] = "another harness"
    problems = validate(seed_bundle)
    assert [(p.pointer, p.code) for p in problems] == [
        ("/run/metadata/name", "schema"),
        ("/run/spec/protocolDigest", "digest-mismatch"),
    ]
    # A malformed reference is the schema's to report, once.
    seed_bundle["run"]["spec"]["protocolDigest"] = "sha256:nope"
    pointers = [p.pointer for p in validate(seed_bundle)]
    assert pointers.count("/run/spec/protocolDigest") == 1


# ------------------------------------------------------------ untrusted shapes


@settings(max_examples=examples(300), deadline=None)
@given(st.data())
def test_any_value_anywhere_is_a_problem_never_a_crash(data: st.DataObject) -> None:
    """Input is untrusted: a valid bundle with any one node replaced by any JSON value
    (a list where the apiVersion belongs, an object for a statistic) gets an Item, with
    problems unless still valid, from every entry point; nothing raises."""
    bundle = unstructure(data.draw(consistent_bundles()))
    paths = value_paths(bundle)
    shallow = [p for p in paths if len(p) <= 2]  # envelopes: what routing reads first
    path = data.draw(st.sampled_from(shallow) | st.sampled_from(paths))
    broken = replaced_at(bundle, path, data.draw(json_values))
    session = ValidationSession(strict_refs=True)
    for value in (broken, broken.get("run") if isinstance(broken, dict) else broken, [broken]):
        for item in session.check_document(value):
            assert item.valid or item.problems
    session.finish()


@pytest.mark.parametrize("bad", [[1], {"a": 1}, None, 1.5, True, ""], ids=repr)
@pytest.mark.parametrize("key", ["apiVersion", "kind", "metadata", "spec"])
@pytest.mark.parametrize("member", ["run", "protocol", "environment"])
def test_an_envelope_of_any_type_is_a_problem(
    seed_bundle: dict[str, Any], member: str, key: str, bad: Any
) -> None:
    bundle = seed_bundle
    bundle[member][key] = bad
    for value in (bundle, bundle[member]):
        (item,) = ValidationSession(strict_refs=True).check_document(value)
        assert item.problems
