"""The law of ``validate``'s fast path: its verdict on every line is the full path's.

``validate`` without ``-v`` answers most JSON Lines lines from a quick pass
(``ValidationSession.passes``) and reads lines that end as an earlier one ended only up
to that end (the tail memo, ``ValidationSession.passes_shared``); ``-v`` reports every
item, and so checks every document in full, with neither. Whatever a stream holds — the
members of its bundles in any order, any member broken in its schema or in its digest,
runs whose references name something else, tails shared and not, any writer's spacing
and escaping — both must find the same problems on the same lines and count the same.

Records one per line (what the importers write with ``--layout jsonl``: no bundle,
no tail) are held to the same law: each line's quick pass against its full check.

Drawn here in one process (``Pipeline`` with ``report="problems"`` against
``report="all"``, on one core and on two with the file cut into ranges) and through the
command line (``validate`` against ``validate -v``, ``--jobs 1`` and ``--jobs 2``).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import seed_paths
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from profiles import examples
from strategies import mutate_somewhere, replaced_at, value_paths

from kernelindex_sdk.checks.v1alpha1 import REFERENCES
from kernelindex_sdk.models import unstructure
from kernelindex_sdk.models.strategies import consistent_bundles, json_values
from kernelindex_sdk.reading.intake import loads
from kernelindex_sdk.reading.sharedtails import TailMemo
from kernelindex_sdk.validating import pipeline as pipeline_module
from kernelindex_sdk.validating.pipeline import Pipeline
from kernelindex_sdk.validating.validation import ValidationSession

_OTHER_DIGEST = "sha256:" + "0" * 64


def _spaced(value: Any, separators: tuple[str, str], ascii_only: bool) -> bytes:
    return json.dumps(value, separators=separators, ensure_ascii=ascii_only).encode()


#: JSON Lines writers: orjson, the stdlib's spellings, and escapes a writer may choose.
WRITERS: dict[str, Callable[[Any], bytes]] = {
    "orjson": orjson.dumps,
    "json.dumps": lambda v: json.dumps(v).encode(),
    "compact-utf8": lambda v: _spaced(v, (",", ":"), False),
    "compact-ascii": lambda v: _spaced(v, (",", ":"), True),
    "spaced-utf8": lambda v: _spaced(v, (", ", ": "), False),
    "space-before-colon": lambda v: _spaced(v, (" , ", " : "), True),
    "escaped-slashes": lambda v: json.dumps(v).replace("/", "\\/").encode(),
    "tabs": lambda v: _spaced(v, (",\t", ":\t"), False),
}


def _strict(value: Any) -> Any:
    """``value`` as strict intake reads it back (None where intake refuses it)."""
    try:
        return loads(orjson.dumps(value))
    except Exception:  # an integer intake refuses, a value orjson refuses
        return None


@st.composite
def _variant(draw: st.DrawFn, bundle: dict[str, Any], index: int) -> Any:
    """A line's bundle: the base itself, its run retitled, or one part broken."""
    members = [m for m in bundle if m != "run" and isinstance(bundle[m], dict)]
    how = draw(
        st.sampled_from(
            ["same", "retitled", "schema", "digest", "reference", "anything", "not-an-object"]
        ),
        label="how",
    )
    if how == "same":
        return bundle
    if how == "retitled":  # a new run before the same tail: the memo's common case
        metadata = {**bundle["run"]["metadata"], "title": f"run {index}"}
        return replaced_at(bundle, ("run", "metadata"), metadata)
    if how == "reference":
        fields = [field for member, (_, field) in REFERENCES.items() if member in bundle]
        if fields:
            field = draw(st.sampled_from(fields), label="field")
            return replaced_at(bundle, ("run", "spec", field), _OTHER_DIGEST)
        return bundle
    member = draw(st.sampled_from(members or ["run"]), label="member")
    if how == "not-an-object":
        return replaced_at(bundle, (member,), draw(st.sampled_from([1, "x", [], None, {}])))
    if how == "digest" and isinstance(bundle[member].get("spec"), dict):
        seed = draw(st.integers(0, 2**32 - 1), label="seed")
        spec = mutate_somewhere(bundle[member]["spec"], random.Random(seed))
        return replaced_at(bundle, (member, "spec"), spec)
    paths = [p for p in value_paths(bundle[member]) if p]
    if not paths:
        return bundle
    path = draw(st.sampled_from(paths), label="path")
    return replaced_at(bundle, (member, *path), draw(json_values, label="new"))


def _reordered(bundle: Any, order: list[str]) -> Any:
    if not isinstance(bundle, dict):
        return bundle
    keys = [k for k in order if k in bundle] + [k for k in bundle if k not in order]
    return {k: bundle[k] for k in keys}


@st.composite
def streams(draw: st.DrawFn) -> list[bytes]:
    """The lines of a JSON Lines file of bundles that mostly share their records."""
    base = _strict(unstructure(draw(consistent_bundles(), label="bundle")))
    if not isinstance(base, dict) or len(base) < 2:
        base = json.loads(seed_paths()[0].read_text())
    members = list(base)
    usual = draw(st.permutations(members), label="usual order")
    writer = WRITERS[draw(st.sampled_from(sorted(WRITERS)), label="writer")]
    variants = [base]
    for index in range(draw(st.integers(1, 5), label="variants")):
        variant = _strict(draw(_variant(base, index), label="variant"))
        if variant is not None:
            variants.append(variant)
    lines = [writer(_reordered(base, usual)) + b"\n"] * 2
    for _ in range(draw(st.integers(1, 14), label="lines")):
        variant = variants[draw(st.integers(0, len(variants) - 1))]
        order = usual if draw(st.booleans()) else draw(st.permutations(members))
        line = writer(_reordered(variant, order)) + b"\n"
        lines += [line] * draw(st.integers(1, 3), label="repeats")
    return lines


def _out_of_order(run: Any) -> Any:
    """``run`` with a p80 below every other figure: refused by the rules alone."""
    spec = run.get("spec") if isinstance(run, dict) else None
    if not isinstance(spec, dict) or not isinstance(spec.get("timing"), dict):
        return run
    low = {"metric": "latency", "unit": "ns", "statistic": "p80", "value": 0}
    return {**run, "spec": {**spec, "measurements": [low]}}


@st.composite
def record_streams(draw: st.DrawFn) -> list[bytes]:
    """The lines of a JSON Lines file of records one per line, as the importers write
    them (``import … --layout jsonl``): every kind of a bundle's records, each on its
    own line, runs referencing the others by digest; some broken in their schema,
    their rules or their digests' claims, some pointing at records of other lines or
    at none, lines repeated and in any order, by any writer."""
    base = _strict(unstructure(draw(consistent_bundles(), label="bundle")))
    if not isinstance(base, dict) or "run" not in base:
        base = json.loads(seed_paths()[0].read_text())
    writer = WRITERS[draw(st.sampled_from(sorted(WRITERS)), label="writer")]
    records = [record for record in base.values() if isinstance(record, dict)]
    for index in range(draw(st.integers(0, 4), label="variants")):
        variant = draw(_variant(base, index), label="variant")
        member = draw(st.sampled_from(sorted(base)), label="member")
        picked = variant.get(member) if isinstance(variant, dict) else None
        if draw(st.booleans(), label="out of order") and member == "run":
            picked = _out_of_order(picked)
        picked = _strict(picked)
        if picked is not None:
            records.append(picked)
    lines = [writer(record) + b"\n" for record in records]
    lines += [lines[0]] * draw(st.integers(0, 3), label="repeats")
    return draw(st.permutations(lines), label="order")


def _seen(path: Path, report: str, jobs: int) -> tuple[list[Any], Any, Any]:
    """What ``validate``'s pipeline reports for ``path``: its items with problems (each
    whole), its tally and its late problems."""
    run = Pipeline([str(path)], report=report, jobs=jobs)
    items = [item for item in run if item.problems]
    return items, run.tally, run.late


_LAW = settings(
    max_examples=examples(300),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _seed_stream(order: list[str]) -> list[bytes]:
    """The seed bundle in ``order``, with lines broken in an embedded member: the
    stream the quick pass once passed whole."""
    bundle = json.loads(seed_paths()[0].read_text())
    good = _reordered(bundle, order)
    not_object = {**good, "environment": 1}
    edited = json.loads(json.dumps(good))
    edited["environment"]["spec"]["hardware"]["product"] = "X"
    return [json.dumps(v).encode() + b"\n" for v in (good, good, good, not_object, edited)]


@pytest.mark.parametrize(
    "order",
    [
        ["run", "protocol", "environment"],
        ["run", "environment", "protocol"],
        ["environment", "run", "protocol"],
        ["protocol", "environment", "run"],
    ],
)
def test_an_embedded_member_before_a_shared_tail_is_checked(
    tmp_path: Path, order: list[str]
) -> None:
    """A head holding more than the run (a member written before the remembered tail)
    has that member checked: its schema and its digest against the run's reference."""
    path = tmp_path / "bundles.jsonl"
    path.write_bytes(b"".join(_seed_stream(order)))
    fast, full = _seen(path, "problems", 1), _seen(path, "all", 1)
    assert fast == full
    assert [item.line for item in fast[0]] == [4, 5]
    assert fast[1].invalid == 2


@_LAW
@given(streams())
def test_the_fast_path_finds_what_the_full_path_finds(tmp_path_factory: Any, lines: Any) -> None:
    path = tmp_path_factory.mktemp("law") / "bundles.jsonl"
    path.write_bytes(b"".join(lines))
    assert _seen(path, "problems", 1) == _seen(path, "all", 1)


@settings(_LAW, max_examples=examples(40))
@given(streams())
def test_in_ranges_on_two_cores_too(tmp_path_factory: Any, lines: Any) -> None:
    """Cut into ranges, each read by a worker with a memo of its own."""
    path = tmp_path_factory.mktemp("law") / "bundles.jsonl"
    path.write_bytes(b"".join(lines))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pipeline_module, "CHUNK_BYTES", max(256, len(lines[0])))
        fast = _seen(path, "problems", 2)
    assert fast == _seen(path, "all", 1)


@settings(_LAW, max_examples=examples(100))
@given(record_streams())
def test_records_one_per_line_the_fast_path_finds_what_the_full_path_finds(
    tmp_path_factory: Any, lines: Any
) -> None:
    """Records one per line (no bundle, no tail to share): each line's quick pass (its
    schema's quick check, its kind's quick rules) against the full check."""
    path = tmp_path_factory.mktemp("law") / "records.jsonl"
    path.write_bytes(b"".join(lines))
    assert _seen(path, "problems", 1) == _seen(path, "all", 1)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pipeline_module, "CHUNK_BYTES", max(256, len(lines[0])))
        assert _seen(path, "problems", 2) == _seen(path, "all", 1)


# ------------------------------------------------------------------ the command line


#: The installed command, as a user runs it (its entry point, kernelindex_console).
_KERNELINDEX = (sys.executable, "-c", "import kernelindex_console; kernelindex_console.main()")


def _cli(path: Path, *options: str) -> tuple[int, list[Any], dict[str, Any]]:
    done = subprocess.run(
        [*_KERNELINDEX, "validate", str(path), "--format", "json", *options],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr.decode(errors="replace")
    report = json.loads(done.stdout)
    counts = {k: report[k] for k in ("valid", "invalid", "unreadable", "files", "ok")}
    return done.returncode, report["problems"], counts


#: Lines of the file's first bundle before the drawn ones: past two chunks, so that
#: ``--jobs 2`` cuts the file into ranges.
_PAD_BYTES = 2 * pipeline_module.CHUNK_BYTES + 4096


@settings(_LAW, max_examples=examples(30))
@given(streams())
@example(_seed_stream(["run", "environment", "protocol"]))
def test_through_the_command_line_with_one_and_two_jobs(
    tmp_path_factory: Any, lines: list[bytes]
) -> None:
    path = tmp_path_factory.mktemp("cli") / "bundles.jsonl"
    padding = lines[:1] * (_PAD_BYTES // len(lines[0]) + 1)
    path.write_bytes(b"".join(lines[: len(lines) // 2] + padding + lines[len(lines) // 2 :]))
    full = _cli(path, "-v")
    assert _cli(path, "--jobs", "1") == full
    assert _cli(path, "--jobs", "2") == full


@settings(_LAW, max_examples=examples(30))
@given(record_streams())
def test_records_one_per_line_through_the_command_line(
    tmp_path_factory: Any, lines: list[bytes]
) -> None:
    path = tmp_path_factory.mktemp("cli") / "records.jsonl"
    padding = lines[:1] * (_PAD_BYTES // len(lines[0]) + 1)
    path.write_bytes(b"".join(lines[: len(lines) // 2] + padding + lines[len(lines) // 2 :]))
    full = _cli(path, "-v")
    assert _cli(path, "--jobs", "1") == full
    assert _cli(path, "--jobs", "2") == full


def test_only_the_tails_very_members_are_skipped() -> None:
    """``passes_shared`` given a value that holds a tail's keys with other objects (a
    caller's, not the memo's) checks those members: it skips only the remembered ones."""
    bundle = json.loads(seed_paths()[0].read_text())
    session = ValidationSession(strict_json=True)
    memo = TailMemo(session.shared_tail_keys)
    line = orjson.dumps(bundle)
    tail = None
    for _ in range(3):
        read = memo.read(line, None)
        tail = read[2] if isinstance(read, tuple) else None
    assert tail is not None, "the memo remembers a tail seen twice"
    assert session.passes_shared({"run": bundle["run"]}, tail)  # remembered as passed
    assert tail.checked is not None
    for member in tail.keys:
        forged = {"run": bundle["run"], **tail.members, member: 1}
        assert not session.passes_shared(dict(forged), tail)
        assert not session.check_document(forged)[0].valid
        head_with_member = {"run": bundle["run"], member: 1}
        assert not session.passes_shared(head_with_member, tail)
