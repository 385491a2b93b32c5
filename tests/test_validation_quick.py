"""``ValidationSession.passes``, the quick answer a problems-only pipeline asks first,
must agree with the full check: a quick pass that were wrong would be a silent pass.

Differential, as the issue asks of every speed-up: on every example file the project
ships, on the seeds, and on valid bundles with any one node replaced by any JSON value.
"""

from __future__ import annotations

import copy
import io
import json
import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import seed_paths
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples
from strategies import replaced_at, value_paths

from kernelindex_sdk.canonical import digest
from kernelindex_sdk.checks import v1alpha1
from kernelindex_sdk.checks.v1alpha1 import REFERENCES
from kernelindex_sdk.errors import IntakeError
from kernelindex_sdk.models import unstructure
from kernelindex_sdk.models.strategies import consistent_bundles, json_values
from kernelindex_sdk.reading.intake import Document, loads
from kernelindex_sdk.reading.intake.jsonl import jsonl_records
from kernelindex_sdk.reading.sources import documents
from kernelindex_sdk.schema.registry import default_registry
from kernelindex_sdk.validating import quick
from kernelindex_sdk.validating.engine import JsonschemaEngine, ValidationEngine
from kernelindex_sdk.validating.pipeline import Pipeline
from kernelindex_sdk.validating.validation import Item, ValidationSession

EXAMPLES = Path(__file__).parent / "examples"


def _verdicts(session: ValidationSession, value: Any) -> tuple[bool, bool]:
    """(quick pass, full check found one item and no problem). The quick pass is asked
    twice, without and with the bytes the intake hands up (``Document.written``), whose
    end proves the memo's records (the second call meets what the first remembered):
    the same answer."""
    quick = session.passes(value)
    try:
        written = orjson.dumps(value)
    except TypeError:
        written = None
    if written is not None:
        assert session.passes(value, written) is quick
    items = session.check_document(value)
    return quick, len(items) == 1 and not items[0].problems


def test_every_example_gets_the_same_verdict_both_ways() -> None:
    session = ValidationSession(strict_json=True)
    paths = [str(EXAMPLES), *map(str, seed_paths())]
    passed = checked = 0
    for document in documents(paths):
        if isinstance(document, IntakeError):
            continue
        assert isinstance(document, Document)
        quick, full = _verdicts(session, document.value)
        where = f"{document.source}:{document.line}"
        if isinstance(document.value, dict):
            assert quick == full, where
            if document.value.get("kind") == "BenchmarkRun":
                # The same run inside a bundle: the rules run on bundle members too.
                assert _verdicts(session, {"run": document.value}) == (quick, full), where
        else:
            assert not quick, where  # an array is several items: always checked in full
        if "schema-diff" in Path(document.source or "").parts:
            continue  # pairs of schemas for `schema diff`: checked, not counted as records
        passed += quick
        checked += 1
    # Not vacuous: most example documents are valid records and bundles.
    assert checked > 100 and passed > checked // 3


@pytest.mark.parametrize(
    "options", [{"strict_refs": True}, {"keep_values": True}, {}], ids=["refs", "values", "plain"]
)
def test_sessions_that_keep_items_never_pass_quickly(
    seed_bundle: dict[str, Any], options: dict[str, Any]
) -> None:
    """strict_refs and keep_values need every item; a session not promised strict
    intake's values must look for values JCS cannot represent."""
    session = ValidationSession(**options)
    assert session.passes(seed_bundle) is False
    assert session.check_document(seed_bundle)[0].valid


#: The engines passes() meets: the default one takes the bundle schema apart and checks
#: each referenced member as it reads it; the reference checks the bundle whole, and the
#: references after the rules.
ENGINES = [
    pytest.param(None, id="default"),
    pytest.param(JsonschemaEngine(default_registry()), id="reference"),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("member", ["protocol", "environment"])  # the seed bundle's
def test_a_wrong_embedded_record_does_not_pass(
    seed_bundle: dict[str, Any], engine: ValidationEngine | None, member: str
) -> None:
    session = ValidationSession(strict_json=True, engine=engine)
    assert session.passes(copy.deepcopy(seed_bundle))
    changed = {"protocol": ("harness", "name"), "environment": ("hardware", "product")}[member]
    seed_bundle[member]["spec"][changed[0]][changed[1]] += " (changed)"  # valid, another digest
    assert not session.passes(seed_bundle)
    # Passed once before: the digest memo keys by content, so the change is seen.
    assert _verdicts(session, seed_bundle) == (False, False)
    # Re-pointed, it passes.
    run_spec, field = seed_bundle["run"]["spec"], REFERENCES[member][1]
    run_spec[field] = digest(seed_bundle[member])
    assert _verdicts(session, seed_bundle) == (True, True)


def test_a_bundle_whose_run_breaks_a_rule_does_not_pass(seed_bundle: dict[str, Any]) -> None:
    timing = seed_bundle["run"]["spec"]["timing"]["latencyNs"]
    timing["median"] = 10 * max(timing.values())
    assert _verdicts(ValidationSession(strict_json=True), seed_bundle) == (False, False)


def test_without_orjson_nothing_is_remembered_and_verdicts_hold(
    seed_bundle: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without orjson there are no record bytes to remember referenced records by:
    each is checked and digested every time, with the same verdicts."""
    monkeypatch.setattr(quick, "_orjson_dumps", None)
    session = ValidationSession(strict_json=True)
    assert _verdicts(session, seed_bundle) == (True, True)
    assert _verdicts(session, seed_bundle) == (True, True)
    seed_bundle["run"]["spec"]["environmentDigest"] = "sha256:" + "0" * 64
    assert _verdicts(session, seed_bundle) == (False, False)
    assert session.quick_pass._records == {}


def test_a_shell_that_raises_is_not_a_pass(seed_bundle: dict[str, Any]) -> None:
    """The shell checks the run in its own Rust call, which raises where a pattern
    meets a lone surrogate (strict intake never gives one, but passes must not raise
    where the promise is broken): not known to pass, and the full check explains it."""
    seed_bundle["run"]["spec"]["observedAt"] = "\ud800"
    session = ValidationSession(strict_json=True)
    assert session.passes(seed_bundle) is False
    assert not session.check_document(seed_bundle)[0].valid


def _through_intake(value: Any) -> Any:
    """The value as strict intake gives it (what a strict_json session is promised)."""
    try:
        return loads(orjson.dumps(value))
    except (TypeError, IntakeError):  # e.g. an integer beyond what intake takes
        return None


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=examples(300), deadline=None)
@given(st.data())
def test_any_value_anywhere_gets_the_same_verdict_both_ways(
    engine: ValidationEngine | None, data: st.DataObject
) -> None:
    bundle = unstructure(data.draw(consistent_bundles()))
    paths = value_paths(bundle)
    path = data.draw(st.sampled_from(paths))
    broken = _through_intake(replaced_at(bundle, path, data.draw(json_values)))
    session = ValidationSession(strict_json=True, engine=engine)
    for value in (bundle, broken, broken.get("run") if isinstance(broken, dict) else None):
        if isinstance(value, dict):
            quick, full = _verdicts(session, value)
            assert quick == full


@settings(max_examples=examples(100), deadline=None)
@given(consistent_bundles())
def test_valid_bundles_pass_quickly(bundle: Any) -> None:
    value = _through_intake(unstructure(bundle))
    assert _verdicts(ValidationSession(strict_json=True), value) == (True, True)


def test_reporting_only_problems_counts_as_reporting_everything() -> None:
    paths = [str(EXAMPLES), *map(str, seed_paths())]
    every = Pipeline(paths, report="all")
    everything = [item for item in every if item.problems]
    only = Pipeline(paths, report="problems")
    problems = list(only)
    assert problems == everything
    assert only.tally == every.tally and only.late == every.late
    assert every.tally.valid > 50


def test_an_invalid_bundle_is_explained_by_the_reference_once(
    seed_bundle: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The reference engine (python-jsonschema) takes milliseconds a bundle: neither the
    # quick path nor check_item may ask it for a verdict before asking for problems.
    session = ValidationSession(strict_json=True)
    reference = getattr(session.engine, "reference", None)
    if reference is None:
        pytest.skip("the reference is the only engine here (no jsonschema-rs)")
    calls: list[str] = []
    for name in ("is_valid", "problems"):
        method = getattr(reference, name)

        def spy(*args: Any, _name: str = name, _method: Any = method) -> Any:
            calls.append(_name)
            return _method(*args)

        monkeypatch.setattr(reference, name, spy)
    bundle = {**copy.deepcopy(seed_bundle), "unexpected": 1}
    assert not session.passes(bundle)
    [item] = session.check_document(bundle)
    assert [p.pointer for p in item.problems] == ["/unexpected"]
    assert calls == ["problems"]
    # A valid one never reaches the reference at all.
    calls.clear()
    assert session.passes(seed_bundle)
    assert not session.check_document(seed_bundle)[0].problems
    assert calls == []


@pytest.mark.parametrize(
    ("source", "target"), [("protocol", "environment"), ("environment", "protocol")]
)
def test_a_remembered_record_in_another_member_is_checked_against_that_member(
    seed_bundle: dict[str, Any], source: str, target: str
) -> None:
    # A valid record, remembered from one line, put where another member goes on the
    # next (the run's reference made to match): that member's schema refuses it, so
    # the memory of referenced records must be per schema, not per bytes alone.
    session = ValidationSession(strict_json=True)
    assert session.passes(copy.deepcopy(seed_bundle))
    forged = copy.deepcopy(seed_bundle)
    forged[target] = copy.deepcopy(seed_bundle[source])
    spec = forged["run"]["spec"]
    spec[REFERENCES[target][1]] = spec[REFERENCES[source][1]]
    assert _verdicts(session, forged) == (False, False)


@settings(max_examples=examples(100), deadline=None)
@given(st.data())
def test_a_record_moved_to_another_member_gets_the_same_verdict_both_ways(
    data: st.DataObject,
) -> None:
    """Any embedded record put in any member's place, the run's reference re-pointed to
    it, checked by a session that has just passed the original bundle: what the
    quick path remembers of a record must not stand in for another member's checks."""
    bundle = _through_intake(unstructure(data.draw(consistent_bundles())))
    present = [member for member in REFERENCES if member in bundle]
    if not present:
        return
    source = data.draw(st.sampled_from(present), label="source")
    target = data.draw(st.sampled_from(list(REFERENCES)), label="target")
    moved = copy.deepcopy(bundle)
    moved[target] = copy.deepcopy(bundle[source])
    spec = moved["run"]["spec"]
    spec[REFERENCES[target][1]] = bundle["run"]["spec"][REFERENCES[source][1]]
    session = ValidationSession(strict_json=True)
    assert session.passes(bundle)
    quick, full = _verdicts(session, moved)
    assert quick == full
    assert full == (source == target)  # a record of one kind is never valid as another


def test_records_of_one_digest_in_other_forms_are_each_checked(
    seed_bundle: dict[str, Any],
) -> None:
    """The memory of referenced records is keyed by the digest a run claims and holds
    one record's bytes per key: a record of the same digest in another form (its keys
    in another order) is checked again, not taken for the remembered one, and the
    verdicts stay those of the full check, whichever form comes when."""
    session = ValidationSession(strict_json=True)
    reordered = copy.deepcopy(seed_bundle)
    reordered["protocol"] = dict(reversed(list(seed_bundle["protocol"].items())))
    assert orjson.dumps(reordered["protocol"]) != orjson.dumps(seed_bundle["protocol"])
    assert digest(reordered["protocol"]) == digest(seed_bundle["protocol"])
    changed = copy.deepcopy(seed_bundle)
    changed["protocol"]["spec"]["harness"]["name"] += " (changed)"  # valid, another digest
    for bundle, valid in [
        (seed_bundle, True),
        (reordered, True),
        (changed, False),
        (seed_bundle, True),
        (changed, False),
        (reordered, True),
    ]:
        assert _verdicts(session, bundle) == (valid, valid)


def _moved_last(bundle: dict[str, Any], member: str) -> dict[str, Any]:
    """The bundle with ``member`` last (a JSON object's members may come in any order)."""
    moved = {key: value for key, value in bundle.items() if key != member}
    moved[member] = bundle[member]
    return moved


@settings(max_examples=examples(150), deadline=None)
@given(st.data())
def test_the_end_of_the_written_bytes_proves_only_what_is_there(data: st.DataObject) -> None:
    """The memo's records are proven by the end of ``orjson.dumps`` of the bundle: a
    session that has passed a bundle meets another whose members are in another order,
    whose referenced member was swapped for another record (the run still claiming the
    first's digest), or whose last member nests a copy of the remembered members at its
    end (the bytes the proof looks for, one level down). Its quick answer with the bytes
    is the full check's."""
    bundle = _through_intake(unstructure(data.draw(consistent_bundles())))
    present = [member for member in REFERENCES if member in bundle]
    session = ValidationSession(strict_json=True)
    assert session.passes(bundle, orjson.dumps(bundle))
    variants = [dict(reversed(list(bundle.items())))]
    variants += [_moved_last(bundle, member) for member in ("run", *present)]
    if present:
        other = data.draw(consistent_bundles())
        member = data.draw(st.sampled_from(present))
        replacement = _through_intake(unstructure(other)).get(member)
        if replacement is not None:
            variants.append({**bundle, member: replacement})
        last = list(bundle)[-1]
        if isinstance(bundle[last], dict):
            nested = copy.deepcopy(bundle)
            tail = {m: copy.deepcopy(bundle[m]) for m in present}
            nested[last] = {**nested[last], "x": tail}  # one level down, at the end
            variants.append(nested)
            swapped = {**copy.deepcopy(nested), present[0]: {"kind": "Other"}}
            variants.append(swapped)
    for variant in variants:
        written = orjson.dumps(variant)
        quick = session.passes(variant, written)
        items = session.check_document(variant)
        assert quick == (len(items) == 1 and not items[0].problems)


def test_a_swapped_record_under_a_remembered_claim_is_not_taken_for_it(
    seed_bundle: dict[str, Any],
) -> None:
    """The run claims the remembered protocol's digest, the bundle holds another valid
    protocol: the memo's hit is not proven by the bytes, the record is checked."""
    session = ValidationSession(strict_json=True)
    assert session.passes(seed_bundle, orjson.dumps(seed_bundle))
    forged = copy.deepcopy(seed_bundle)
    forged["protocol"]["spec"]["harness"]["name"] += " (changed)"
    assert not session.passes(forged, orjson.dumps(forged))
    assert not session.check_document(forged)[0].valid
    for order in (forged, dict(reversed(list(forged.items())))):
        assert not session.passes(order, orjson.dumps(order))
    # In another order the valid bundle still passes (each hit then written and compared).
    assert session.passes(dict(reversed(list(seed_bundle.items()))), None)
    reordered = dict(reversed(list(seed_bundle.items())))
    assert session.passes(reordered, orjson.dumps(reordered))


# ------------------------------------------------ lines read with a shared tail


def _problems_both_ways(lines: list[bytes]) -> tuple[Any, Any]:
    """(items, tally) of ``validate``'s pipeline over ``lines`` as one JSON Lines file,
    read with the tail memo and without it."""
    found = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "bundles.jsonl")
        path.write_bytes(b"".join(lines))
        for memo in (True, False):
            with pytest.MonkeyPatch.context() as patch:
                if not memo:
                    patch.setattr(Pipeline, "_tail_memo", lambda self: None)
                pipeline = Pipeline([str(path)], report="problems", jobs=1)
                found.append((list(pipeline), pipeline.tally, pipeline.late))
    return found[0], found[1]


_OTHER_DIGEST = "sha256:" + "0" * 64


@settings(max_examples=examples(100), deadline=None)
@given(st.data())
def test_lines_with_a_shared_tail_get_the_verdicts_of_whole_lines(data: st.DataObject) -> None:
    """Bundles that share their referenced records, changed anywhere (their runs, the
    runs' references to the shared records, or the shared records themselves, which
    makes a new tail), in any order: ``validate`` finds the same problems with the tail
    memo (ValidationSession.passes_shared) as without it."""
    bundle = _through_intake(unstructure(data.draw(consistent_bundles())))
    if not isinstance(bundle, dict):
        return
    writer = data.draw(
        st.sampled_from([orjson.dumps, lambda v: json.dumps(v).encode()]), label="writer"
    )
    variants = [bundle]
    for _ in range(data.draw(st.integers(1, 4), label="variants")):
        paths = value_paths(bundle)
        path = data.draw(st.sampled_from(paths), label="path")
        new = data.draw(st.one_of(json_values, st.just(_OTHER_DIGEST)), label="new")
        variant = _through_intake(replaced_at(bundle, path, new))
        if isinstance(variant, dict):
            variants.append(variant)
    fields = [field for member, (_, field) in REFERENCES.items() if member in bundle]
    if fields:  # a run whose reference names another record than the shared one
        field = data.draw(st.sampled_from(fields), label="field")
        variants.append(replaced_at(bundle, ("run", "spec", field), _OTHER_DIGEST))
    order = data.draw(st.lists(st.sampled_from(range(len(variants))), max_size=12))
    lines = [writer(variants[i]) + b"\n" for i in [0, 0, *order, *order]]
    with_memo, without = _problems_both_ways(lines)
    assert with_memo == without


def test_a_remembered_tail_does_not_stand_in_for_another_reference(
    seed_bundle: dict[str, Any],
) -> None:
    """Lines sharing the seed bundle's protocol and environment: after the tail is
    remembered, a run that names another protocol, and a run that breaks a rule, are
    still found; the rest pass, the shared records checked once."""
    runs = []
    for n in range(6):
        bundle = copy.deepcopy(seed_bundle)
        bundle["run"]["metadata"]["name"] = f"run-{n}"
        runs.append(bundle)
    runs[3]["run"]["spec"]["protocolDigest"] = _OTHER_DIGEST
    timing = runs[4]["run"]["spec"]["timing"]
    timing[next(k for k in timing if k != "primaryStatistic")] = {"median": 1}  # p20 > median
    lines = [json.dumps(bundle).encode() + b"\n" for bundle in runs]
    with_memo, without = _problems_both_ways(lines)
    assert with_memo == without
    items, tally, _ = with_memo
    assert [item.line for item in items] == [4, 5] and tally.valid == 4
    session = ValidationSession(strict_json=True)
    pipeline = Pipeline([], checker=session, report="problems")
    memo = pipeline._tail_memo()
    assert memo is not None
    tails = []
    for document in jsonl_records(lines, "b.jsonl", 1, False, tails=memo):
        assert isinstance(document, Document)
        if document.shared is not None:
            tails.append(document.shared)
            assert session.passes_shared(document.value, document.shared) == (
                document.line not in (4, 5)
            )
    assert len(tails) == 4 and all(tail is tails[0] for tail in tails)
    assert tails[0].checked[0] is session.quick_pass  # what it found, kept on the tail
    # What a session keeps on a tail is its own: made to claim another protocol, the
    # record is taken at its word by that session only.
    valid = {**runs[0], **tails[0].members}
    tails[0].checked = tails[0].checked._replace(claims=(("protocolDigest", _OTHER_DIGEST),))
    assert not session.passes_shared(valid, tails[0])
    other = ValidationSession(strict_json=True)
    assert other.passes_shared(valid, tails[0]) and tails[0].checked[0] is other.quick_pass


def _run_variants(run: dict[str, Any]) -> list[tuple[str, Any]]:
    """The seed's run changed in each way the short path of passes_shared reads."""
    variants: list[tuple[str, Any]] = [("same", run)]
    for name, change in [
        ("other name", lambda r: r["metadata"].update(name="other")),
        ("other protocol", lambda r: r["spec"].update(protocolDigest=_OTHER_DIGEST)),
        ("no protocol claim", lambda r: r["spec"].pop("protocolDigest")),
        ("other apiVersion", lambda r: r.update(apiVersion="kernelindex.dev/v9")),
        ("other kind", lambda r: r.update(kind="Workload")),
        ("no kind", lambda r: r.pop("kind")),
        ("spec not an object", lambda r: r.update(spec=[])),
        ("in the future", lambda r: r["spec"].update(observedAt="2999-01-01T00:00:00Z")),
        # Valid, but past the shell's quick part (its date-time subset pattern).
        ("a leap day", lambda r: r["spec"].update(observedAt="2024-02-29T00:00:00Z")),
        ("unknown member", lambda r: r.update(extra=1)),
    ]:
        changed = copy.deepcopy(run)
        change(changed)
        variants.append((name, changed))
    variants += [("a list", []), ("a string", "run")]
    return variants


@pytest.mark.parametrize("quick_rules", [True, False], ids=["quick-rules", "check-record"])
def test_the_short_path_of_a_shared_tail_answers_as_passes(
    monkeypatch: pytest.MonkeyPatch, seed_bundle: dict[str, Any], quick_rules: bool
) -> None:
    """A line of a run and a remembered tail is answered by passes_shared without
    passes' routing and member loop: for each way the run may differ from the one the
    tail passed with (its references, apiVersion, kind, spec, rules, schema), and for
    heads of more than the run, the answer is the full check's. With the version's
    quick rules for runs (QUICK_RULES), and without (its check_record answers)."""
    if not quick_rules:
        monkeypatch.setattr(v1alpha1, "QUICK_RULES", {})
    line = orjson.dumps(seed_bundle) + b"\n"
    session = ValidationSession(strict_json=True)
    memo = Pipeline([], checker=session, report="problems")._tail_memo()
    assert memo is not None
    tail = None
    for document in jsonl_records([line] * 3, "b.jsonl", 1, False, tails=memo):
        assert isinstance(document, Document)
        tail = document.shared
    assert tail is not None and tail.checked is None
    # The tail checked and remembered with the first head the memo offers (a value that
    # holds the tail's keys with other objects, even equal ones, is checked in full).
    assert session.passes_shared({**seed_bundle}, tail)
    assert tail.checked is None
    assert session.passes_shared({"run": seed_bundle["run"]}, tail)
    assert tail.checked is not None and tail.checked.owner is session.quick_pass
    run_quick = tail.checked.plan.run_quick
    assert run_quick is (v1alpha1.QUICK_RULES["BenchmarkRun"] if quick_rules else None)
    run = seed_bundle["run"]
    heads: list[tuple[str, dict[str, Any]]] = [(n, {"run": r}) for n, r in _run_variants(run)]
    heads += [
        ("a workload too", {"run": run, "workload": seed_bundle.get("protocol")}),
        ("a kind too", {"run": run, "kind": "BenchmarkRun"}),
        ("no run", {"runs": run}),
    ]
    for name, head in heads:
        value = {**head, **tail.members}
        expected = not [
            item for item in session.check_document(value, source="b.jsonl") if item.problems
        ]
        assert session.passes_shared(value, tail) is expected, name
        assert session.passes(value, None, tail) is expected, name
        # The head alone, as a memo's take is given it: the same answer.
        assert session.passes_shared(copy.deepcopy(head), tail) is expected, name
    assert tail.checked.owner is session.quick_pass  # a failed line left the verdict as it was


@pytest.mark.parametrize("kind", [[], {}, ["Workload"]])
def test_a_remembered_claim_beside_a_member_whose_kind_is_no_string(
    seed_bundle: dict[str, Any], kind: Any
) -> None:
    """A member the memo's hit took on trust (its run claims a digest remembered from an
    earlier line) is not schema-checked before the rules look at its kind: a kind that
    cannot be hashed is a problem to report, not a TypeError."""
    broken = copy.deepcopy(seed_bundle)
    broken["protocol"]["kind"] = kind
    session = ValidationSession(strict_json=True)
    for writer in (None, orjson.dumps):
        assert session.passes(seed_bundle)
        assert session.passes(broken, writer(broken) if writer else None) is False
    lines = [orjson.dumps(seed_bundle) + b"\n", orjson.dumps(broken) + b"\n"]
    (items, tally, _), without = _problems_both_ways(lines)
    assert (items, tally) == without[:2]
    assert [item.line for item in items] == [2] and tally.valid == 1


def test_a_document_the_memo_take_takes_is_not_yielded_and_one_it_refuses_is_not_asked_again(
    seed_bundle: dict[str, Any],
) -> None:
    """jsonl_records offers each document the memo reads to ``take``: one taken is
    gone, one refused comes out ``offered`` (the pipeline's quick pass is not asked
    again), and a line the memo cannot read is never offered."""
    good = json.dumps(seed_bundle).encode() + b"\n"
    bad = seed_bundle | {"run": {**seed_bundle["run"], "kind": "Nothing"}}
    lines = [good, good, json.dumps(bad).encode() + b"\n", good, b'{"a": 1, "a": 2}\n', good]
    memo = Pipeline([], report="problems")._tail_memo()
    assert memo is not None
    offered: list[Any] = []

    def take(value: Any, written: Any, shared: Any) -> bool:
        offered.append((value, written, shared))
        # A line read with a tail is offered by its head alone, and not written.
        assert shared is None or (list(value) == ["run"] and written is None)
        return bool(value["run"]["kind"] == "BenchmarkRun")

    first, second = jsonl_records(lines, "b.jsonl", 1, False, tails=memo, take=take)
    assert isinstance(first, Document) and (first.line, first.offered) == (3, True)
    assert first.shared is not None and first.value.keys() == seed_bundle.keys()  # whole
    assert isinstance(second, IntakeError) and second.problem.line == 5
    assert len(offered) == 5  # every line but the duplicate key's
    assert [shared is not None for _, _, shared in offered] == [False, False, True, True, True]
    session = ValidationSession(strict_json=True)
    asked = []
    original, original_shared = session.passes, session.passes_shared

    def passes(value: Any, written: Any = None, shared: Any = None) -> bool:
        asked.append(value)
        return original(value, written, shared)

    def passes_shared(value: Any, shared: Any) -> bool:
        asked.append(value)
        return original_shared(value, shared)

    session.passes = passes  # type: ignore[method-assign]
    session.passes_shared = passes_shared  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "b.jsonl")
        path.write_bytes(b"".join(lines))
        run = Pipeline([str(path)], checker=session, report="problems", jobs=1)
        items = list(run)
    assert [item.line for item in items] == [3, 5] and run.tally.valid == 4
    assert len([value for value in asked if value["run"]["kind"] == "Nothing"]) == 1


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_ranges_whose_every_line_is_taken_are_not_empty(
    monkeypatch: pytest.MonkeyPatch, seed_bundle: dict[str, Any], jobs: int
) -> None:
    """A large JSON Lines file read in ranges by workers, every line of a range taken
    by the memo's ``take`` (none yielded): the ranges still held documents, so the
    file is not "empty", and each worker's count reaches the tally."""
    from kernelindex_sdk.validating import pipeline as pipeline_module

    monkeypatch.setattr(pipeline_module, "CHUNK_BYTES", 4096)
    lines = []
    for n in range(60):
        bundle = copy.deepcopy(seed_bundle)
        bundle["run"]["metadata"]["name"] = f"run-{n}"
        lines.append(json.dumps(bundle).encode() + b"\n")
    lines.insert(30, b"\n")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "b.jsonl")
        path.write_bytes(b"".join(lines))
        run = Pipeline([str(path)], report="problems", jobs=jobs)
        items = list(run)
        assert run.jobs_used == jobs
    assert items == [] and run.tally.valid == 60 and run.tally.exit_status() == 0


def test_standard_input_is_read_with_the_tail_memo_too(seed_bundle: dict[str, Any]) -> None:
    """``validate -``: piped bundles that share a tail are read with the memo (their
    tail's members checked once), with the same problems as a file read without it."""
    lines = []
    for n in range(5):
        bundle = copy.deepcopy(seed_bundle)
        bundle["run"]["metadata"]["name"] = f"run-{n}"
        if n == 3:
            bundle["run"]["spec"]["environmentDigest"] = _OTHER_DIGEST
        lines.append(json.dumps(bundle).encode() + b"\n")
    session = ValidationSession(strict_json=True)
    calls = []
    original = session.passes_shared

    def passes_shared(value: Any, shared: Any) -> bool:
        calls.append(shared)
        return original(value, shared)

    session.passes_shared = passes_shared  # type: ignore[method-assign]
    piped = Pipeline(["-"], checker=session, report="problems", stdin=io.BytesIO(b"".join(lines)))
    items = list(piped)
    (expected, tally, _), _ = _problems_both_ways(lines)

    def said(found: list[Item]) -> list[Any]:
        return [(i.line, [(p.message, p.pointer) for p in i.problems]) for i in found]

    assert said(items) == said(expected) and len(items) == 1
    assert piped.tally.valid == tally.valid == 4
    # Line 1 is sniffed (read on its own), line 2 brings the tail, line 3 brings it again
    # (remembered), lines 4 and 5 are read with it.
    assert len(calls) == 2 and calls[0] is calls[1]
