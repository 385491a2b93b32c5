"""Validating documents: routing, schema, bundle references, semantic checks.

A *document* is one parsed JSON value: a record, a bundle (``{"run": ..., ...}``), or
an array of them. Each record or bundle in it is an :class:`Item`, validated on its
own and reported with every problem it has.

A :class:`ValidationSession` spans one invocation: records given together resolve
each other's references. With ``strict_refs`` it remembers what each run references
and, at :meth:`ValidationSession.finish`, reports references to records never given
(or given with the wrong kind); without it, it keeps nothing between documents, so
memory stays flat on a stream of any length.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime, timezone
from typing import Any, NamedTuple

from kernelindex_sdk import checks
from kernelindex_sdk.base.frozenvalue import FrozenValue
from kernelindex_sdk.base.pointers import escape_token
from kernelindex_sdk.base.wire import CURRENT_API_VERSION
from kernelindex_sdk.canonical import DigestMemo, digest
from kernelindex_sdk.errors import IntakeError, Problem, UnknownKind
from kernelindex_sdk.reading.intake import json_problems
from kernelindex_sdk.reading.sharedtails import SharedTail
from kernelindex_sdk.schema.registry import (
    BUNDLE_KIND,
    SchemaEntry,
    SchemaRegistry,
    default_registry,
)
from kernelindex_sdk.validating.engine import ValidationEngine
from kernelindex_sdk.validating.fastengine import Check, Split, default_engine, quick_part

_orjson_dumps: Callable[[Any], bytes] | None
try:  # the key of a remembered record; without orjson, nothing is remembered
    from orjson import dumps as _orjson_dumps
except ImportError:  # pragma: no cover - depends on the environment
    _orjson_dumps = None


_ABSENT = object()


def _run_and_tail(value: Any, shared: SharedTail) -> bool:
    """Whether ``value`` is a bundle's run alone (a line's head as the tail memo gives
    it) or that run and ``shared``'s very members: the two shapes whose tail members
    :meth:`ValidationSession.passes_shared` may skip. A head that holds any other
    member (a referenced record written before the tail, in any member order) is
    not one of them: its members are checked as :meth:`ValidationSession.passes`
    checks any."""
    if type(value) is not dict or "run" not in value:
        return False
    size = len(value)
    if size == 1:
        return True
    members = shared.members
    if size != len(members) + 1:
        return False
    return all(value.get(key, _ABSENT) is member for key, member in members.items())


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


#: Distinct referenced records :meth:`ValidationSession.passes` remembers (then it
#: starts again, so memory stays flat on a stream of any length).
_RECORDS_REMEMBERED = 4096


class RecordRef(tuple):  # type: ignore[type-arg]
    """A record found in a document, with its digest: ``kind``, ``name``, ``digest``,
    ``pointer``.

    ``digest`` is None when the record has no spec or cannot be canonicalized. A
    session that skips run digests for speed (``strict_json``, see
    :class:`ValidationSession`) hands out refs that compute theirs on first access,
    so the switch changes the time taken, never a result. Immutable (a tuple: one
    is made per record of every item, so construction must be cheap); compared by
    value; pickled with the digest computed.
    """

    __slots__ = ()

    def __new__(
        cls,
        kind: str,
        name: str | None,
        digest: str | None,
        pointer: str,
        *,
        later: Mapping[str, Any] | None = None,
    ) -> RecordRef:
        # The last member is a cell: [digest, the record whose digest is still due].
        return tuple.__new__(cls, (kind, name, pointer, [digest, later]))

    @property
    def kind(self) -> str:
        return self[0]  # type: ignore[no-any-return]

    @property
    def name(self) -> str | None:
        return self[1]  # type: ignore[no-any-return]

    @property
    def pointer(self) -> str:
        return self[2]  # type: ignore[no-any-return]

    @property
    def digest(self) -> str | None:
        cell: list[Any] = self[3]
        if cell[1] is not None:
            cell[0] = safe_digest(cell[1])
            cell[1] = None
        return cell[0]  # type: ignore[no-any-return]

    def _key(self) -> tuple[str, str | None, str | None, str]:
        return (self.kind, self.name, self.digest, self.pointer)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RecordRef):
            return NotImplemented
        return self._key() == other._key()

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"RecordRef(kind={self.kind!r}, name={self.name!r}, digest={self.digest!r},"
            f" pointer={self.pointer!r})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (RecordRef, (self.kind, self.name, self.digest, self.pointer))


class Item(FrozenValue):
    """One record or bundle and everything wrong with it — or a document that could
    not be read at all (``unreadable``: its one problem says why). A frozen dataclass to
    :mod:`dataclasses` (:mod:`kernelindex_sdk.base.frozenvalue`)."""

    __match_args__ = __slots__ = (
        "source", "line", "pointer", "kind", "name", "problems", "records", "unreadable",
        "value",
    )  # fmt: skip
    _field_options_ = {"value": {"compare": False, "repr": False}}  # noqa: RUF012 - read once, by FrozenValue
    source: str
    line: int | None
    pointer: str
    kind: str | None
    name: str | None
    problems: tuple[Problem, ...]
    records: tuple[RecordRef, ...]
    #: True for a document (or path) that could not be read: never valid, never invalid.
    unreadable: bool
    #: The checked value itself, kept only when the session is asked to
    #: (``keep_values``), for callers that go on to use valid records (``compare``).
    value: Any

    def __init__(
        self,
        source: str,
        line: int | None,
        pointer: str,
        kind: str | None,
        name: str | None,
        problems: tuple[Problem, ...] = (),
        records: tuple[RecordRef, ...] = (),
        unreadable: bool = False,
        value: Any = None,
    ) -> None:
        _set = object.__setattr__
        _set(self, "source", source)
        _set(self, "line", line)
        _set(self, "pointer", pointer)
        _set(self, "kind", kind)
        _set(self, "name", name)
        _set(self, "problems", problems)
        _set(self, "records", records)
        _set(self, "unreadable", unreadable)
        _set(self, "value", value)

    @property
    def valid(self) -> bool:
        return not self.problems


def unreadable_item(error: IntakeError) -> Item:
    """The item an unreadable document or path stands for: its intake problem."""
    problem = error.problem
    return Item(problem.source or "<input>", problem.line, "", None, None, (problem,), (), True)


class _Pending(NamedTuple):
    """A run's reference remembered for ``--strict-refs``.

    This and :class:`_QuickPlan` are named tuples, not dataclasses: a frozen
    dataclass costs ~4M instructions to create at import (its methods are compiled
    from source), a named tuple a quarter of that, and start-up is part of
    ``validate``'s time (#14).
    """

    digest: str
    kind: str
    field: str
    problem_at: Problem
    #: The item (source, line, pointer) and whether it was valid before references.
    item: tuple[str, int | None, str]
    item_valid: bool


def shifted_pending(pending: _Pending, offset: int) -> _Pending:
    """A reference remembered by a worker that numbered lines from the start of its
    range of a file, its lines moved ``offset`` lines down (``pipeline``)."""
    source, line, pointer = pending.item
    if line is None:
        return pending
    problem = pending.problem_at
    moved = problem._replace(line=problem.line + offset) if problem.line is not None else problem
    return pending._replace(problem_at=moved, item=(source, line + offset, pointer))


def split_document(value: Any, pointer: str = "") -> Iterator[tuple[str, Any]]:
    """The items of a document: itself, or each element of a top-level array."""
    if isinstance(value, list):
        for index, element in enumerate(value):
            yield f"{pointer}/{index}", element
    else:
        yield pointer, value


def is_bundle(value: Any) -> bool:
    """A bundle is an object with a ``run`` member and no ``kind`` of its own."""
    return isinstance(value, dict) and "run" in value and "kind" not in value


def records_of(value: Any, pointer: str = "") -> list[tuple[str, Mapping[str, Any]]]:
    """Every record in an item: the record itself, or a bundle's members in order."""
    if is_bundle(value):
        run = value.get("run")
        members = checks.bundle_members(run.get("apiVersion") if isinstance(run, dict) else None)
        return [
            (f"{pointer}/{member}", record)
            for member in members
            if isinstance(record := value.get(member), dict)
        ]
    return [(pointer, value)] if isinstance(value, dict) else []


def safe_digest(record: Mapping[str, Any], memo: DigestMemo | None = None) -> str | None:
    """The record's digest, or None when it lacks apiVersion, kind or spec (or cannot
    be canonicalized: a value JCS cannot write, or nesting too deep for its recursive
    encoder). ``memo``: for values from strict intake only (see DigestMemo)."""
    if "apiVersion" not in record or "kind" not in record or "spec" not in record:
        return None
    try:
        return memo.digest(record) if memo is not None else digest(record)
    except (TypeError, ValueError, RecursionError):
        return None


def _article(noun: str) -> str:
    return "an" if noun[:1] in "AEIOU" else "a"


def name_of(record: Any) -> str | None:
    """``metadata.name`` of a record, when it has a string one."""
    metadata = record.get("metadata") if isinstance(record, dict) else None
    name = metadata.get("name") if isinstance(metadata, dict) else None
    return name if isinstance(name, str) else None


class _QuickPlan(NamedTuple):
    """How :meth:`ValidationSession.passes` checks items of one apiVersion and kind."""

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
    #: :meth:`ValidationSession.passes_shared`.
    shell_quick: Check | None
    run_quick: Callable[[Mapping[str, Any], datetime | None], bool] | None
    #: Bundle members → their pointers (the members records_of() lists).
    members: Mapping[str, str]
    #: (member, run spec field referencing it).
    references: tuple[tuple[str, str], ...]
    #: The three above, by member, for :meth:`ValidationSession.passes`'s one lookup a
    #: member: its pointer, its (schema id, run spec field) if referenced, and how
    #: ``orjson.dumps`` of a bundle writes what comes before its value, ``,"member":``
    #: (:func:`_tail_proves`; for names that are ASCII identifiers, all of them: no
    #: closing quote precedes their first letter), else None.
    steps: Mapping[str, tuple[str, tuple[str, str] | None, bytes | None]]


class _SharedVerdict(NamedTuple):
    """What a session found for a shared tail's members (``SharedTail.checked``,
    :meth:`ValidationSession.passes_shared`): they passed in ``session`` under
    ``plan``, the plan of runs of ``api_version`` and ``kind``, beside a run whose
    references to them were ``claims`` (run spec field, value)."""

    session: ValidationSession
    plan: _QuickPlan
    claims: tuple[tuple[str, Any], ...]
    api_version: str
    kind: str


class ValidationSession:
    """Validates items one by one; see the module docstring for references."""

    def __init__(
        self,
        *,
        registry: SchemaRegistry | None = None,
        engine: ValidationEngine | None = None,
        strict_refs: bool = False,
        now: datetime | None = None,
        strict_json: bool = False,
        keep_values: bool = False,
    ) -> None:
        self.registry = registry or default_registry()
        self.engine = engine or default_engine(self.registry)
        #: The quick path's schema verdict: the engine's ``accepts`` where it has one
        #: (FastEngine: a refusal is not confirmed by the reference, which
        #: check_document then runs once for the problems), else ``is_valid``.
        self._accepts: Callable[[str, Any], bool] = (
            getattr(self.engine, "accepts", None) or self.engine.is_valid
        )
        self.strict_refs = strict_refs
        #: The caller promises every document came from :mod:`kernelindex_sdk.reading.intake`,
        #: whose values JCS can always canonicalize: the "not canonicalizable" check
        #: (for documents built in Python) cannot fire, and, unless ``strict_refs``
        #: needs them, the digests of runs are not computed (nothing references a
        #: run; a third of the digest work on a bundle). ``validate`` sets it.
        self.strict_json = strict_json
        self._skip_run_digests = strict_json and not strict_refs
        #: :meth:`passes` can answer: nothing is kept per item, and digests are exact.
        self._quick = strict_json and not strict_refs and not keep_values
        #: Referenced records by (schema, the digest their run claims) → (the record's
        #: bytes, its digest when valid against that schema, else None): see
        #: :meth:`_referenced`. The schema is part of the key: one record's bytes may
        #: stand in two members, valid in only one of them.
        self._records: dict[tuple[str, Any], tuple[bytes, str | None]] = {}
        self._plans: dict[tuple[str, str, bool], _QuickPlan] = {}
        #: Referenced records repeat across a stream: their digests, once each (strict
        #: intake's values only, whose bytes determine them; a pure speed-up).
        self._memo = DigestMemo() if strict_json else None
        #: Put each checked value in its :attr:`Item.value` (for ``compare``).
        self.keep_values = keep_values
        self._now = now
        self._known: dict[str, str] = {}
        #: Items that passed on their own but failed reference resolution in finish().
        self.invalidated = 0
        self._pending: list[_Pending] = []

    def prepare(self) -> None:
        """Compile every schema of the registry now rather than at first use: of a
        schema the engine takes apart (the bundle), its parts, which :meth:`passes`
        uses; the whole is compiled when an item first fails.

        Worker processes forked after this inherit the compiled validators instead of
        each compiling its own (``validate --jobs``); engines without compilation
        ignore it.
        """
        compiled = getattr(self.engine, "compiled", None)
        if compiled is not None:
            for entry in self.registry:
                # A schema taken apart is checked by its parts (see passes); the
                # whole one is needed only for the problems of an item that fails.
                if self._split(entry) is None:
                    compiled(entry.id)

    @property
    def now(self) -> datetime:
        return self._now or datetime.now(timezone.utc)

    def check_document(
        self, value: Any, *, source: str = "<input>", line: int | None = None
    ) -> list[Item]:
        """Validate every item of one parsed document.

        A document built in Python that is no strict JSON (an integer past Python's
        int-to-str limit, which a schema error message would print; nesting too deep
        for a recursive encoder) is one item whose problems
        :func:`~kernelindex_sdk.reading.intake.json_problems` locates, not a ``ValueError`` or
        ``RecursionError`` from inside: looked for only once checking has failed, so
        a document that checks pays nothing for it.
        """
        try:
            return [
                self.check_item(element, pointer=pointer, source=source, line=line)
                for pointer, element in split_document(value)
            ]
        except (RecursionError, ValueError, TypeError):
            problems = None if self.strict_json else json_problems(value)
            if not problems:  # strict intake's values are strict JSON: a bug, raised
                raise
            located = tuple([p._replace(source=source, line=line) for p in problems])
            return [Item(source, line, "", None, name_of(value), located)]

    @property
    def shared_tail_keys(self) -> tuple[str, ...]:
        """The members a JSON Lines line's shared tail starts with, for a
        :class:`~kernelindex_sdk.reading.sharedtails.TailMemo` whose documents go to
        :meth:`passes_shared`: those a run references, in the order a bundle lists
        them (the current version's: asking for the newest would list the versions'
        modules, which imports ``inspect`` at start-up). Empty where :meth:`passes`
        cannot answer."""
        return checks.bundle_members(CURRENT_API_VERSION)[1:] if self._quick else ()

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
        what this session found (``SharedTail.checked``, for the same plan), a later
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
            or known.session is not self
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
            elif not all(value.get(k, _ABSENT) is m for k, m in shared.members.items()):
                return self.passes(value)
        return self.passes(value, None, shared)

    def passes(
        self, value: Any, written: bytes | None = None, shared: SharedTail | None = None
    ) -> bool:
        """Whether :meth:`check_document` would find ``value`` to be one item with no
        problem: the quick answer for the common case, asked first by a pipeline that
        reports only problems (``validate`` without ``--strict-refs``). ``written`` is
        ``orjson.dumps(value)`` when the intake made it
        (:attr:`~kernelindex_sdk.reading.intake.Document.written`), else None.

        It runs what :meth:`check_item` runs on a valid item (routing, the schema, the
        semantic rules, the digests of a bundle's records against its run's
        references) but builds no item, pointer or record list. The records a bundle
        references repeat across a stream, so each distinct one is schema-checked and
        digested once (:meth:`_referenced`); a record the memo knows is proven to be
        the one remembered by an ``endswith`` of ``written`` (:meth:`_tail_proves`)
        rather than written again. False means only "not known to pass": the
        caller then runs :meth:`check_document`, whose answer stands
        (``tests/test_validation_quick.py`` checks that the two agree). A session that
        keeps something per item (``strict_refs``, ``keep_values``) or may be given
        values strict intake did not produce always answers False. ``shared``: see
        :meth:`passes_shared` (then ``written`` must be None).
        """
        if not self._quick or type(value) is not dict:
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
        rules, checked = plan.rules, plan.checked
        now = self._now  # None: a rule reads the clock if it needs to (most need not)
        if not bundle:
            return (
                rules is None
                or (checked is not None and kind not in checked)
                or not rules(value, "", now)
            )
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
            if known is not None and known.session is self and known.plan is plan:
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
        """That ``shared``'s members passed this session under ``plan``, with the
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
        split = self._split(entry) if bundle else None
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

    def _split(self, entry: SchemaEntry) -> Split | None:
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
        a memo hit then costs a comparison of bytes rather than a hash of them (~4k
        instructions a bundle). ``key`` None: not remembered (no orjson, a value it
        refuses, or a claim that is no key)."""
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

    def unreadable(self, error: IntakeError) -> Item:
        """The item an unreadable document stands for (:func:`unreadable_item`)."""
        return unreadable_item(error)

    def check_item(
        self, value: Any, *, pointer: str = "", source: str = "<input>", line: int | None = None
    ) -> Item:
        """Validate one record or bundle."""
        problems: list[Problem] = []
        bundle = is_bundle(value)
        head = value.get("run") if bundle else value
        kind: str | None = BUNDLE_KIND if bundle else None
        members = records_of(value, pointer)
        refs = self._refs(members)  # once: digests are the costly part of an item
        name = refs[0].name if refs and members[0][1] is head else name_of(head)
        if not isinstance(value, dict) or (
            not bundle and "apiVersion" not in value and "kind" not in value
        ):
            # Any other JSON (a package.json) is no record of an unknown kind.
            problems.append(
                Problem(
                    "not a kernelindex record: expected an object with apiVersion and kind,"
                    " or a bundle with a 'run'",
                    code="not-a-record",
                    pointer=pointer,
                )
            )
        else:
            api_version = head.get("apiVersion") if isinstance(head, dict) else None
            record_kind = head.get("kind") if isinstance(head, dict) else None
            try:
                # A bundle's run is routed first, so an unknown apiVersion or kind is
                # reported as the user wrote it.
                entry = self.registry.route(api_version, record_kind)
                if bundle:
                    entry = self.registry.bundle(api_version)
            except UnknownKind as error:
                at = f"{pointer}/run" if bundle else pointer
                problems.append(Problem(str(error), code="unknown-kind", pointer=at))
            else:
                kind = entry.kind
                # Not is_valid() first: for an invalid item the reference engine would
                # run twice, once for the verdict and once for the problems.
                found = self.engine.problems(entry.id, value, pointer)
                if found:
                    problems.extend(found)
                    # The semantic rules need a record of the schema's shape; whether
                    # the embedded records hash to the run's references does not, and a
                    # user fixing a name should not only then learn of a changed protocol.
                    if bundle and isinstance(head, dict) and isinstance(head.get("spec"), dict):
                        flagged = {p.pointer for p in found}
                        problems.extend(
                            p
                            for p in self._bundle_references(value, refs, pointer)
                            if p.pointer not in flagged
                        )
                        problems.sort(key=lambda p: p.pointer)
                else:
                    problems.extend(self._semantics(members, entry.api_version))
                    # Valid, yet no digest: a value JCS cannot represent slipped into an
                    # open map (only possible for documents built in Python).
                    if not self.strict_json:
                        problems.extend(
                            Problem(
                                "has no digest: a value in it cannot be canonicalized (RFC 8785)",
                                code="not-canonicalizable",
                                pointer=ref.pointer,
                            )
                            for ref in refs
                            if ref.digest is None
                        )
                    if bundle:
                        problems.extend(self._bundle_references(value, refs, pointer))
        located = (
            tuple([p._replace(source=source, line=line) for p in problems]) if problems else ()
        )
        if self.strict_refs:
            self._remember(value, refs, source, line, pointer, not located)
        kept = value if self.keep_values else None
        return Item(source, line, pointer, kind, name, located, refs, False, kept)

    def _refs(self, members: list[tuple[str, Mapping[str, Any]]]) -> tuple[RecordRef, ...]:
        refs = []
        for at, record in members:
            kind = str(record.get("kind"))
            if self._skip_run_digests and kind == "BenchmarkRun":
                refs.append(RecordRef(kind, name_of(record), None, at, later=record))
            else:
                found = safe_digest(record, self._memo)
                refs.append(RecordRef(kind, name_of(record), found, at))
        return tuple(refs)

    def _semantics(
        self, members: list[tuple[str, Mapping[str, Any]]], api_version: str
    ) -> list[Problem]:
        module = checks.for_version(api_version)
        if module is None:
            return []
        found: list[Problem] = []
        checked = getattr(module, "CHECKED_KINDS", None)
        for at, record in members:
            kind = record.get("kind")
            if checked is None or (type(kind) is str and kind in checked):
                # None: the rules read the clock themselves, and only if they need it.
                found.extend(module.check_record(record, at, self._now))
        return found

    def _bundle_references(
        self, bundle: Mapping[str, Any], refs: tuple[RecordRef, ...], pointer: str
    ) -> list[Problem]:
        """A bundle's run must reference exactly the records embedded beside it."""
        module = checks.for_version(bundle["run"]["apiVersion"])
        references: Mapping[str, tuple[str, str]] = getattr(module, "REFERENCES", {})
        prefix = len(pointer) + 1  # a member's pointer is ``<pointer>/<member>``
        by_member = {ref.pointer[prefix:]: ref for ref in refs}
        spec = bundle["run"]["spec"]
        problems = []
        for member, (_, field) in references.items():
            ref = by_member.get(member)
            embedded = ref.digest if ref is not None else None
            if embedded is not None and spec.get(field) != embedded:
                problems.append(
                    Problem(
                        f"{field} {spec.get(field)} does not match the embedded {member}"
                        f" (its digest is {embedded})",
                        code="digest-mismatch",
                        pointer=f"{pointer}/run/spec/{escape_token(field)}",
                    )
                )
        return problems

    def _remember(
        self,
        value: Any,
        refs: tuple[RecordRef, ...],
        source: str,
        line: int | None,
        pointer: str,
        valid: bool,
    ) -> None:
        for ref in refs:
            if ref.digest is not None:
                self._known.setdefault(ref.digest, ref.kind)
        run = value.get("run") if is_bundle(value) else value
        if not (isinstance(run, dict) and run.get("kind") == "BenchmarkRun"):
            return
        module = checks.for_version(str(run.get("apiVersion")))
        references: Mapping[str, tuple[str, str]] = getattr(module, "REFERENCES", {})
        spec = run.get("spec")
        if not isinstance(spec, dict):
            return
        run_at = f"{pointer}/run" if is_bundle(value) else pointer
        for ref_kind, field in references.values():
            target = spec.get(field)
            if isinstance(target, str):
                where = Problem(
                    "", code="unresolved-reference", pointer=f"{run_at}/spec/{field}",
                    source=source, line=line,
                )  # fmt: skip
                item = (source, line, pointer)
                self._pending.append(_Pending(target, ref_kind, field, where, item, valid))

    def take_references(self) -> tuple[list[tuple[str, str]], list[_Pending]]:
        """Hand over (and forget) what ``strict_refs`` has gathered since the last call.

        The digests seen, as ``(digest, kind)`` in order, and the references still to
        resolve: for merging the work of several sessions with :meth:`add_references`
        (``kernelindex validate --jobs``).
        """
        known, pending = list(self._known.items()), self._pending
        self._known, self._pending = {}, []
        return known, pending

    def add_references(self, known: Iterable[tuple[str, str]], pending: Iterable[_Pending]) -> None:
        """Merge what another session's :meth:`take_references` handed over, in order."""
        for found, kind in known:
            self._known.setdefault(found, kind)
        self._pending.extend(pending)

    def finish(self) -> list[Problem]:
        """Reference problems found once every record has been seen (``strict_refs``).

        :attr:`invalidated` then counts the items that had passed until now.
        """
        problems, newly_invalid = resolve_references(self._pending, self._known.get)
        self._pending.clear()
        self.invalidated = len(newly_invalid)
        return problems


def resolve_references(
    pending: Iterable[_Pending], kind_of: Callable[[str], str | None]
) -> tuple[list[Problem], set[tuple[str, int | None, str]]]:
    """The problems of remembered references (``strict_refs``), in their order, once
    every record has been seen (``kind_of``: the kind of the record with a digest, or
    None when none was given), and the items (source, line, pointer) they make
    invalid that were valid until then.

    One definition for :meth:`ValidationSession.finish` and for callers that keep
    the references more compactly than a session does (``kernelindex store add``).
    """
    problems = []
    newly_invalid: set[tuple[str, int | None, str]] = set()
    for entry in pending:
        found = kind_of(entry.digest)
        if found is None:
            message = f"{entry.field} {entry.digest} refers to no {entry.kind} given"
        elif found != entry.kind:
            message = (
                f"{entry.field} {entry.digest} refers to {_article(found)} {found},"
                f" not {_article(entry.kind)} {entry.kind}"
            )
        else:
            continue
        at = entry.problem_at
        problems.append(at._replace(message=message))
        if entry.item_valid:
            newly_invalid.add(entry.item)
    return problems, newly_invalid


def validate(value: Any, *, source: str = "<input>", strict_refs: bool = False) -> list[Problem]:
    """Every problem of one parsed document (record, bundle or array); [] when valid."""
    session = ValidationSession(strict_refs=strict_refs)
    problems = [p for item in session.check_document(value, source=source) for p in item.problems]
    return problems + session.finish()
