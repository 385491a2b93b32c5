"""``schema diff`` held against real schema histories: decided, never wrong, how fast.

    python benchmarks/bench_schema_diff_real.py [--set dev|held-out|both] [--only NAME,...]
        [--skip NAME,...] [--examples N] [--draw-seconds S] [--timeout S] [--reasons] [--source DIR]
        [--counterexamples FILE]

The pairs are consecutive versions of the SchemaStore schemas in
``tests/fixtures/schemastore/`` (see its README: where each came from, and how they are
split into a **development** set, used to find what to fix, and a **held-out** set,
only measured). Each pair runs in a fresh process, in both directions (OLD→NEW and
NEW→OLD) under both policies (``strict``, ``lenient``), each run one ``schema diff
--mode backward --format-assertion``; a ``--mode full`` verdict is what the two
directions give together (a violation either way, else compatible both ways, else
undecided), so it is reported too. For each set it prints:

* **decided**: runs whose exit status is not 3 (undecided); **usage errors**: exit 2
  (a side cannot be read), each said once with its message;
* **wrong witnesses**: a violation's witness that python-jsonschema (each side's own
  dialect, formats asserted, nothing fetched: a witness whose verdict reaches a ``$ref``
  into another document — an external schema, which the diff assumes unchanged and
  never reads — counts as wrong) — and ajv, when ``benchmarks/node_modules`` has it
  (``benchmarks/setup_peers.sh``; a Draft 6/7 schema given to it with the keywords beside
  ``$ref`` left out, as those drafts read it and ajv 8 does not) — does not judge as
  claimed: accepted by the side the violation names, rejected by the other;
* **false compatible**: for a ``strict`` run called compatible (``lenient`` lets an
  optional member be added to or removed from a closed object, so it has such
  counterexamples by design), ``--examples`` instances of OLD drawn by
  hypothesis-jsonschema in at most ``--draw-seconds`` (those OLD's validator accepts)
  that NEW rejects, each external schema replaced by ``true`` on both sides
  (:func:`without_externals`: one schema it may be; nothing is fetched); runs whose OLD
  hypothesis-jsonschema cannot draw from (or not in time) are counted as unchecked.
  Each counterexample is judged again outside hypothesis (``judge_counterexample``):
  only a ``confirmed`` one counts as a false compatible; the others are listed for what
  they are (an artefact of the probe, or python-jsonschema and ajv disagreeing). Every
  one, with its pair, direction, policy and verdict, is saved to ``--counterexamples``
  (JSON lines; default ``benchmarks/results/schema-diff-counterexamples.jsonl``), so
  none stays unexplained;
* **time**: CPU seconds (user+sys) of each ``diff`` call alone, median and max per
  run, and the largest schema's against its size (nothing quadratic).

``--reasons`` groups the undecided claims by reason (numbers and quoted values
replaced by ``…``), most frequent first: what to fix next. Use it on the dev set.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import hashlib
import itertools
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "schemastore"
AJV = ROOT / "benchmarks" / "node_modules" / ".bin" / "ajv"
POLICIES = ("strict", "lenient")


def held_out(name: str) -> bool:
    """The split: a schema's whole history is held out when SHA-256 of its name ≡ 2 (mod 3)."""
    return int(hashlib.sha256(name.encode()).hexdigest(), 16) % 3 == 2


def histories() -> dict[str, list[dict[str, Any]]]:
    manifest = json.loads((FIXTURES / "provenance.json").read_text(encoding="utf-8"))
    schemas: dict[str, list[dict[str, Any]]] = manifest["schemas"]
    return schemas


def pairs(which: str) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(schema, older version, newer version) of the set ``which``, in a fixed order."""
    out = []
    for name, history in histories().items():
        if which == "both" or (which == "held-out") == held_out(name):
            out += [(name, a, b) for a, b in itertools.pairwise(history)]
    return out


# One child per pair: four diffs, one JSON line each, flushed, so a timeout keeps the rest.
_CHILD = r"""
import json, sys, time
from kernelindex_sdk.schemadiff import SchemaInputError, diff
old, new = sys.argv[1], sys.argv[2]
for a, b, direction in ((old, new, "old->new"), (new, old, "new->old")):
    for policy in ("strict", "lenient"):
        start = time.process_time()
        try:
            # Formats asserted, as the judges below assert them (--format-assertion).
            report = diff(a, b, mode="backward", policy=policy, format_assertion=True)
        except SchemaInputError as error:
            row = {"exit": 2, "error": str(error)}
        else:
            row = {
                "exit": report.exit_status(),
                "violations": [[v.rule, v.accepted_by, v.witness] for v in report.violations],
                "undecided": [u.reason for u in report.undecided],
            }
        row.update(cpu=time.process_time() - start, direction=direction, policy=policy)
        print(json.dumps(row), flush=True)
"""


def run_pair(source: Path, old: Path, new: Path, timeout: float) -> list[dict[str, Any]]:
    paths = [str(source), *(p for p in sys.path if p.endswith("site-packages"))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    with subprocess.Popen(
        [sys.executable, "-S", "-c", _CHILD, str(old), str(new)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=old.parent,
    ) as child:
        try:
            out, err = child.communicate(timeout=4 * timeout)  # four runs
        except subprocess.TimeoutExpired:
            child.kill()
            out, err = child.communicate()
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    if child.returncode not in (0, -9):
        tail = (err.strip().splitlines() or ["?"])[-1]
        rows.append({"exit": "crash", "error": tail, "cpu": 0.0})
    while len(rows) < 4:
        rows.append({"exit": "timeout", "cpu": timeout})
    return rows


def _validator(schema: Any) -> Any:
    """python-jsonschema's validator of the schema's own dialect, formats asserted, that
    fetches nothing: a ``$ref`` into another document (an external schema, which the diff
    never reads) raises ``referencing.exceptions.Unresolvable`` where it is reached, so a
    witness that reaches one is judged wrong (:func:`_judged`), never judged by content
    fetched from the network."""
    from jsonschema import Draft202012Validator
    from jsonschema.validators import validator_for
    from referencing import Registry

    cls = validator_for(schema, default=Draft202012Validator)
    return cls(schema, format_checker=cls.FORMAT_CHECKER, registry=Registry())


def _judged(judge: Any, value: Any) -> bool | None:
    """Whether ``judge`` accepts ``value``; None when judging it reaches an external
    schema (a verdict that depends on what is not given)."""
    from referencing.exceptions import Unresolvable

    try:
        return bool(judge.is_valid(value))
    except Unresolvable:
        return None


def external_refs(schema: Any) -> set[str]:
    """The ``$ref``s of ``schema`` into another document (resolved against its ``$id``;
    the diff takes each to be an external schema, the same on both sides)."""
    base = schema.get("$id") or schema.get("id") or "file:///schema.json"
    found: set[str] = set()

    def visit(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                visit(item)
        elif isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and urldefrag(urljoin(base, ref))[0] != urldefrag(base)[0]:
                found.add(ref)
            for value in node.values():
                visit(value)

    visit(schema)
    return found


def without_externals(schema: Any) -> Any:
    """``schema`` with each external schema (:func:`external_refs`) replaced by ``true``:
    one schema it may be, the same on both sides, which a compatible verdict must hold
    for as for any other. The counterexample probe draws from this (hypothesis-jsonschema
    refuses a remote ``$ref``; nothing is fetched). Before 2019-09 a ``$ref``'s siblings
    are ignored, so they go with it (but ``definitions``, which a pointer may lead into)."""
    refs = external_refs(schema)
    if not refs:
        return schema
    alone = any(f"draft-0{n}" in str(schema.get("$schema", "")) for n in (4, 6, 7))

    def rewrite(node: Any) -> Any:
        if isinstance(node, list):
            return [rewrite(item) for item in node]
        if not isinstance(node, dict):
            return node
        if node.get("$ref") in refs:
            kept = ("definitions",) if alone else tuple(k for k in node if k != "$ref")
            node = {k: v for k, v in node.items() if k in kept}
        return {k: rewrite(v) for k, v in node.items()}

    return rewrite(schema)


_AJV_JUDGE = r"""
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
const dialect = String(input.schema.$schema || "");
const Ajv = dialect.includes("2020-12") ? require("ajv/dist/2020")
  : dialect.includes("2019-09") ? require("ajv/dist/2019") : require("ajv");
const ajv = new (Ajv.default || Ajv)({strict: false, validateSchema: false});
require("ajv-formats")(ajv);
const draft6 = "ajv/dist/refs/json-schema-draft-06.json";
if (dialect.includes("draft-06")) ajv.addMetaSchema(require(draft6));
let verdicts = null;
try { const v = ajv.compile(input.schema); verdicts = input.witnesses.map((w) => !!v(w)); }
catch (e) {}
console.log(JSON.stringify(verdicts));
"""


def _ref_alone(schema: Any) -> Any:
    """A Draft 6/7 schema as those drafts read it: keywords beside ``$ref`` ignored
    (``definitions`` kept: a pointer may lead through them). ajv 8 applies them, so
    without this it judges such a schema otherwise than the spec and python-jsonschema."""
    if isinstance(schema, list):
        return [_ref_alone(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    if isinstance(schema.get("$ref"), str):
        return {k: _ref_alone(v) for k, v in schema.items() if k in ("$ref", "definitions")}
    return {k: _ref_alone(v) for k, v in schema.items()}


def _ajv_judges(schema: Any, witnesses: list[Any]) -> list[bool] | None:
    """ajv's verdict on each witness (None: no ajv, a Draft 4 schema ajv 8 does not
    read, or a schema ajv cannot compile — a pattern JavaScript refuses, say)."""
    dialect = str(schema.get("$schema", ""))
    if not AJV.exists() or not witnesses or "draft-04" in dialect:
        return None
    draft_6_7 = "draft-06" in dialect or "draft-07" in dialect
    done = subprocess.run(
        ["node", "-e", _AJV_JUDGE],
        input=json.dumps(
            {"schema": _ref_alone(schema) if draft_6_7 else schema, "witnesses": witnesses}
        ),
        capture_output=True,
        text=True,
        env={**os.environ, "NODE_PATH": str(AJV.parent.parent)},
        check=False,
    )
    verdicts: list[bool] | None = json.loads(done.stdout) if done.returncode == 0 else None
    return verdicts


class _OutOfTime(BaseException):
    """Raised by SIGALRM through hypothesis (which catches Exceptions, not this)."""


class _Clock:
    """The drawing deadline. The alarm raises only while hypothesis draws, never while a
    validator judges: an exception raised in the middle of a verdict, then replayed and
    shrunk by hypothesis, must not be able to leave a half-judged value behind."""

    judging = False
    expired = False
    late = 0  # alarms (one a second) while a verdict ran past the deadline


def _out_of_time(signum: int, frame: Any) -> None:
    _Clock.expired = True
    _Clock.late += _Clock.judging
    # A verdict 30 s late (a pattern that backtracks without end) is given up: raised
    # through, its value is never recorded.
    if not _Clock.judging or _Clock.late > 30:
        raise _OutOfTime


def false_compatible(
    old: Any, new: Any, examples: int, seconds: int
) -> tuple[int, list[Any]] | str:
    """(instances of OLD tried, those NEW rejects), or why none could be drawn.
    Drawing stops after ``seconds`` (hypothesis-jsonschema is slow on large schemas);
    what was drawn by then counts. Hypothesis runs only its generate phase: a value is
    judged once, never replayed or shrunk, so every counterexample is one drawn value."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis_jsonschema import from_schema

    judge_old, judge_new = _validator(old), _validator(new)
    # A copy: from_schema rewrites the schema it is given in place ($ref inlined, its own
    # canonical form), which changed what python-jsonschema judged by that dict in later
    # probes and witness checks of the same pair (travis 04->05's counterexample).
    drawn = from_schema(copy.deepcopy(old))
    tried: list[Any] = []
    bad: list[Any] = []

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(drawn)
    def probe(value: Any) -> None:
        if _Clock.expired:
            raise _OutOfTime
        _Clock.judging = True
        try:
            accepted, refused = judge_old.is_valid(value), not judge_new.is_valid(value)
        finally:
            _Clock.judging = False
        if accepted:
            tried.append(value)
            if refused:
                bad.append(value)
        if _Clock.expired:
            raise _OutOfTime

    previous = signal.signal(signal.SIGALRM, _out_of_time)
    _Clock.judging = _Clock.expired = False
    _Clock.late = 0
    # Again every second after: an alarm raised inside a gc callback is swallowed there.
    signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)
    try:
        probe()
    except _OutOfTime:
        pass
    except Exception as error:  # a schema hypothesis-jsonschema cannot draw from
        if not tried:
            return f"{type(error).__name__}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return (len(tried), bad) if tried else "nothing drawn in time"


def judge_counterexample(accepting: Any, rejecting: Any, value: Any) -> str:
    """What a value the probe found (ACCEPTING takes it, REJECTING refuses it) is, judged
    again outside hypothesis and the alarm, by fresh validators and by ajv:

    * ``artefact: sides equal`` — the two schemas are the same JSON value (keys in another
      order, say), so no value can tell them apart: the probe, not the comparer, erred;
    * ``artefact: not reproduced`` — fresh python-jsonschema validators do not judge it so;
    * ``validators disagree: ajv …`` — python-jsonschema does, ajv does not (a ``format``
      or ``pattern`` read otherwise, say): a fact about validators, not a compatibility;
    * ``confirmed`` — a false compatible."""
    # Compared as JSON text, keys sorted: Python's == takes true for 1 and 1 for 1.0.
    if json.dumps(accepting, sort_keys=True) == json.dumps(rejecting, sort_keys=True):
        return "artefact: sides equal"
    if not (_validator(accepting).is_valid(value) and not _validator(rejecting).is_valid(value)):
        return "artefact: not reproduced"
    takes, refuses = _ajv_judges(accepting, [value]), _ajv_judges(rejecting, [value])
    if takes == [False] or refuses == [True]:
        return f"validators disagree: ajv {'refuses on' if takes == [False] else 'takes on'}"
    return "confirmed"


def save_counterexamples(path: Path, found: list[dict[str, Any]]) -> None:
    """Every counterexample, one JSON object a line (temp file + rename: never half-written)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(path.name + ".tmp")
    temp.write_text("".join(json.dumps(row) + "\n" for row in found), encoding="utf-8")
    temp.replace(path)


_NOISE = re.compile(r"'[^']*'|\"[^\"]*\"|/[^\s,:;)]*|-?\d+(\.\d+)?")


def reason_group(reason: str) -> str:
    return _NOISE.sub("…", reason)[:140]


def evaluate(which: str, args: argparse.Namespace, tmp: Path) -> None:
    chosen = [
        p
        for p in pairs(which)
        if (not args.only or p[0] in args.only.split(",")) and p[0] not in args.skip.split(",")
    ]
    runs: list[dict[str, Any]] = []
    fulls: list[str] = []
    wrong: list[str] = []
    checked_witnesses = ajv_checked = 0
    compat_checked = compat_unchecked = instances = 0
    counterexamples: list[str] = []
    unconfirmed: list[str] = []
    errors: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    sizes: list[tuple[int, float]] = []
    for name, a, b in chosen:
        files = {}
        for side, entry in (("old", a), ("new", b)):
            folder = tmp / which / name / entry["file"].split("/")[1].split(".")[0]
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"{name}.schema.json"
            path.write_bytes(gzip.decompress((FIXTURES / entry["file"]).read_bytes()))
            files[side] = path
        schemas = {k: json.loads(p.read_text(encoding="utf-8")) for k, p in files.items()}
        judges = {k: _validator(s) for k, s in schemas.items()}
        # What the counterexample probe draws from and judges by: each external schema
        # replaced by one schema it may be (true), the same on both sides.
        probed = {k: without_externals(s) for k, s in schemas.items()}
        rows = run_pair(args.source, files["old"], files["new"], args.timeout)
        label = f"{name} {a['file'].split('/')[1][:2]}->{b['file'].split('/')[1][:2]}"
        by_direction: dict[str, list[Any]] = {}
        for row in rows:
            row["pair"] = label
            runs.append(row)
            if row["exit"] in (2, "crash"):
                errors[f"{row['exit']}: {row.get('error', '')[:160]}"] += 1
            for reason in row.get("undecided", ()):
                reasons[reason_group(reason)] += 1
            if row.get("policy") == "strict" or row["exit"] == "timeout":
                by_direction.setdefault(row.get("direction", "?"), []).append(row["exit"])
            accepting, rejecting = (
                ("old", "new") if row.get("direction") == "old->new" else ("new", "old")
            )
            witnessed = row.get("violations", [])
            for rule, accepted_by, witness in witnessed:
                # accepted_by is relative to the run's own OLD/NEW, i.e. (accepting, rejecting)
                yes = accepting if accepted_by == "old" else rejecting
                no = rejecting if yes == accepting else accepting
                checked_witnesses += 1
                verdicts = (_judged(judges[yes], witness), _judged(judges[no], witness))
                if None in verdicts:
                    wrong.append(f"{label} {row['direction']} {rule}: reaches an external $ref")
                elif verdicts != (True, False):
                    wrong.append(f"{label} {row['direction']} {rule}: python-jsonschema")
            for side in ("old", "new") if witnessed else ():
                claims = [
                    (accepting if acc == "old" else rejecting) == side for _, acc, _ in witnessed
                ]
                verdicts = _ajv_judges(schemas[side], [w for _, _, w in witnessed])
                if verdicts is None:
                    continue
                ajv_checked += len(verdicts)
                for (rule, _, _), claim, got in zip(witnessed, claims, verdicts, strict=True):
                    if claim != got:
                        wrong.append(f"{label} {row['direction']} {rule}: ajv on {side}")
            # Strict only: lenient lets an optional member leave a closed object, by design.
            if row["exit"] == 0 and row["policy"] == "strict" and args.examples:
                outcome = false_compatible(
                    probed[accepting], probed[rejecting], args.examples, args.draw_seconds
                )
                if isinstance(outcome, str):
                    compat_unchecked += 1
                else:
                    compat_checked += 1
                    instances += outcome[0]
                    for value in outcome[1]:
                        verdict = judge_counterexample(probed[accepting], probed[rejecting], value)
                        args.found.append({
                            "pair": label, "direction": row["direction"],
                            "policy": row["policy"], "drawn_from": accepting,
                            "refused_by": rejecting, "verdict": verdict, "value": value,
                        })  # fmt: skip
                        case = f"{label} {row['direction']} {row['policy']}"
                        if verdict == "confirmed":
                            counterexamples.append(case)
                        else:
                            unconfirmed.append(f"{verdict}: {case}")
        sizes.append(
            (sum(len(json.dumps(s)) for s in schemas.values()), max(r["cpu"] for r in rows))
        )
        outcomes = [by_direction.get(d, []) for d in ("old->new", "new->old")]
        flat = [x for o in outcomes for x in o]
        fulls.append(
            "violations" if 1 in flat
            else "compatible" if flat and all(x == 0 for x in flat)
            else "error" if any(x in (2, "crash") for x in flat)
            else "undecided"
        )  # fmt: skip
        print(f"  {label:40} " + " ".join(str(r["exit"]) for r in rows)
              + f"  {max(r['cpu'] for r in rows):6.2f} s", flush=True)  # fmt: skip
    n = len(runs)
    exits = Counter(str(r["exit"]) for r in runs)
    times = [r["cpu"] for r in runs]
    print(f"\n== {which}: {len(chosen)} pairs of {len({p[0] for p in chosen})} schemas, {n} runs")
    if not n:
        return
    decided = sum(1 for r in runs if r["exit"] in (0, 1))
    print(f"decided (exit 0/1)       {decided}/{n} = {100 * decided / n:.1f} %"
          f"   [exit 0: {exits['0']}, 1: {exits['1']}, 3: {exits['3']}, 2: {exits['2']},"
          f" crash: {exits['crash']}, timeout: {exits['timeout']}]")  # fmt: skip
    full = Counter(fulls)
    print(f"--mode full per pair     compatible {full['compatible']}, violations"
          f" {full['violations']}, undecided {full['undecided']}, error {full['error']}"
          f" of {len(fulls)}")  # fmt: skip
    print(f"usage errors (exit 2)    {exits['2']}")
    print(f"wrong witnesses          {len(wrong)} of {checked_witnesses} witnesses"
          f" (python-jsonschema; ajv judged {ajv_checked} verdicts)")  # fmt: skip
    print(f"false compatible         {len(counterexamples)} of {compat_checked} compatible"
          f" runs checked ({instances} instances of OLD; {compat_unchecked} runs"
          f" hypothesis-jsonschema could not draw from; {len(unconfirmed)} counterexamples"
          f" not confirmed)")  # fmt: skip
    print(f"CPU s per run            median {statistics.median(times):.3f}, max {max(times):.2f}")
    big = max(sizes)
    small = min(sizes)
    print(f"size vs time             largest pair {big[0] / 1e3:.0f} kB: {big[1]:.2f} s;"
          f" smallest {small[0] / 1e3:.0f} kB: {small[1]:.2f} s")  # fmt: skip
    for line in wrong + [f"false compatible: {c}" for c in counterexamples] + unconfirmed:
        print("  !", line)
    for error, count in errors.most_common():
        print(f"  error x{count}: {error}")
    if args.reasons:
        print("undecided claims by reason:")
        for reason, count in reasons.most_common(args.reasons):
            print(f"  {count:5}  {reason}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", default="both", choices=("dev", "held-out", "both"))
    parser.add_argument("--only", default="", help="these schemas only (comma-separated)")
    parser.add_argument("--skip", default="", help="not these schemas (comma-separated)")
    parser.add_argument("--examples", type=int, default=100)
    parser.add_argument("--timeout", type=float, default=120, help="seconds a diff may run")
    parser.add_argument("--draw-seconds", type=int, default=30, help="per compatible run")
    parser.add_argument("--reasons", type=int, default=0, metavar="N")
    parser.add_argument("--source", type=Path, default=ROOT)
    parser.add_argument(
        "--counterexamples",
        type=Path,
        default=ROOT / "benchmarks" / "results" / "schema-diff-counterexamples.jsonl",
        help="where every counterexample found is saved (JSON lines)",
    )
    args = parser.parse_args()
    args.found = []
    args.source = args.source.resolve()
    started = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="schemadiff-real-"))
    try:
        for which in ("dev", "held-out") if args.set == "both" else (args.set,):
            evaluate(which, args, tmp)
    finally:
        shutil.rmtree(tmp)
        save_counterexamples(args.counterexamples, args.found)
        print(f"{len(args.found)} counterexamples saved to {args.counterexamples}")
    print(f"\n({time.monotonic() - started:.0f} s wall)")


if __name__ == "__main__":
    main()
