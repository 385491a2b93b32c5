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
from typing import TYPE_CHECKING, Any, NamedTuple

from kernelindex_sdk import checks
from kernelindex_sdk.base.frozenvalue import FrozenValue
from kernelindex_sdk.base.pointers import escape_token
from kernelindex_sdk.canonical import DigestMemo, safe_digest
from kernelindex_sdk.errors import IntakeError, Problem, UnknownKind
from kernelindex_sdk.schema.registry import BUNDLE_KIND, SchemaRegistry, default_registry
from kernelindex_sdk.validating.engine import ValidationEngine
from kernelindex_sdk.validating.fastengine import default_engine

if TYPE_CHECKING:
    from kernelindex_sdk.reading.sharedtails import SharedTail
    from kernelindex_sdk.validating.quick import QuickPass


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

    A named tuple, not a dataclass: a frozen dataclass compiles its methods from source
    when its class is created at import, a named tuple far less, and start-up is part of
    ``validate``'s time.
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


def _article(noun: str) -> str:
    return "an" if noun[:1] in "AEIOU" else "a"


def name_of(record: Any) -> str | None:
    """``metadata.name`` of a record, when it has a string one."""
    metadata = record.get("metadata") if isinstance(record, dict) else None
    name = metadata.get("name") if isinstance(metadata, dict) else None
    return name if isinstance(name, str) else None


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
        self.strict_refs = strict_refs
        #: The caller promises every document came from :mod:`kernelindex_sdk.reading.intake`,
        #: whose values JCS can always canonicalize: the "not canonicalizable" check
        #: (for documents built in Python) cannot fire, and, unless ``strict_refs``
        #: needs them, the digests of runs are not computed (nothing references a
        #: run, and its digest is much of a bundle's digest work). ``validate`` sets it.
        self.strict_json = strict_json
        self._skip_run_digests = strict_json and not strict_refs
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
        self.quick_pass = self._quick_pass(strict_json and not strict_refs and not keep_values)
        # The quick pass's own methods, bound on this instance: a pipeline asks them once
        # a line, and this class's methods of the same names would add a call to each.
        vars(self).update(
            passes=self.quick_pass.passes, passes_shared=self.quick_pass.passes_shared
        )

    def _quick_pass(self, enabled: bool) -> QuickPass:
        """The session's quick verdicts (:class:`~kernelindex_sdk.validating.quick.QuickPass`),
        which answer only where nothing is kept per item and digests are exact
        (``enabled``). The schema verdict they ask is the engine's ``accepts`` where it
        has one (FastEngine: a refusal is not confirmed by the reference, which
        :meth:`check_document` then runs once for the problems), else ``is_valid``."""
        # Loaded with the first session: ``digest`` reads this module but runs none.
        from kernelindex_sdk.validating.quick import QuickPass

        accepts: Callable[[str, Any], bool] = (
            getattr(self.engine, "accepts", None) or self.engine.is_valid
        )
        return QuickPass(
            self.registry, self.engine, accepts, enabled=enabled, now=self._now, memo=self._memo
        )

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
                if self.quick_pass.split(entry) is None:
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
            from kernelindex_sdk.reading.intake import json_problems

            problems = None if self.strict_json else json_problems(value)
            if not problems:  # strict intake's values are strict JSON: a bug, raised
                raise
            located = tuple([p._replace(source=source, line=line) for p in problems])
            return [Item(source, line, "", None, name_of(value), located)]

    @property
    def shared_tail_keys(self) -> tuple[str, ...]:
        """The members a JSON Lines line's shared tail starts with, for a tail memo whose
        documents go to :meth:`passes_shared` (empty where :meth:`passes` cannot answer):
        :attr:`QuickPass.shared_tail_keys
        <kernelindex_sdk.validating.quick.QuickPass.shared_tail_keys>`."""
        return self.quick_pass.shared_tail_keys

    def passes(
        self, value: Any, written: bytes | None = None, shared: SharedTail | None = None
    ) -> bool:
        """Whether :meth:`check_document` would find ``value`` to be one item with no
        problem, answered without building it; False means only "not known to pass":
        :meth:`QuickPass.passes <kernelindex_sdk.validating.quick.QuickPass.passes>`.
        (A session answers with that method itself, bound in ``__init__``.)"""
        return self.quick_pass.passes(value, written, shared)

    def passes_shared(self, value: Any, shared: SharedTail) -> bool:
        """:meth:`passes` for a line a tail memo read with a shared tail, or for its head
        alone: :meth:`QuickPass.passes_shared
        <kernelindex_sdk.validating.quick.QuickPass.passes_shared>`. (A session answers
        with that method itself, bound in ``__init__``.)"""
        return self.quick_pass.passes_shared(value, shared)

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
