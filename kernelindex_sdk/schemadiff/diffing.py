"""One diff from start to verdict: match kinds, normalize, walk, prove, report.

The steps, each in its own module: the two sides are read (:mod:`.inputs`) and their
kinds matched by apiVersion and kind; each pair is brought to normal form
(:mod:`.normal`) and walked in each direction the mode asks for (:mod:`.walk`); a
kernelindex record kind is also checked for fields that cross the digest's boundary
(below); the policy lets through what it lets through; and every remaining claim is
proven by a witness (:mod:`.witness`) or reported as undecided.

``DIGEST_SCOPE_CHANGED``: a record's digest covers ``apiVersion``, ``kind`` and
``spec``, nothing else. A member that leaves the top level or ``metadata`` and appears
under ``spec`` with the same name (or the reverse) has moved across that boundary, and
every digest of the kind changes with it; so does a change to the ``spec`` member
itself (added, removed, made required or optional, retyped). Each such change is
reported under this rule too, with the witness of the property change under it, and
no policy excuses it.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Literal
from urllib.parse import urldefrag

from kernelindex_sdk.base.timebox import armed
from kernelindex_sdk.schema.registry import BUNDLE_KIND, SchemaEntry, SchemaRegistry
from kernelindex_sdk.schemadiff._forms import Norm, Undecidable, Where
from kernelindex_sdk.schemadiff.inputs import SchemaInputError, SchemaSet, load, match
from kernelindex_sdk.schemadiff.normal import Normalizer, UnresolvableRef
from kernelindex_sdk.schemadiff.report import DiffReport, Undecided, Violation
from kernelindex_sdk.schemadiff.rules import DIRECTIONS, MODES, POLICIES, Direction, rule_id
from kernelindex_sdk.schemadiff.values import Builder, Checks
from kernelindex_sdk.schemadiff.walk import Doubt, Finding, Walk, instance_pointer, member_path
from kernelindex_sdk.schemadiff.witness import Verifier

__all__ = ["diff"]

Input = str | os.PathLike[str] | SchemaRegistry | SchemaSet
Side = Literal["old", "new"]
#: Why a schema nested (or chained through ``$ref``) beyond what Python's recursion
#: limit lets the diff follow is not compared.
_TOO_DEEP = "nested deeper than Python's recursion limit lets it be compared"
#: Relations a change to the ``spec`` member itself shows up as.
_SPEC_CHANGES = frozenset({"closed-property", "open-property", "required", "type"})


def diff(
    old: Input,
    new: Input,
    *,
    mode: str = "full",
    policy: str = "strict",
    format_assertion: bool = False,
) -> DiffReport:
    """Compare two sets of schemas (see :mod:`kernelindex_sdk.schemadiff`).

    ``format_assertion``: read ``format`` as an assertion (a value of another format is
    refused, where the reference engine has a checker for it) rather than as the
    annotation every dialect reads it as by default (see :mod:`.normal`).

    Raises :class:`~.inputs.SchemaInputError` when a side cannot be read, a ``$ref``
    points at nothing in a document given, or nothing is compared (exit 2),
    ``ValueError`` for an unknown mode or policy. A ``$ref`` into a document not given
    is an external schema (:mod:`.normal`), never fetched: see
    :attr:`~.report.DiffReport.assumed_unchanged`. Each step that may run without end
    (matching a regex, judging a record) is bounded in time (:mod:`kernelindex_sdk.
    timebox`, in the main thread): one that runs out leaves its claim undecided.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}, not {policy!r}")
    sides = {
        "old": old if isinstance(old, SchemaSet) else load(old),
        "new": new if isinstance(new, SchemaSet) else load(new),
    }
    with armed():
        return _Diff(sides, DIRECTIONS[mode], policy, format_assertion).run(mode)


@dataclasses.dataclass(eq=False)
class _Diff:
    """One diff of two sides, in the directions of its mode: what it found so far."""

    sides: dict[str, SchemaSet]
    directions: tuple[Direction, ...]
    policy: str
    formats: bool

    def __post_init__(self) -> None:
        sides, formats = self.sides, self.formats
        self.builder = Builder(Checks(formats=formats))
        self.verifier = Verifier(self.builder, sides["old"].registry, sides["new"].registry)
        self.normalizers = {
            name: Normalizer(side.documents, formats=formats) for name, side in sides.items()
        }
        self.violations: list[Violation] = []
        self.undecided: list[Undecided] = []
        self.files = {
            urldefrag(e.id)[0]: e.path for side in sides.values() for e in side.registry.all_entries
        }

    def run(self, mode: str) -> DiffReport:
        pairs, removed, added = match(self.sides["old"], self.sides["new"])
        if not (pairs or removed or added):
            raise SchemaInputError(
                f"nothing to compare: no kind of {self.sides['old'].label} or"
                f" {self.sides['new'].label} is a schema of a kind (properties.kind.const)"
            )
        skip = frozenset((_document(o), _document(n)) for o, n in pairs)
        kinds = []
        for old, new in pairs:
            kind = old.kind if old.kind == new.kind else f"{old.kind} -> {new.kind}"
            kinds.append(kind)
            self._pair(kind, {"old": old, "new": new}, skip)
        lone: tuple[tuple[Direction, Side, list[SchemaEntry]], ...] = (
            ("backward", "old", removed),
            ("forward", "new", added),
        )
        for direction, name, entries in lone:
            for entry in entries:
                kinds.append(entry.kind)
                if direction in self.directions:
                    self._lone_kind(direction, name, entry)
        order = {"backward": 0, "forward": 1}
        unique = {(v.rule, v.mode, v.kind, v.path, v.old, v.new): v for v in self.violations}
        violations = sorted(
            unique.values(),
            key=lambda v: (v.kind, order[v.mode], v.path, v.rule, v.old or "", v.new or ""),
        )
        undecided = sorted(dict.fromkeys(self.undecided), key=lambda u: (u.kind, u.path, u.reason))
        # An external schema both sides reach is taken to be one schema on both.
        met = [normalizer.externals for normalizer in self.normalizers.values()]
        assumed = tuple(sorted(met[0] & met[1]))
        return DiffReport(
            mode,
            self.policy,
            tuple(kinds),
            tuple(violations),
            tuple(undecided),
            assumed,
            self.formats,
        )

    # ------------------------------------------------------------------ one pair

    def _root(self, name: str, entry: SchemaEntry) -> Norm:
        try:
            return self.normalizers[name].document(_document(entry))
        except UnresolvableRef as error:
            raise SchemaInputError(f"{self.sides[name].label}: {error}") from None
        except RecursionError:
            raise Undecidable(Where(_document(entry)), _TOO_DEEP) from None

    def _pair(
        self, kind: str, entries: dict[str, SchemaEntry], skip: frozenset[tuple[str, str]]
    ) -> None:
        roots: dict[str, Norm] = {}
        for name, entry in entries.items():
            try:
                roots[name] = self._root(name, entry)
            except Undecidable as error:
                where = self._label(error.where)
                old, new = (where, None) if name == "old" else (None, where)
                self.undecided.append(Undecided(kind, "", old, new, error.reason))
        if len(roots) < 2:
            return
        findings: list[Finding] = []
        doubts: list[Doubt] = []
        moves: set[tuple[str, tuple[str, ...]]] = set()
        for direction in self.directions:
            a, b = ("old", "new") if direction == "backward" else ("new", "old")
            pairs = skip if direction == "backward" else frozenset((y, x) for x, y in skip)
            walk = Walk(direction, self.builder, pairs)
            try:
                walk.run(roots[a], roots[b])
            except RecursionError:  # what was found before still stands, to be proven
                walk.doubt(None, None, (), f"{_TOO_DEEP}: the rest of this kind")
            except Undecidable as error:  # too large to go on (see Walk.node)
                walk.doubt(error.where, None, (), f"{error.reason}: the rest of this kind")
            findings += walk.findings
            doubts += walk.doubts
            moves |= walk.moves
        if _is_record_kind(entries["old"], roots):
            findings += self._digest_scope(findings, moves, doubts)
        if self.policy == "lenient":
            findings = [f for f in findings if not f.excusable]
        for finding in sorted(findings, key=lambda f: f.fallback):
            if finding.fallback and self._shown_below(kind, finding):
                continue
            self._prove(kind, finding, roots, entries)
        for doubt in doubts:
            self.undecided.append(
                Undecided(
                    kind,
                    instance_pointer(doubt.path),
                    self._label(doubt.old),
                    self._label(doubt.new),
                    doubt.reason,
                    doubt.direction,
                )
            )

    def _shown_below(self, kind: str, finding: Finding) -> bool:
        """Whether a violation already proven, in the finding's direction, bites at or
        below its place: a fallback claim (a constraint also compared part by part,
        whose part's claim that is) then adds nothing."""
        where = instance_pointer(finding.path)
        return any(
            v.kind == kind
            and v.mode == finding.direction
            and (v.path == where or v.path.startswith(where + "/"))
            for v in self.violations
        )

    def _prove(
        self, kind: str, finding: Finding, roots: dict[str, Norm], entries: dict[str, SchemaEntry]
    ) -> None:
        a, b = ("old", "new") if finding.direction == "backward" else ("new", "old")
        rule = rule_id(finding.relation, finding.direction)
        where = instance_pointer(finding.path)
        record = self.verifier.witness(
            roots[a], finding.path, finding.leaf, (a, entries[a]), (b, entries[b])
        )
        old, new = self._label(finding.old), self._label(finding.new)
        if record is None:
            because = f" ({finding.doubt} is not decided)" if finding.doubt else ""
            if self.verifier.exhausted:
                because += " (the search for one gave up: too many alternatives)"
            if self.verifier.unjudged is not None:
                because += f" (a candidate could not be judged: {self.verifier.unjudged})"
            if self.verifier.external is not None:
                because += (
                    f" (a record built reaches the external schema"
                    f" {self._external(self.verifier.external)}, which is not among the"
                    " schemas given: no witness rests on it)"
                )
            self.undecided.append(
                Undecided(
                    kind,
                    where,
                    old,
                    new,
                    f"{rule}: {finding.message}, but no record shows it{because}",
                    finding.direction,
                )
            )
            return
        self.violations.append(
            Violation(
                rule,
                finding.direction,
                kind,
                where,
                old,
                new,
                finding.message,
                record,
                "old" if a == "old" else "new",
                self._file(finding.old),
                self._file(finding.new),
            )
        )

    def _lone_kind(self, direction: Direction, name: Side, entry: SchemaEntry) -> None:
        """A kind one side has and the other has not: any record of it breaks."""
        rule = rule_id("kind", direction)
        other = "new" if name == "old" else "old"
        try:
            root = self._root(name, entry)
        except Undecidable as error:
            self.undecided.append(Undecided(entry.kind, "", None, None, f"{rule}: {error.reason}"))
            return
        record = self.verifier.witness(root, (), None, (name, entry), None)
        place = self._label(Where(_document(entry)))
        old, new = (place, None) if name == "old" else (None, place)
        message = f"{other} has no schema for {entry.api_version} {entry.kind}"
        if record is None:
            self.undecided.append(
                Undecided(
                    entry.kind,
                    "",
                    old,
                    new,
                    f"{rule}: {message}, but no record of it could be built"
                    + (
                        f" (a candidate could not be judged: {self.verifier.unjudged})"
                        if self.verifier.unjudged is not None
                        else ""
                    ),
                    direction,
                )
            )
            return
        files = (self._file(Where(_document(entry))), None)
        old_file, new_file = files if name == "old" else files[::-1]
        self.violations.append(
            Violation(
                rule,
                direction,
                entry.kind,
                "",
                old,
                new,
                message,
                record,
                name,
                old_file,
                new_file,
            )
        )

    def _digest_scope(
        self,
        findings: list[Finding],
        moves: set[tuple[str, tuple[str, ...]]],
        doubts: list[Doubt],
    ) -> list[Finding]:
        """``DIGEST_SCOPE_CHANGED`` findings (see the module's doc)."""
        extra: list[Finding] = []
        removed = sorted(p for event, p in moves if event == "removed")
        added = sorted(p for event, p in moves if event == "added")
        for gone in removed:
            for came in added:
                if gone[-1] != came[-1] or {_scope(gone), _scope(came)} != {"inside", "outside"}:
                    continue
                into = _scope(came) == "inside"
                message = (
                    f"member {came[-1]!r} moved {'into' if into else 'out of'} spec"
                    f" ({_pointer(gone)} -> {_pointer(came)}): every digest of this kind changes"
                )
                related = [
                    f
                    for f in findings
                    if member_path(f.path) in (gone, came)
                    and f.relation in ("closed-property", "open-property")
                ]
                extra += _as_scope_change(related, message)
                if not related:
                    doubts.append(
                        Doubt(None, None, None, (), f"{message}, but no record tells the two apart")
                    )
        at_spec = [
            f for f in findings if member_path(f.path) == ("spec",) and f.relation in _SPEC_CHANGES
        ]
        extra += _as_scope_change(at_spec, "the spec member itself changed: every digest changes")
        return extra

    def _external(self, ref: str) -> str:
        """The absolute URI of an external schema the engine names by its ``$ref`` as
        written (relative, perhaps), where the normal forms met one it ends like."""
        met = set().union(*(n.externals for n in self.normalizers.values()))
        return next((u for u in sorted(met) if u == ref or u.endswith("/" + ref)), ref)

    def _label(self, where: Where | None) -> str | None:
        return None if where is None else where.label()

    def _file(self, where: Where | None) -> str | None:
        """The schema file a place is in, as given (for annotations on a pull request)."""
        path = None if where is None else self.files.get(where.uri)
        if path is None:
            return None
        try:
            return str(path.resolve().relative_to(Path.cwd()))
        except ValueError:
            return str(path)


def _as_scope_change(findings: Iterable[Finding], message: str) -> list[Finding]:
    return [
        dataclasses.replace(f, relation="digest-scope", excusable=False, message=message)
        for f in findings
    ]


def _scope(members: tuple[str, ...]) -> str | None:
    """``inside`` the digest (under spec), ``outside`` it (top level, metadata), or None."""
    if len(members) >= 2 and members[0] == "spec":
        return "inside"
    if (len(members) == 1 and members[0] not in ("apiVersion", "kind", "spec")) or (
        len(members) == 2 and members[0] == "metadata"
    ):
        return "outside"
    return None


def _pointer(members: tuple[str, ...]) -> str:
    return "/" + "/".join(members)


def _document(entry: SchemaEntry) -> str:
    return urldefrag(entry.id)[0]


def _is_record_kind(entry: SchemaEntry, roots: dict[str, Norm]) -> bool:
    """A kernelindex record kind: a kind (not a bundle) whose records have a ``spec``."""
    if entry.kind == BUNDLE_KIND:
        return False
    return any(
        "spec" in branch.keywords.get("properties", {})
        for root in roots.values()
        for branch in root.branches
        if branch.type == "object"
    )
