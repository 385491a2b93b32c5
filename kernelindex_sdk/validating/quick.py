"""The quick verdict: whether a document would check with no problem, answered without
building its item.

A :class:`~kernelindex_sdk.validating.validation.ValidationSession` makes one
:class:`QuickPass` and answers ``passes`` and ``passes_shared`` with it; a pipeline that
reports only problems asks it first, and checks in full only what it does not pass.
Each quick answer here stands in for a full check, and each pair is held to one law by
a test, so that a quick pass that were wrong would fail a test rather than pass a record
silently:

* :meth:`QuickPass.passes` for ``ValidationSession.check_document`` finding one item with
  no problem (routing, the schema, the semantic rules, the digests of a bundle's records
  against its run's references) — ``tests/test_validation_quick.py`` (every example,
  the seeds, a valid bundle with any node replaced by any value) and
  ``tests/test_fast_path_law.py`` (``validate`` against ``validate -v``);
* :meth:`QuickPass.passes_shared` for :meth:`~QuickPass.passes` of the whole line, for a
  line a tail memo read only up to a tail it had seen, and its short path for a run and
  that tail alone (:func:`_run_and_tail`) for ``passes``' routing and member loop —
  ``tests/test_fast_path_law.py`` (every member order, broken members, writers) and
  ``tests/test_validation_quick.py::test_the_short_path_of_a_shared_tail_answers_as_passes``;
* a plan's ``shell_quick`` (:func:`~kernelindex_sdk.validating.fastengine.quick_part`)
  for the schema's shell — ``tests/test_fast_engine.py::test_what_the_quick_part_accepts_\
the_check_and_the_reference_accept``;
* a plan's ``run_quick`` (a version's ``QUICK_RULES``) for its ``check_record`` on a run
  — ``tests/test_checks.py::test_the_quick_rules_pass_exactly_the_runs_without_problems``,
  and where the rules' C twin is the entry (``checks/_runrules.c``), it against them —
  ``tests/test_checks.py::test_the_native_rules_answer_as_their_twin_or_ask_it``;
* the memo of referenced records (:meth:`QuickPass._referenced`: each distinct record
  schema-checked and digested once, keyed by its schema and the digest its run claims)
  for checking and digesting every record again, and the end of the intake's bytes
  (:func:`_tail_proves`) for writing each remembered record again and comparing its
  bytes (:meth:`QuickPass._hits_hold`) — ``tests/test_validation_quick.py`` (records
  moved between members, records of one digest in other forms, the end of the written
  bytes proving only what is there).

False always means only "not known to pass": the caller then runs the full check, whose
answer stands.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from kernelindex_sdk import checks
from kernelindex_sdk.base.recordformat import CURRENT_API_VERSION
from kernelindex_sdk.canonical import DigestMemo, safe_digest
from kernelindex_sdk.errors import UnknownKind
from kernelindex_sdk.schema.registry import SchemaEntry, SchemaRegistry
from kernelindex_sdk.validating.engine import ValidationEngine
from kernelindex_sdk.validating.fastengine import Check, Split, quick_part

if TYPE_CHECKING:
    from kernelindex_sdk.reading.sharedtails import SharedTail

__all__ = ["QuickPass"]

_orjson_dumps: Callable[[Any], bytes] | None
try:  # the key of a remembered record; without orjson, nothing is remembered
    from orjson import dumps as _orjson_dumps
except ImportError:  # pragma: no cover - depends on the environment
    _orjson_dumps = None


_ABSENT = object()


def _run_and_tail(value: Any, shared: SharedTail) -> bool:
    """Whether ``value`` is a bundle's run alone (a line's head as the tail memo gives
    it) or that run and ``shared``'s very members: the two shapes whose tail members
    :meth:`QuickPass.passes_shared` may skip. A head that holds any other member
    (a referenced record written before the tail, in any member order) is not one of
    them: its members are checked as :meth:`QuickPass.passes` checks any."""
    if type(value) is not dict or "run" not in value:
        return False
    size = len(value)
    if size == 1:
        return True
    return size == len(shared.members) + 1 and _holds_tail(value, shared)


def _holds_tail(value: dict[str, Any], shared: SharedTail) -> bool:
    """Whether ``value`` holds each of ``shared``'s members as the very object the
    tail holds (the only members a checked tail lets a check skip)."""
    return all(value.get(key, _ABSENT) is member for key, member in shared.members.items())


def _tail_proves(written: bytes, tail: list[bytes]) -> bool:
    """Whether ``written``, ``orjson.dumps`` of an object, ends with the members of
    ``tail`` (``,"name":`` and the bytes of a JSON value, in turn): then the object's
    last members are those names in that order, each with a value that orjson writes
    as those bytes — the bytes of the memo, proven without writing the members again.

    Why the end proves it (orjson's compact bytes: no whitespace, and a ``"`` inside a
    string always escaped as ``\\"``): the ``"`` after a ``,`` is no escaped one, nor a
    string's closing quote (a closing quote is followed by ``:``, ``,``, ``]`` or
    ``}``, not by a name's letter), so ``"name":`` is a key. Its value is the given
    bytes: they are one JSON value and the byte after them (``,`` or the last ``}``)
    ends any value there. After the last value only the one ``}`` is left, so that
    key is a member of the outermost object (a key nested deeper would need a closing
    bracket for each level); and a value followed by ``,`` and a member of the
    outermost object is itself one, so every key of ``tail`` is, from the last back.
    A dict's members are distinct, so each is the one of that name.
    """
    tail.append(b"}")
    return written.endswith(b"".join(tail))


#: Distinct referenced records :meth:`QuickPass.passes` remembers (then it starts
#: again, so memory stays flat on a stream of any length).
_RECORDS_REMEMBERED = 4096


class _QuickPlan(NamedTuple):
    """How :meth:`QuickPass.passes` checks items of one apiVersion and kind (a named
    tuple: cheaper to create at import than a dataclass)."""

    schema_id: str
    #: The schema's shell (FastEngine.split), or None: validated whole. It checks the
    #: members no run field references itself (one call into Rust).
    shell: Check | None
    #: Members of a split schema that a run field references: member → (schema id,
    #: run spec field).
    referenced: Mapping[str, tuple[str, str]]
    #: The version's check_record, and the kinds it has rules for (None: all).
    rules: checks.RecordCheck | None
    checked: frozenset[str] | None
    #: The shell's :func:`~kernelindex_sdk.validating.fastengine.quick_part` (None without a
    #: shell), and the version's quick rules for a bundle's run of this plan's kind
    #: (``QUICK_RULES``; None: none, its ``rules`` answer), both asked by
    #: :meth:`QuickPass.passes_shared`.
    shell_quick: Check | None
    run_quick: Callable[[Mapping[str, Any], datetime | None], bool] | None
    #: For a record (not a bundle) split into no shell: its schema's
    #: :meth:`~kernelindex_sdk.validating.fastengine.FastEngine.quick_check` (None: none;
    #: a refusal is asked again of the session's ``accepts``), and its kind's quick
    #: rules (``QUICK_RULES``; a refusal is asked again of ``rules``).
    record_quick: Check | None
    record_rules: Callable[[Mapping[str, Any], datetime | None], bool] | None
    #: Bundle members → their pointers (the members records_of() lists).
    members: Mapping[str, str]
    #: (member, run spec field referencing it).
    references: tuple[tuple[str, str], ...]
    #: The three above, by member, for :meth:`QuickPass.passes`'s one lookup a
    #: member: its pointer, its (schema id, run spec field) if referenced, and how
    #: ``orjson.dumps`` of a bundle writes what comes before its value, ``,"member":``
    #: (:func:`_tail_proves`; for names that are ASCII identifiers, all of them: no
    #: closing quote precedes their first letter), else None.
    steps: Mapping[str, tuple[str, tuple[str, str] | None, bytes | None]]


class _SharedVerdict(NamedTuple):
    """What a quick pass found for a shared tail's members (``SharedTail.checked``,
    :meth:`QuickPass.passes_shared`): they passed in ``owner`` under ``plan``, the plan
    of runs of ``api_version`` and ``kind``, beside a run whose references to them were
    ``claims`` (run spec field, value)."""

    owner: QuickPass
    plan: _QuickPlan
    claims: tuple[tuple[str, Any], ...]
    api_version: str
    kind: str


class QuickPass:
    """A session's quick verdicts (module docstring), and what they remember: the plans
    of the apiVersions and kinds met, and the referenced records checked.

    ``enabled`` False (a session that keeps something per item, or may be given values
    strict intake did not produce) answers False to everything. ``accepts`` is the
    schema verdict it asks (the engine's ``accepts`` where it has one, else
    ``is_valid``); ``memo`` the session's digest memo; ``now`` its fixed clock, or None.
    """

    def __init__(
        self,
        registry: SchemaRegistry,
        engine: ValidationEngine,
        accepts: Callable[[str, Any], bool],
        *,
        enabled: bool,
        now: datetime | None,
        memo: DigestMemo | None,
    ) -> None:
        self.registry = registry
        self.engine = engine
        self._accepts = accepts
        self._enabled = enabled
        self._now = now
        self._memo = memo
        #: Referenced records by (schema, the digest their run claims) → (the record's
        #: bytes, its digest when valid against that schema, else None): see
        #: :meth:`_referenced`. The schema is part of the key: one record's bytes may
        #: stand in two members, valid in only one of them.
        self._records: dict[tuple[str, Any], tuple[bytes, str | None]] = {}
        self._plans: dict[tuple[str, str, bool], _QuickPlan] = {}

    @property
    def shared_tail_keys(self) -> tuple[str, ...]:
        """The members a JSON Lines line's shared tail starts with, for a
        :class:`~kernelindex_sdk.reading.sharedtails.TailMemo` whose documents go to
        :meth:`passes_shared`: those a run references, in the order a bundle lists
        them (the current version's: asking for the newest would list the versions'
        modules, which imports ``inspect`` at start-up). Empty where :meth:`passes`
        cannot answer."""
        return checks.bundle_members(CURRENT_API_VERSION)[1:] if self._enabled else ()

    def passes_shared(self, value: Any, shared: SharedTail) -> bool:
        """:meth:`passes` for a value whose last members are ``shared``'s (a line that a
        :class:`~kernelindex_sdk.reading.sharedtails.TailMemo` read only up to a tail it had
        seen: :attr:`~kernelindex_sdk.reading.intake.Document.shared`), or for its *head*
        alone: the members before the tail, as the memo's ``take`` is given them. A
        head this needs whole is completed here (in place) with the tail's members.

        The first value with a tail is checked in full, as :meth:`passes` checks any.
        What it found for the tail's members depends on nothing but those members and
        its run's references to them: the schema check and the rules of a record read
        only the record, and its digest is that of its bytes. So, while the tail keeps
        what this pass found (``SharedTail.checked``, for the same plan), a later
        value with it has only its own members checked, the shell checks what it is
        given (the tail's members passed it, and it checks each member alone), and
        each of its run's references to a tail member must name what the first one
        named.

        Most lines of such a stream are a run and the tail alone; those are answered
        here, without the routing and the member loop of :meth:`passes` (the same
        checks, in the same order, for that one shape): the interpreter's work is
        what a shared line costs most, after the Rust parse and schema check. Any
        other shape (a head that holds a referenced record too, written before the
        tail; a value holding the tail's keys with objects other than the tail's own)
        goes to :meth:`passes`, which checks every member the tail does not hold.
        ``tests/test_fast_path_law.py`` holds the law: over every member order, broken
        members and writers, the verdicts are those of the full check.
        """
        known: _SharedVerdict | None = shared.checked
        if (
            known is None
            or known.owner is not self
            or (len(value) != 1 and not _run_and_tail(value, shared))
        ):  # (a head of one member, the common case, is read as the run below)
            return self._passes_whole(value, shared)
        _, plan, claims, api_version, kind = known
        shell = plan.shell
        # The head is one member. A tail is remembered only under a bundle's plan, so
        # it has no "kind": with "run" the value is a bundle, routed by its run.
        head = value.get("run")
        if (
            type(head) is not dict
            or head.get("apiVersion") != api_version
            or head.get("kind") != kind
            or shell is None  # (a remembered plan is split)
        ):
            return self._passes_whole(value, shared)
        try:
            if not (plan.shell_quick(value) or shell(value)):  # type: ignore[misc]
                # (A head the shell refuses: asked again whole, as passes would be.)
                return len(value) == 1 and self._passes_whole(value, shared)
        except Exception:  # as passes: "not known to pass"
            return False
        spec = head.get("spec")
        if type(spec) is not dict:
            return False
        rules, checked, run_quick = plan.rules, plan.checked, plan.run_quick
        if rules is not None and (checked is None or kind in checked):
            # The run's quick rules, else check_record (as passes: only a member the
            # plan knows has its rules run).
            if run_quick is not None:
                if not run_quick(spec, self._now):
                    return False
            elif (pointer := plan.members.get("run")) is not None and rules(
                head, pointer, self._now
            ):
                return False
        for field, claim in claims:  # noqa: SIM110  (a loop: no generator's frame a line)
            if spec.get(field) != claim:
                return False
        return True

    def _passes_whole(self, value: Any, shared: SharedTail) -> bool:
        """:meth:`passes` of a value read with ``shared``, its head completed first. A
        value that already holds a tail key with another object than the tail's is
        checked as any value is: only the tail's very members may be skipped."""
        if type(value) is dict:
            if shared.keys.isdisjoint(value):
                value.update(shared.members)
            elif not _holds_tail(value, shared):
                return self.passes(value)
        return self.passes(value, None, shared)

    def passes(
        self, value: Any, written: bytes | None = None, shared: SharedTail | None = None
    ) -> bool:
        """Whether the session's
        :meth:`~kernelindex_sdk.validating.validation.ValidationSession.check_document`
        would find ``value`` to be one item with no problem: the quick answer for the
        common case, asked first by a pipeline that
        reports only problems (``validate`` without ``--strict-refs``). ``written`` is
        ``orjson.dumps(value)`` when the intake made it
        (:attr:`~kernelindex_sdk.reading.intake.Document.written`), else None.

        It runs what ``check_item`` runs on a valid item (routing, the schema, the
        semantic rules, the digests of a bundle's records against its run's
        references) but builds no item, pointer or record list. The records a bundle
        references repeat across a stream, so each distinct one is schema-checked and
        digested once (:meth:`_referenced`); a record the memo knows is proven to be
        the one remembered by an ``endswith`` of ``written`` (:meth:`_tail_proves`)
        rather than written again. False means only "not known to pass": the
        caller then runs ``check_document``, whose answer stands
        (``tests/test_validation_quick.py`` checks that the two agree). The pass of a
        session that keeps something per item (``strict_refs``, ``keep_values``) or may
        be given values strict intake did not produce always answers False. ``shared``: see
        :meth:`passes_shared` (then ``written`` must be None).
        """
        if not self._enabled or type(value) is not dict:
            return False
        bundle = "run" in value and "kind" not in value  # is_bundle(value), inline
        head = value["run"] if bundle else value
        if type(head) is not dict:
            return False
        api_version, kind = head.get("apiVersion"), head.get("kind")
        if type(api_version) is not str or type(kind) is not str:
            return False
        plan = self._plans.get((api_version, kind, bundle)) or self._plan(api_version, kind, bundle)
        if plan is None:
            return False  # an unknown apiVersion or kind: check_item says which
        shell = plan.shell
        spec: Any = None  # a split bundle's run spec, once its shell has passed
        if not bundle:
            return self._record_passes(value, plan, kind)
        if shell is None:
            if not self._accepts(plan.schema_id, value):
                return False
        else:
            try:
                if not shell(value):
                    return False
            except Exception:  # as FastEngine.fast_verdict: "not known to pass"
                return False
            spec = head.get("spec")  # the run is valid here: this is its spec
            if type(spec) is not dict:
                return False
        return self._bundle_passes(value, written, shared, plan, spec, api_version, kind)

    def _record_passes(self, value: dict[str, Any], plan: _QuickPlan, kind: str) -> bool:
        """:meth:`passes` of one record (a JSON Lines line of records, as the importers
        write them): its schema's quick check in Rust, else the session's ``accepts``;
        its kind's quick rules, else its version's ``check_record`` (``None``: a rule
        reads the clock if it must). Each quick answer is True only where the one it
        stands for is (module docstring); a refusal asks that one."""
        quick = plan.record_quick
        try:
            valid = quick is not None and quick(value)
        except Exception:  # a value of no JSON type: "not known to pass"
            valid = False
        if not (valid or self._accepts(plan.schema_id, value)):
            return False
        rules, checked = plan.rules, plan.checked
        if rules is None or (checked is not None and kind not in checked):
            return True
        run_quick = plan.record_rules
        if run_quick is not None and run_quick(value["spec"], self._now):
            return True
        return not rules(value, "", self._now)

    def _bundle_passes(
        self,
        value: dict[str, Any],
        written: bytes | None,
        shared: SharedTail | None,
        plan: _QuickPlan,
        spec: Any,
        api_version: str,
        kind: str,
    ) -> bool:
        """:meth:`passes` of a bundle whose run ``plan`` routed: every member it has,
        checked against the run's reference and the rules (``spec``: the run's spec
        where the plan's shell checked the run, else None)."""
        shell, rules, checked = plan.shell, plan.rules, plan.checked
        now = self._now  # None: a rule reads the clock if it needs to (most need not)
        # One pass over the members the bundle has (not over every member it may
        # have): a referenced member is checked against its run's reference, and, as
        # records_of() and _semantics() do, each member that is an object against the
        # rules. The checks are a conjunction: their order does not change the answer.
        steps, remembered = plan.steps, self._records
        # A memo hit's bytes are taken on trust here and proven at the end, all at once,
        # by the end of ``written`` (_tail_proves): ``tail`` is what the last referenced
        # members' bytes (remembered, or just written) make of it; ``lost``: a member
        # whose bytes are not in ``tail`` came after one that is, or has none, so the
        # end cannot prove them all. Without ``written`` each hit is written and
        # compared at once.
        tail: list[bytes] = []
        lost = False
        # A shared tail whose members passed before (passes_shared): those are skipped,
        # and their run's references to them compared with what passed (``claims``).
        skip: frozenset[str] | None = None
        claims: tuple[tuple[str, Any], ...] = ()
        if shared is not None:
            known: _SharedVerdict | None = shared.checked
            if known is not None and known.owner is self and known.plan is plan:
                skip, claims = shared.keys, known.claims
        for member, record in value.items():
            if skip is not None and member in skip:
                continue
            step = steps.get(member)
            if step is None:
                if tail:
                    lost, tail = True, []
                continue
            pointer, reference, segment = step
            if reference is not None:  # only a split bundle's: spec is set
                schema_id, field = reference
                claimed = spec.get(field)
                try:  # _referenced's memo, read here: most records were seen before
                    key = (schema_id, claimed)
                    text, found = remembered[key]
                except KeyError:
                    text, found = self._written_referenced(schema_id, record, key)
                except TypeError:  # a claim of no JSON type (a list): not remembered
                    text, found = b"", self._referenced(schema_id, record, None, b"")
                else:
                    if written is None:  # written and compared now (as _found_by_bytes)
                        try:
                            same = _orjson_dumps(record) == text  # type: ignore[misc]
                        except TypeError:  # a value orjson refuses
                            same = False
                        if not same:
                            text, found = self._written_referenced(schema_id, record, key)
                if found is None or claimed != found:
                    return False
                if written is not None:
                    if segment is not None and text:
                        tail += (segment, text)
                    else:
                        lost, tail = True, []
            elif tail:
                lost, tail = True, []
            # (A kind that is no string is in no set: a record the memo's hit took on
            # trust has not been schema-checked, and its "kind" may be a list.)
            if (
                rules is not None
                and isinstance(record, dict)
                and (
                    checked is None
                    or (type(member_kind := record.get("kind")) is str and member_kind in checked)
                )
                and rules(record, pointer, now)
            ):
                return False
        if (
            (lost or tail)
            and not (not lost and written is not None and _tail_proves(written, tail))
            and not self._hits_hold(plan, value, spec)
        ):
            return False
        if shared is not None and shell is not None:
            if skip is None:
                self._remember_shared(plan, shared, spec, api_version, kind)
                return True
            return all(spec.get(field) == claim for field, claim in claims)
        return shell is not None or self._references_match(plan, value)

    def _remember_shared(
        self, plan: _QuickPlan, shared: SharedTail, spec: Any, api_version: str, kind: str
    ) -> None:
        """That ``shared``'s members passed here under ``plan``, with the
        references of the run they passed with (:meth:`passes_shared`), and that run's
        apiVersion and kind (whose plan ``plan`` is): kept on the tail
        (``SharedTail.checked``), so it goes when the memo drops the tail."""
        claims = []
        for member in shared.keys:
            step = plan.steps.get(member)
            if step is not None and step[1] is not None:
                field = step[1][1]
                claims.append((field, spec.get(field)))
        shared.checked = _SharedVerdict(self, plan, tuple(claims), api_version, kind)

    def _written_referenced(
        self, schema_id: str, record: Any, key: tuple[str, Any]
    ) -> tuple[bytes, str | None]:
        """The bytes of a record the memo does not know (``b""`` where orjson refuses
        it) and :meth:`_referenced` of it, remembered with those bytes."""
        try:
            text = _orjson_dumps(record)  # type: ignore[misc]
        except TypeError:  # no orjson, a value it refuses: not remembered
            return b"", self._referenced(schema_id, record, None, b"")
        return text, self._referenced(schema_id, record, key, text)

    def _found_by_bytes(self, schema_id: str, record: Any, key: tuple[str, Any]) -> str | None:
        """:meth:`_referenced`'s answer for a record, the memo's if it holds the
        record's bytes (written here and compared): for a hit no ``written`` proves."""
        seen = self._records.get(key)
        try:
            if seen is not None and _orjson_dumps(record) == seen[0]:  # type: ignore[misc]
                return seen[1]
        except TypeError:  # a value orjson refuses
            pass
        return self._written_referenced(schema_id, record, key)[1]

    def _hits_hold(self, plan: _QuickPlan, value: dict[str, Any], spec: Any) -> bool:
        """Whether each referenced member of a bundle has the digest its run claims,
        each written and compared with the memo (the memo's answers :meth:`passes`
        took on trust and the end of ``written`` did not prove)."""
        for member, record in value.items():
            reference = plan.referenced.get(member)
            if reference is None or member not in plan.members:
                continue
            schema_id, field = reference
            claimed = spec.get(field)
            try:
                key = (schema_id, claimed)
                hash(key)
            except TypeError:  # not remembered: passes asked _referenced itself
                continue
            found = self._found_by_bytes(schema_id, record, key)
            if found is None or claimed != found:
                return False
        return True

    def _references_match(self, plan: _QuickPlan, value: dict[str, Any]) -> bool:
        """Whether each record of a bundle checked whole has the digest its run's
        reference names (a split bundle's referenced members were compared as they
        were checked)."""
        spec = value["run"]["spec"]
        for member, field in plan.references:
            record = value.get(member)
            if isinstance(record, dict):
                embedded = safe_digest(record, self._memo)
                if embedded is not None and spec.get(field) != embedded:
                    return False
        return True

    def _plan(self, api_version: str, kind: str, bundle: bool) -> _QuickPlan | None:
        """What :meth:`passes` needs for items of one apiVersion and kind, worked out
        once (routing, the schema's parts, the version's rules and references)."""
        try:
            entry = self.registry.route(api_version, kind)
            if bundle:
                entry = self.registry.bundle(api_version)
        except UnknownKind:
            return None
        module = checks.for_version(entry.api_version)
        references: Mapping[str, tuple[str, str]] = getattr(module, "REFERENCES", {})
        split = self.split(entry) if bundle else None
        shell, members = split if split is not None else (None, ())
        referenced = {m: (schema, references[m][1]) for m, schema in members}
        pointers = {m: f"/{m}" for m in checks.bundle_members(api_version)}
        plan = _QuickPlan(
            schema_id=entry.id,
            shell=shell,
            referenced=referenced,
            rules=module.check_record if module is not None else None,
            checked=getattr(module, "CHECKED_KINDS", None),
            shell_quick=quick_part(shell) if shell is not None else None,
            run_quick=getattr(module, "QUICK_RULES", {}).get(kind) if bundle else None,
            record_quick=None if bundle else self._record_quick(entry.id),
            record_rules=None if bundle else getattr(module, "QUICK_RULES", {}).get(kind),
            members=pointers,
            references=tuple((member, field) for member, (_, field) in references.items()),
            steps={
                m: (
                    pointer,
                    referenced.get(m),
                    b',"' + m.encode() + b'":' if m.isidentifier() and m.isascii() else None,
                )
                for m, pointer in pointers.items()
            },
        )
        if len(self._plans) >= 256:  # keyed by input text: bounded
            self._plans.clear()
        self._plans[(api_version, kind, bundle)] = plan
        return plan

    def _record_quick(self, schema_id: str) -> Check | None:
        """The engine's quick check of ``schema_id`` where it has one (a FastEngine)."""
        quick_check = getattr(self.engine, "quick_check", None)
        found: Check | None = quick_check(schema_id) if quick_check is not None else None
        return found

    def split(self, entry: SchemaEntry) -> Split | None:
        """The engine's :meth:`~kernelindex_sdk.validating.fastengine.FastEngine.split` of
        ``entry``'s schema, if it has one, with only the members a run field
        references taken out (:meth:`_referenced` checks those from memory); the shell
        checks the others itself."""
        split = getattr(self.engine, "split", None)
        if split is None:
            return None
        whole: Split | None = split(entry.id)
        if whole is None:
            return None
        module = checks.for_version(entry.api_version)
        references: Mapping[str, tuple[str, str]] = getattr(module, "REFERENCES", {})
        keep = frozenset(member for member, _ in whole[1] if member not in references)
        return split(entry.id, keep) if keep else whole

    def _referenced(
        self, schema_id: str, record: Any, key: tuple[str, Any] | None, text: bytes
    ) -> str | None:
        """The digest of a referenced record that is valid against ``schema_id``, else
        None; remembered under ``key`` — the schema and the digest the run claims for
        it — with ``text``, the record's bytes (they determine strict intake's values,
        and so the answer), which :meth:`passes` compares first: a stream's repeated
        protocol or environment is checked once. One record per key: records that
        differ only in their JSON's form (key order, ``1.0`` for ``1``) share a
        digest, and the last one seen is kept. Keyed by the claim, not by the bytes:
        a memo hit then costs a comparison of bytes rather than a hash of them. ``key``
        None: not remembered (no orjson, a value it refuses, or a claim that is no
        key)."""
        found = (
            safe_digest(record, self._memo)
            if isinstance(record, dict) and self._accepts(schema_id, record)
            else None
        )
        if key is not None:
            if len(self._records) >= _RECORDS_REMEMBERED:
                self._records.clear()
            self._records[key] = (text, found)
        return found
