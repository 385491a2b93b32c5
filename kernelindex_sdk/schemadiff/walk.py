"""The structural diff: two normal forms walked in parallel, in one direction.

:class:`Walk` looks for values the *accepting* side ``A`` takes and the *rejecting*
side ``B`` refuses (backward: A is OLD; forward: A is NEW), keyword by keyword on the
normal forms of :mod:`~kernelindex_sdk.schemadiff.normal`:

* **types**, per class of value (null, boolean, string, integer, fractional number,
  array, object): a class A admits and B does not is a ``type`` finding;
* **enumerations**: a finite side (an ``enum``, a boolean, null) is decided by trying
  every value against the other side's own schema — exact;
* **bounds** (lengths, counts, minimum/maximum with integer awareness, ``multipleOf``,
  ``pattern``, ``format``, ``uniqueItems``) compared as numbers or sets;
* **objects**: each member by name (its own schema, else ``additionalProperties``),
  ``required``, ``additionalProperties``, ``propertyNames``, member counts;
* **arrays**: ``items``, counts, ``uniqueItems``;
* **unions** (several branches of one type in B: an ``anyOf``, a discriminated
  ``oneOf``): each branch of A must be covered by one of B's, matched by their
  discriminating members and tried one by one (:meth:`Walk._union`);
* **opaque** constraints (``oneOf``, ``not``, ``if``...): B may keep or drop any of
  A's; one B has and A has not is a :class:`Doubt` — never a silent pass.

A finding is a *claim* with a recipe for its witness: the path from the record's
root to the change and the leaf that realizes it there. It becomes a violation only
once :mod:`~kernelindex_sdk.schemadiff.witness` has built that record and the
reference engine has judged it; a claim no record bears out is a doubt (exit 3), so a
heuristic here can cost a "cannot decide", never a wrong verdict.

**Recursive schemas** (a ``$ref`` back into itself) are compared by co-induction: a
pair of recursion targets met again below itself is assumed to hold there. A record
is finite, so whatever breaks below the second meeting breaks at the first, which is
walked in full.

Why this is sound for "compatible": every keyword of B is matched by an equal or
stronger keyword of A in the same class of values, and B's opaque constraints are
among A's; then every value A accepts, B accepts.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from functools import partial
from typing import Any

from kernelindex_sdk.base.pointers import escape_token
from kernelindex_sdk.schemadiff._forms import (
    Branch,
    Norm,
    Opaque,
    Undecidable,
    Where,
    canonical,
    equivalent,
    external,
    externals,
    is_false,
    is_true,
    resolved,
)
from kernelindex_sdk.schemadiff.normal import Unmatched, member_schema, true_norm, value_types
from kernelindex_sdk.schemadiff.patterns import names, universal
from kernelindex_sdk.schemadiff.rules import Direction
from kernelindex_sdk.schemadiff.unions import discriminators, sharing, value_key
from kernelindex_sdk.schemadiff.values import ANY_VALUES, Absent, Builder, Leaf, Step, Values

__all__ = ["Doubt", "Finding", "Walk", "instance_pointer", "member_path"]

#: The classes of JSON values a branch type covers.
CLASSES = ("null", "boolean", "string", "integer", "fraction", "array", "object")
_CLASS_NAMES = {"fraction": "fractional number"}
#: Candidates a leaf looks through for one its rejecting side refuses.
_LOOK = 80
#: Branches of a union tried, at most, for one branch of the other side.
_TRIALS = 16
#: Branches of a union, at most, each proven to share a value with one branch of the
#: other side or not (:func:`~.unions.sharing`) before they are tried.
_PROVED = 64

#: Pairs of a pattern only B has and one of A's compared, at most (each looks for a
#: name both regexes match): beyond, a doubt, not a walk quadratic in the patterns.
_PATTERN_PAIRS = 64

#: Pairs of nodes one walk compares, and claims it makes, at most: past either it is
#: given up (:class:`~.normal.Undecidable`; what it claimed is still proven).
STEPS = 200_000
CLAIMS = 10_000

_NOWHERE = Where("")
_ANY_STRING = Norm((Branch("string", {}, _NOWHERE),), _NOWHERE)


class _Sides:
    """The accepting and the rejecting side's places, read as OLD's and NEW's: backward,
    OLD accepts; forward, NEW does."""

    __slots__ = ()
    direction: Direction | None
    accepting: Where | None
    rejecting: Where | None

    @property
    def old(self) -> Where | None:
        return self.rejecting if self.direction == "forward" else self.accepting

    @property
    def new(self) -> Where | None:
        return self.accepting if self.direction == "forward" else self.rejecting


@dataclass(frozen=True, slots=True)
class Finding(_Sides):
    """A claim: records at ``path`` (with ``leaf`` there) that A accepts and B rejects."""

    relation: str
    direction: Direction
    #: Where the accepting and the rejecting side say what they say.
    accepting: Where | None
    rejecting: Where | None
    path: tuple[Step, ...]
    leaf: Leaf
    message: str
    #: A closed object's optional member: ``--policy lenient`` lets it pass.
    excusable: bool = False
    #: Why no witness means "cannot decide" rather than "compatible" (for the report).
    doubt: str = ""
    #: Claimed besides the claims of its parts (an if/then/else compared part by
    #: part): proven only where none of those is (see :mod:`.diffing`).
    fallback: bool = False


@dataclass(frozen=True, slots=True)
class Doubt(_Sides):
    """A place the walk cannot decide (exit 3), and why."""

    direction: Direction | None
    accepting: Where | None
    rejecting: Where | None
    path: tuple[Step, ...]
    reason: str


def instance_pointer(path: Iterable[Step]) -> str:
    """The RFC 6901 pointer into a record that ``path`` leads to."""
    parts = []
    for step in path:
        if step.op == "prop":
            parts.append("/" + escape_token(step.name))
        elif step.op == "item":
            parts.append("/0")
    return "".join(parts)


def member_path(path: Iterable[Step]) -> tuple[str, ...]:
    """The member names along ``path`` (what a field's move is recognized by)."""
    return tuple(step.name for step in path if step.op == "prop")


#: What a trial walk left: findings, doubts, moves, assumed pairs (:meth:`Walk._trial`).
_Trial = tuple[
    list["Finding"],
    list["Doubt"],
    set[tuple[str, tuple[str, ...]]],
    set[tuple[int, int, frozenset[str]]],
]


class Walk:
    """One direction's walk over a pair of kinds; see the module's doc."""

    def __init__(
        self, direction: Direction, builder: Builder, skip: frozenset[tuple[str, str]] = frozenset()
    ) -> None:
        self.direction = direction
        self.builder = builder
        self.checks = builder.checks
        self.a_name, self.b_name = ("old", "new") if direction == "backward" else ("new", "old")
        #: Pairs of document roots (A's, B's) compared as kinds of their own: a bundle
        #: reaching the run's schema does not compare it a second time.
        self.skip = skip
        self.findings: list[Finding] = []
        self.doubts: list[Doubt] = []
        #: Pairs of recursion targets (A's, B's, the classes compared) being compared or
        #: compared: met again below themselves, they are assumed to hold (co-induction).
        self.assumed: set[tuple[int, int, frozenset[str]]] = set()
        #: ("added" | "removed", member path): declared members that appear or go.
        self.moves: set[tuple[str, tuple[str, ...]]] = set()
        #: Pairs of nodes walked (at most STEPS, see :meth:`node`).
        self.steps = 0

    def run(self, a: Norm, b: Norm) -> None:
        self.node(a, b, (), top=True)

    # ------------------------------------------------------------------ reporting

    def find(
        self,
        relation: str,
        accepting: Where | None,
        rejecting: Where | None,
        path: tuple[Step, ...],
        leaf: Leaf,
        message: str,
        *,
        excusable: bool = False,
        doubt: str = "",
        fallback: bool = False,
    ) -> None:
        self.findings.append(
            Finding(
                relation,
                self.direction,
                accepting,
                rejecting,
                path,
                leaf,
                message,
                excusable,
                doubt,
                fallback,
            )
        )

    def doubt(
        self, accepting: Where | None, rejecting: Where | None, path: tuple[Step, ...], reason: str
    ) -> None:
        self.doubts.append(Doubt(self.direction, accepting, rejecting, path, reason))

    def _refused(self, b: Norm | Branch, values: Iterable[Any]) -> Iterator[Any]:
        """The first of ``values`` that ``b`` refuses (a leaf's candidates)."""
        return (v for v in itertools.islice(values, _LOOK) if not self.checks.accepts(b, v))

    def _beyond(self, narrow: Norm, wide: Norm) -> Values:
        """Members ``wide`` allows and ``narrow`` refuses: values built for ``wide``,
        then any value it accepts."""
        return Values(
            lambda: self._refused(
                narrow,
                itertools.chain(
                    self.builder.build(wide),
                    (v for v in ANY_VALUES if self.checks.accepts(wide, v)),
                ),
            )
        )

    # ------------------------------------------------------------------ nodes

    def node(
        self,
        a: Norm,
        b: Norm,
        path: tuple[Step, ...],
        classes: Iterable[str] = CLASSES,
        *,
        top: bool = False,
    ) -> None:
        self.steps += 1
        if self.steps > STEPS or len(self.findings) > CLAIMS:
            # A schema that reaches one definition from two places at every level is a
            # tree exponential in its depth, walked place by place: given up, undecided.
            raise Undecidable(
                a.where,
                f"more than {STEPS} pairs of subschemas walked or {CLAIMS} claims made",
            )
        if a.key == b.key:
            return
        if not top and a.root and b.root and (a.root, b.root) in self.skip:
            return
        a, b = resolved(a), resolved(b)
        if a.recursive or b.recursive:
            # A record is finite: a pair met again below itself is met on a smaller
            # value, and whatever breaks there breaks at the first meeting, which is
            # walked in full. So the pair may be assumed to hold here.
            # By branches: a document's root is a copy of the node its $ref leads to.
            pair = (id(a.branches), id(b.branches), frozenset(classes))
            if pair in self.assumed:
                return
            self.assumed.add(pair)
        groups: dict[
            tuple[tuple[int, ...], tuple[int, ...]], tuple[list[Branch], list[Branch], set[str]]
        ] = {}
        for cls in classes:
            xs = [x for x in a.branches if _covers(x.type, cls)]
            if not xs:
                continue
            ys = [y for y in b.branches if _covers(y.type, cls)]
            key = (tuple(map(id, xs)), tuple(map(id, ys)))
            groups.setdefault(key, (xs, ys, set()))[2].add(cls)
        for xs, ys, found in groups.values():
            for x in xs:
                here = (*path, Step("type", x.type))
                if any(x.key == y.key for y in ys):
                    continue
                start = len(self.findings)
                if not ys:
                    self._type(x, b, here, frozenset(found))
                elif len(ys) == 1:
                    self.branch(x, b, ys[0], here, frozenset(found))
                else:
                    self._union(x, b, ys, here, frozenset(found))
                if externals(x):
                    self._unwitnessable(x, start)

    def _union(
        self,
        x: Branch,
        b: Norm,
        ys: list[Branch],
        path: tuple[Step, ...],
        classes: frozenset[str],
    ) -> None:
        """One branch of A against several of B (an ``anyOf``, a discriminated ``oneOf``):
        covered when one of B's branches alone accepts everything ``x`` does. The
        branches ``x``'s discriminating members rule out (an index tells), and those
        proven to share no value with it (:func:`~.unions.sharing`), are not tried; of
        the rest, each is walked as a trial, and the first that finds nothing decides. When none
        does, the trial that found least is walked for real: its claims are checked
        against all of B by the witness (a record another branch accepts is no
        witness), so they are violations or undecided, never wrongly either."""
        candidates = _matching(x, ys)
        if not candidates:
            self._unmatched(x, b, ys, path)
            return
        rivals = len(candidates)
        if 1 < len(candidates) <= _PROVED:
            # A branch proven to share no value with x covers none of it: not tried. None
            # left: B rejects every value of x, and a trial against any shows where.
            shared = sharing(x, candidates)
            rivals = len(shared)
            candidates = shared or candidates[:_TRIALS]
        if len(candidates) > _TRIALS:
            self.doubt(
                x.where,
                b.where,
                path,
                f"{len(candidates)} {x.type} branches of {self.b_name} may match"
                f" {self.a_name}'s (no discriminating member tells them apart): more than"
                f" {_TRIALS} are not tried",
            )
            return
        best: tuple[int, _Trial] | None = None
        for y in candidates:
            found, trial = self._trial(x, b, y, path, classes)
            if found == 0:
                return
            if best is None or found < best[0]:
                best = (found, trial)
        assert best is not None
        # The trial that found least, kept as if walked for real: it started from the
        # state this walk is in now (each failed trial undid its effects), and the walk
        # is deterministic, so walking it again would find the same. Not walking it again
        # keeps nested unions from doubling their work at every level.
        start = len(self.findings)
        findings, doubts, self.moves, self.assumed = best[1]
        self.findings += findings
        self.doubts += doubts
        if rivals > 1:
            because = (
                f"whether another of {self.b_name}'s {len(candidates)} {x.type} branches that"
                f" may match accepts what {self.a_name}'s does"
            )
            self.findings[start:] = [
                f if f.doubt else dataclasses.replace(f, doubt=because)
                for f in self.findings[start:]
            ]

    def _trial(
        self, x: Branch, b: Norm, y: Branch, path: tuple[Step, ...], classes: frozenset[str]
    ) -> tuple[int, _Trial]:
        """How many claims and doubts walking ``x`` against ``y`` makes, and what the walk
        left (its findings, doubts, moves and assumptions), undone here; kept when it
        found nothing (the pairs it assumed hold)."""
        findings, doubts = len(self.findings), len(self.doubts)
        moves, assumed = set(self.moves), set(self.assumed)
        self.branch(x, b, y, path, classes)
        found = len(self.findings) - findings + len(self.doubts) - doubts
        kept: _Trial = (self.findings[findings:], self.doubts[doubts:], self.moves, self.assumed)
        del self.findings[findings:], self.doubts[doubts:]
        if found:
            self.assumed = assumed
        self.moves = moves
        return found, kept

    def _unmatched(self, x: Branch, b: Norm, ys: list[Branch], path: tuple[Step, ...]) -> None:
        """``x`` requires a discriminating member to hold values no branch of B allows
        there: each such value is a claim that B rejects what A accepts."""
        mine = discriminators(x)
        for name in sorted(mine):
            theirs = set().union(*(discriminators(y).get(name, set()) for y in ys))
            if any(name not in discriminators(y) for y in ys) or not mine[name] - theirs:
                continue
            sub: Norm = x.keywords["properties"][name]
            values = [v for br in sub.branches for v in br.keywords["enum"]]
            values = [v for v in values if value_key(v) not in theirs]
            self.find(
                "enum",
                sub.where,
                b.where,
                (*path, Step("prop", name)),
                Values(partial(list, values)),
                f"no {x.type} branch of {self.b_name} allows {name!r} to be"
                f" {', '.join(canonical(v) for v in values[:6])}, which {self.a_name} accepts",
            )
            return
        self.doubt(
            x.where,
            b.where,
            path,
            f"no {x.type} branch of {self.b_name} matches {self.a_name}'s by its discriminating"
            " members: whether their union accepts it is not decided",
        )

    def _unwitnessable(self, x: Branch, start: int) -> None:
        """The claims made from ``start`` on, below ``x``, as doubts: A's values here
        must match an external schema (not given, never fetched), so A's verdict on any
        record that holds a value here depends on its content, and no witness may rest
        on it. (Where B's keywords are implied by A's own, nothing is claimed: an
        external schema only narrows A.)"""
        uris = ", ".join(externals(x))
        for finding in self.findings[start:]:
            self.doubt(
                finding.accepting,
                finding.rejecting,
                finding.path,
                f"{finding.message}, but {self.a_name}'s schema here is (in part) the"
                f" external schema {uris}, not among the schemas given (nothing is"
                " fetched): no record can show it without reading it",
            )
        del self.findings[start:]

    def _type(self, x: Branch, b: Norm, path: tuple[Step, ...], classes: frozenset[str]) -> None:
        what = " or ".join(_CLASS_NAMES.get(c, c) for c in sorted(classes))
        self.find(
            "type",
            x.where,
            b.where,
            path,
            Values(
                lambda: self._refused(b, (v for v in self.builder.values(x) if _in(v, classes)))
            ),
            f"{self.b_name} rejects {what} values, which {self.a_name} accepts",
        )

    def branch(
        self, x: Branch, b: Norm, y: Branch, path: tuple[Step, ...], classes: frozenset[str]
    ) -> None:
        have = {o.key for o in x.opaque}
        added = [uri for o in y.opaque if (uri := external(o)) and o.key not in have]
        if added:
            # B's verdict on any value here reads an external schema: no witness can be
            # judged (one that reaches it is refused), and inclusion is not known.
            self.doubt(
                x.where,
                y.where,
                path,
                f"{self.b_name} requires the external schema {', '.join(added)} here (not"
                f" among the schemas given; nothing is fetched), {self.a_name} does not:"
                f" whether it rejects what {self.a_name} accepts depends on its content",
            )
            return
        finite = _finite(x)
        if finite is not None:
            self._enumerated(x, b, y, path, [v for v in finite if _in(v, classes)])
            return
        if "enum" in y.keywords:
            shown = ", ".join(canonical(v) for v in y.keywords["enum"][:6])
            self.find(
                "enum",
                x.where,
                y.place("enum"),
                path,
                Values(
                    lambda: self._refused(b, (v for v in self.builder.values(x) if _in(v, classes)))
                ),
                f"{self.b_name} accepts only {shown}; {self.a_name} accepts more",
                doubt=f"whether every value {self.a_name} accepts is among {shown}",
            )
            return
        if x.type == "string":
            self._string(x, y, path)
        elif x.type in ("number", "integer"):
            self._number(x, y, path, classes)
        elif x.type == "array":
            self._array(x, y, path)
        elif x.type == "object":
            self._object(x, y, path)
        have = {o.key for o in x.opaque}
        for constraint in y.opaque:
            if constraint.key in have or any(
                equivalent(o, constraint) for o in x.opaque if o.keyword == constraint.keyword
            ):
                continue
            implied = self._implied(x, y, constraint, path, classes)
            if implied:
                continue
            # Not compared (kept whole), so only a witness decides: a value of x
            # that y (its opaque constraints included) refuses, checked whole by
            # the engine as every claim is; none found, it stays undecided.
            # (Refused by all of b: another of its branches may accept the value.)
            self.find(
                "bound",
                x.where,
                constraint.where,
                path,
                Values(partial(self._opaque_values, x, b, constraint, classes)),
                f"{self.b_name}'s {constraint.keyword} rejects a value {self.a_name} accepts",
                doubt=self._unmatched_opaque(x, constraint),
                fallback=implied is None,
            )

    def _opaque_values(
        self, x: Branch, b: Norm, constraint: Opaque, classes: frozenset[str]
    ) -> Iterator[Any]:
        """Values of ``x`` that B refuses, for a constraint of B's kept whole: for a
        ``not``, the values its content accepts first (those it refuses)."""
        inner = constraint.parts.get("not") if constraint.keyword == "not" else None
        numeric = {"number", "integer"}
        near = [
            br for br in (inner.branches if inner else ())
            if br.type == x.type or {br.type, x.type} == numeric
        ]  # fmt: skip
        values = itertools.chain(
            *(itertools.islice(self.builder.values(br), 8) for br in near),
            self.builder.values(x),
        )
        return self._refused(b, (v for v in values if _in(v, classes)))

    def _unmatched_opaque(self, x: Branch, constraint: Opaque) -> str:
        """Why a constraint of B's that A's do not imply is not decided without a witness."""
        condition = constraint.parts.get("if")
        if condition is not None and any(
            o.keyword == "if" and "if" in o.parts and o.parts["if"].key == condition.key
            for o in x.opaque
        ):
            return (
                f"the if of {self.b_name}'s if/then/else is {self.a_name}'s, its then or else"
                f" not: whether the whole rejects what {self.a_name} accepts"
            )
        if constraint.keyword == "if" and any(o.keyword == "if" for o in x.opaque):
            return (
                f"the if of {self.b_name}'s if/then/else is not {self.a_name}'s (then and else"
                f" are compared under an equal if): whether it rejects what {self.a_name}"
                " accepts"
            )
        return (
            f"{constraint.keyword} of {self.b_name} is not one of {self.a_name}'s:"
            f" whether it rejects what {self.a_name} accepts"
        )

    def _implied(
        self,
        x: Branch,
        y: Branch,
        constraint: Opaque,
        path: tuple[Step, ...],
        classes: frozenset[str],
    ) -> bool | None:
        """Whether B's ``constraint`` is compared through one of A's, part by part:

        * an ``if``/``then``/``else`` of A's with an equal ``if`` (normal forms): a value
          meeting the ``if`` is judged by ``then`` on both sides, any other by ``else``,
          so A's ``then`` is walked against B's and ``else`` against ``else`` (absent:
          ``true``) here, their claims and doubts this walk's — proven or undecided as
          any other, so a changed ``then`` is a violation with a witness (and, where
          they find something, B's whole constraint is claimed too);
        * a ``not`` of A's whose content takes in all that B's ``not`` content takes (a
          trial walk the other way, contravariance, that finds nothing): what A lets
          through, B's lets through.

        False: not compared so (B's constraint is then a claim for a witness); None:
        compared so, and something found (B's whole constraint is claimed too, as a
        fallback: proven only where no claim of its parts is)."""
        if constraint.keyword == "if" and "if" in constraint.parts:
            condition = constraint.parts["if"].key
            mine = next(
                (o for o in x.opaque if o.keyword == "if" and "if" in o.parts
                 and o.parts["if"].key == condition),
                None,
            )  # fmt: skip
            if mine is None:
                return False
            here = path[:-1] if path and path[-1].op == "type" else path  # node adds it
            start, doubts = len(self.findings), len(self.doubts)
            for part in ("then", "else"):
                ours = mine.parts.get(part) or true_norm(mine.where)
                theirs = constraint.parts.get(part) or true_norm(constraint.where)
                self.node(ours, theirs, here, classes)
            because = f"whether a record that shows it meets the if of {self.a_name}"
            self.findings[start:] = [
                f if f.doubt else dataclasses.replace(f, doubt=because)
                for f in self.findings[start:]
            ]
            # Something found: the constraint is also claimed whole (a record that the
            # whole if/then/else refuses may exist where none shows a part's claim).
            return True if len(self.findings) == start and len(self.doubts) == doubts else None
        if constraint.keyword == "not" and "not" in constraint.parts:
            for mine in x.opaque:
                if mine.keyword != "not" or "not" not in mine.parts:
                    continue
                trial = Walk(self.direction, self.builder)
                trial.node(constraint.parts["not"], mine.parts["not"], (), classes)
                if not trial.findings and not trial.doubts:
                    return True
        return False

    def _enumerated(
        self, x: Branch, b: Norm, y: Branch, path: tuple[Step, ...], values: list[Any]
    ) -> None:
        """A finite side: every value it accepts tried against the other — exact."""
        theirs = y.keywords.get("enum")
        ours = x.keywords.get("enum")
        listed = set() if theirs is None else {canonical(t) for t in theirs}
        for value in values:
            # An external schema's verdict is not known: the value stays a claim.
            if not self.checks.accepts(x, value, unknown=True) or self.checks.accepts(b, value):
                continue
            if theirs is not None and canonical(value) not in listed:
                single = ours is not None and len(ours) == 1 and len(theirs) == 1
                relation = "const" if single else "enum"
            else:
                relation = "bound"
            self.find(
                relation,
                x.place("enum"),
                y.place("enum" if theirs is not None else "type"),
                path,
                Values(partial(_just, value)),
                f"{self.b_name} rejects {canonical(value)}, which {self.a_name} accepts",
            )

    # ------------------------------------------------------------------ by type

    def _string(self, x: Branch, y: Branch, path: tuple[Step, ...]) -> None:
        self._counts(
            x,
            y,
            path,
            "minLength",
            "maxLength",
            "characters",
            lambda n: self.builder.strings(x, length=n),
        )
        for name, what in (("pattern", "pattern"), ("format", "format")):
            for extra in sorted(
                y.keywords.get(name, frozenset()) - x.keywords.get(name, frozenset())
            ):
                ours = ", ".join(repr(p) for p in sorted(x.keywords.get(name, ())))
                self.find(
                    "bound",
                    x.place(name),
                    y.place(name),
                    path,
                    Values(lambda: self._refused(y, self.builder.strings(x))),
                    f"{self.b_name} requires {what} {extra!r}"
                    + (
                        f" where {self.a_name} requires {ours}" if ours else f", {self.a_name} none"
                    ),
                    doubt=f"whether every string {self.a_name} accepts matches {what} {extra!r}",
                )

    def _number(
        self, x: Branch, y: Branch, path: tuple[Step, ...], classes: frozenset[str]
    ) -> None:
        integral = classes <= {"integer"} or x.type == "integer"
        for name in ("lower", "upper"):
            ours, theirs = x.keywords.get(name), y.keywords.get(name)
            if theirs is None or not _weaker(name, ours, theirs, integral):
                continue
            near = _near(theirs[0])
            self.find(
                "bound",
                x.place(name),
                y.place(name),
                path,
                Values(partial(self._numbers, x, y, near, classes)),
                f"{self.b_name} requires {_bound_text(name, theirs)}"
                + (
                    f" where {self.a_name} requires {_bound_text(name, ours)}"
                    if ours
                    else f", {self.a_name} no bound"
                ),
            )
        for step in sorted(y.keywords.get("multipleOf", frozenset())):
            if _divides(x.keywords.get("multipleOf", frozenset()), step, integral):
                continue
            self.find(
                "bound",
                x.place("multipleOf"),
                y.place("multipleOf"),
                path,
                Values(partial(self._numbers, x, y, [0.5, 1, 2, 3, 7], classes)),
                f"{self.b_name} requires a multiple of {step}",
                doubt=f"whether every number {self.a_name} accepts is a multiple of {step}",
            )

    def _array(self, x: Branch, y: Branch, path: tuple[Step, ...]) -> None:
        if x.keywords.get("maxItems") != 0 and "items" in y.keywords:
            mine = x.keywords.get("items") or true_norm(x.where)
            self.node(mine, y.keywords["items"], (*path, Step("item")))
        self._counts(
            x, y, path, "minItems", "maxItems", "items", lambda n: self.builder.arrays(x, length=n)
        )
        unique = y.keywords.get("uniqueItems") and not x.keywords.get("uniqueItems")
        if unique and x.keywords.get("maxItems", 2) >= 2:  # one item is always unique
            self.find(
                "bound",
                x.where,
                y.place("uniqueItems"),
                path,
                Values(lambda: self._refused(y, self.builder.arrays(x, duplicate=True))),
                f"{self.b_name} requires unique items, {self.a_name} does not",
            )

    def _counts(
        self,
        x: Branch,
        y: Branch,
        path: tuple[Step, ...],
        low: str,
        high: str,
        unit: str,
        made: Any,
    ) -> None:
        """A pair of count bounds (lengths, items, members), as integers."""
        ours_low, theirs_low = x.keywords.get(low, 0), y.keywords.get(low, 0)
        ours_high, theirs_high = x.keywords.get(high), y.keywords.get(high)
        if theirs_low > ours_low:
            self.find(
                "bound",
                x.place(low),
                y.place(low),
                path,
                Values(lambda: self._refused(y, made(theirs_low - 1))),
                f"{self.b_name} requires at least {theirs_low} {unit}, {self.a_name} {ours_low}",
            )
        if theirs_high is not None and (ours_high is None or ours_high > theirs_high):
            self.find(
                "bound",
                x.place(high),
                y.place(high),
                path,
                Values(lambda: self._refused(y, made(theirs_high + 1))),
                f"{self.b_name} allows at most {theirs_high} {unit}, {self.a_name}"
                f" {'any number' if ours_high is None else ours_high}",
            )

    def _object(self, x: Branch, y: Branch, path: tuple[Step, ...]) -> None:
        ours: dict[str, Norm] = x.keywords.get("properties", {})
        theirs: dict[str, Norm] = y.keywords.get("properties", {})
        required_x: frozenset[str] = x.keywords.get("required", frozenset())
        required_y: frozenset[str] = y.keywords.get("required", frozenset())
        others_x: Norm | None = x.keywords.get("additionalProperties")
        others_y: Norm | None = y.keywords.get("additionalProperties")
        members = member_path(path)
        patterned = "patternProperties" in x.keywords or "patternProperties" in y.keywords
        if patterned:
            self._patterned(x, y, path)
        for name in () if patterned else (*ours, *(k for k in theirs if k not in ours)):
            mine, other = ours.get(name), theirs.get(name)
            here = (*path, Step("prop", name))
            self._note_move(mine, other, (*members, name))
            effective = mine if mine is not None else others_x
            if effective is not None and is_false(effective):
                continue  # A never has this member
            if mine is not None and other is None and others_y is not None and is_false(others_y):
                self.find(
                    "closed-property",
                    mine.where,
                    y.place("additionalProperties"),
                    here,
                    Values(partial(self.builder.build, mine)),
                    f"{self.b_name} does not allow member {name!r}, which {self.a_name} declares"
                    + (" (required)" if name in required_x else " (optional)"),
                    excusable=name not in required_x,
                )
                continue
            if other is not None and mine is None and (others_x is None or is_true(others_x)):
                if not is_true(other):
                    self.find(
                        "open-property",
                        x.place("properties"),
                        other.where,
                        here,
                        Values(partial(self._open_values, other)),
                        f"{self.b_name} constrains member {name!r}, which {self.a_name}"
                        " leaves open",
                    )
                continue
            target = other if other is not None else others_y
            if target is not None:
                self.node(effective or true_norm(x.where), target, here)
        for name in sorted(required_y - required_x):
            self.find(
                "required",
                x.place("required"),
                y.place("required"),
                (*path, Step("prop", name)),
                Absent(),
                f"{self.b_name} requires member {name!r}, {self.a_name} does not",
            )
        for member, needed in sorted(
            y.keywords.get("dependentRequired", frozenset())
            - x.keywords.get("dependentRequired", frozenset())
        ):
            if needed in required_x or self._never(x, member):
                continue  # A requires it anyway, or never has the member it depends on
            self.find(
                "required",
                x.place("dependentRequired"),
                y.place("dependentRequired"),
                (*path, Step("prop", needed)),
                Absent(),
                f"{self.b_name} requires member {needed!r} beside {member!r},"
                f" {self.a_name} does not",
            )
        if not patterned:
            self._others(x, y, path, others_x, others_y, ours, theirs)
        names_x, names_y = x.keywords.get("propertyNames"), y.keywords.get("propertyNames")
        if names_y is not None and (names_x is None or names_x.key != names_y.key):
            self.node(names_x or _ANY_STRING, names_y, (*path, Step("newkey")), ("string",))
        self._counts(
            x,
            y,
            path,
            "minProperties",
            "maxProperties",
            "members",
            lambda n: self.builder.objects(x, size=n),
        )

    def _others(
        self,
        x: Branch,
        y: Branch,
        path: tuple[Step, ...],
        others_x: Norm | None,
        others_y: Norm | None,
        ours: dict[str, Norm],
        theirs: dict[str, Norm],
    ) -> None:
        """Members neither side declares: ``additionalProperties`` against each other."""
        if others_y is None or is_true(others_y) or (others_x is not None and is_false(others_x)):
            return
        if others_x is not None and others_x.key == others_y.key:
            return
        fresh = next(self.builder.fresh_keys(x, avoid=theirs), None)
        if fresh is None:
            self.doubt(x.where, y.place("additionalProperties"), path, "no member name shows it")
            return
        here = (*path, Step("prop", fresh))
        if others_x is not None and not is_true(others_x) and not is_false(others_y):
            self.node(others_x, others_y, here)
            return
        wide = others_x or true_norm(x.where)
        narrowed = "allows no" if is_false(others_y) else "constrains"
        self.find(
            "additional",
            x.place("additionalProperties"),
            y.place("additionalProperties"),
            here,
            self._beyond(others_y, wide),
            f"{self.b_name} {narrowed} members beyond those it declares; {self.a_name} allows them",
        )

    def _never(self, x: Branch, member: str) -> bool:
        """Whether ``x`` never has ``member`` (its schema there is ``false``); unsure
        (a pattern match not told): no."""
        try:
            schema = member_schema(x, member)
        except Unmatched:
            return False
        return schema is not None and is_false(schema)

    # ------------------------------------------------------------------ patternProperties

    def _note_move(self, mine: Norm | None, other: Norm | None, member: tuple[str, ...]) -> None:
        """Note a member one side declares and the other does not: a move (added or
        removed, as this walk's direction reads it) that the lenient policy may excuse."""
        gone, came = ("removed", "added") if self.direction == "backward" else ("added", "removed")
        if mine is not None and other is None:
            self.moves.add((gone, member))
        if other is not None and mine is None:
            self.moves.add((came, member))

    def _patterned(self, x: Branch, y: Branch, path: tuple[Step, ...]) -> None:
        """Members when ``patternProperties`` is on either side: each declared name by
        what each side asks of it (:func:`~.normal.member_schema`: its entry and the
        patterns matching it, else ``additionalProperties``), then every other name by
        region — names a regex of both sides matches, of one side only, of none — with
        a name of the region for its witness (:meth:`_regions`)."""
        ours: dict[str, Norm] = x.keywords.get("properties", {})
        theirs: dict[str, Norm] = y.keywords.get("properties", {})
        required_x: frozenset[str] = x.keywords.get("required", frozenset())
        members = member_path(path)
        for name in (*ours, *(k for k in theirs if k not in ours)):
            mine, other = ours.get(name), theirs.get(name)
            here = (*path, Step("prop", name))
            self._note_move(mine, other, (*members, name))
            try:
                accepted, wanted = member_schema(x, name), member_schema(y, name)
            except Unmatched as unmatched:
                self.doubt(
                    x.place("patternProperties"),
                    y.place("patternProperties"),
                    here,
                    f"{unmatched}: ECMA-262 and python-jsonschema may read it differently",
                )
                continue
            if accepted is not None and is_false(accepted):
                continue  # A never has this member
            if wanted is None or is_true(wanted):
                continue
            closed = wanted is y.keywords.get("additionalProperties")  # no pattern matches
            if mine is not None and other is None and closed and is_false(wanted):
                self.find(
                    "closed-property",
                    mine.where,
                    y.place("additionalProperties"),
                    here,
                    Values(partial(self.builder.build, accepted or mine)),
                    f"{self.b_name} does not allow member {name!r}, which {self.a_name} declares"
                    + (" (required)" if name in required_x else " (optional)"),
                    excusable=name not in required_x,
                )
                continue
            if other is not None and mine is None and (accepted is None or is_true(accepted)):
                self.find(
                    "open-property",
                    x.place("properties"),
                    other.where,
                    here,
                    Values(partial(self._open_values, wanted)),
                    f"{self.b_name} constrains member {name!r}, which {self.a_name} leaves open",
                )
                continue
            self.node(accepted or true_norm(x.where), wanted, here)
        self._regions(x, y, path, frozenset({*ours, *theirs}))

    def _regions(
        self, x: Branch, y: Branch, path: tuple[Step, ...], declared: frozenset[str]
    ) -> None:
        """Names neither side declares. For such a name, A asks the schemas of its
        patterns matching it (else its ``additionalProperties``), B likewise; B accepts
        whatever A does when

        * each regex of both sides: A's schema within B's;
        * each regex of B's only: A's ``additionalProperties`` within B's schema, and
          so is each of A's pattern schemas (a name may match both);
        * each regex of A's only: A's schema within B's ``additionalProperties``;
        * A's ``additionalProperties`` within B's.

        (A name B's regexes match meets each of them: the first two cover each; one
        none of B's matches meets B's ``additionalProperties``: the last two.)"""
        px: dict[str, Norm] = x.keywords.get("patternProperties", {})
        py: dict[str, Norm] = y.keywords.get("patternProperties", {})
        ax: Norm | None = x.keywords.get("additionalProperties")
        ay: Norm | None = y.keywords.get("additionalProperties")
        every = [*px, *(r for r in py if r not in px)]
        at_x, at_y = x.place("patternProperties"), y.place("patternProperties")
        # A regex that matches every name (".*") leaves no name to the other regions.
        all_x, all_y = any(map(universal, px)), any(map(universal, py))
        for regex in py:
            others = [r for r in every if r != regex]
            if regex in px:
                self._region(px[regex], py[regex], [regex], others, declared, path, at_x, at_y)
                continue
            if not all_x:
                self._region(ax, py[regex], [regex], list(px), declared, path, at_x, at_y)
            if len(px) * len([r for r in py if r not in px]) > _PATTERN_PAIRS:
                self.doubt(
                    at_x,
                    at_y,
                    path,
                    f"{self.b_name}'s pattern {regex!r} beside {len(px)} of {self.a_name}'s"
                    f" that it may overlap: more than {_PATTERN_PAIRS} pairs are not compared",
                )
                continue
            for mine in px:
                rest = [r for r in every if r not in (regex, mine)]
                self._region(px[mine], py[regex], [mine, regex], rest, declared, path, at_x, at_y)
        for regex in px:
            if regex not in py and not all_y:
                self._region(px[regex], ay, [regex], list(py), declared, path, at_x, at_y)
        if not (all_x or all_y):
            at = x.place("additionalProperties")
            self._region(ax, ay, [], every, declared, path, at, y.place("additionalProperties"))

    def _region(
        self,
        mine: Norm | None,
        other: Norm | None,
        within: list[str],
        outside: list[str],
        declared: frozenset[str],
        path: tuple[Step, ...],
        accepting: Where,
        rejecting: Where,
    ) -> None:
        """Names every regex of ``within`` matches (and, for the witness, preferably none
        of ``outside``): A asks ``mine`` of them (None: nothing), B ``other``."""
        if other is None or is_true(other) or (mine is not None and is_false(mine)):
            return
        if mine is not None and mine.key == other.key:
            return
        which = " and ".join(repr(r) for r in within) or "no pattern"
        name = next(names(within, outside, declared), None)
        if name is None and within:
            name = next(names(within, (), declared), None)
        if name is None:
            # No name of the region for a witness: decided only if nothing is found.
            if mine is not None and self._holds(mine, other, path):
                return
            self.doubt(accepting, rejecting, path, f"no member name matching {which} shows it")
            return
        here = (*path, Step("prop", name))
        if mine is not None and not is_true(mine) and not is_false(other):
            self.node(mine, other, here)
            return
        wide = mine or true_norm(accepting)
        narrowed = "allows no" if is_false(other) else "constrains"
        self.find(
            "additional",
            accepting,
            rejecting,
            here,
            self._beyond(other, wide),
            f"{self.b_name} {narrowed} members matching {which} (as {name!r});"
            f" {self.a_name} allows them",
        )

    def _holds(self, a: Norm, b: Norm, path: tuple[Step, ...]) -> bool:
        """Whether walking ``a`` against ``b`` finds nothing (what it found undone)."""
        findings, doubts = len(self.findings), len(self.doubts)
        moves, assumed = set(self.moves), set(self.assumed)
        self.node(a, b, (*path, Step("prop", "")))
        found = len(self.findings) > findings or len(self.doubts) > doubts
        del self.findings[findings:], self.doubts[doubts:]
        self.moves = moves
        if found:
            self.assumed = assumed
        return not found

    def _numbers(
        self, x: Branch, y: Branch, near: list[float], classes: frozenset[str]
    ) -> Iterator[Any]:
        """Numbers of ``classes`` that ``x`` accepts (those ``near`` first) and ``y`` refuses."""
        return self._refused(y, (v for v in self.builder.numbers(x, near) if _in(v, classes)))

    def _open_values(self, other: Norm) -> Iterator[Any]:
        """Values an open member may hold that ``other`` refuses."""
        more: list[Any] = []
        for branch in other.branches:  # the same type, just outside its constraints
            more.extend(itertools.islice(self.builder.values(branch), 4))
        return self._refused(other, itertools.chain(ANY_VALUES, more, ["a" * 300, 10**6, -(10**6)]))


# --------------------------------------------------------------------------- helpers


def _near(bound: float) -> list[float]:
    """Numbers at and next to a bound; halves only where a double still tells them
    apart (a bound of -2**63 is an exact int, and ``-2**63 - 0.5`` is ``-2**63``)."""
    near: list[float] = [bound, bound - 1, bound + 1]
    if abs(bound) < 2**52:
        near += [bound - 0.5, bound + 0.5]
    return near


def _matching(x: Branch, ys: list[Branch]) -> list[Branch]:
    """Those of ``ys`` that may accept a value ``x`` accepts, as far as discriminating
    members tell (a ``kind`` whose ``const`` differs rules a branch out). One name is
    looked up in an index of ``ys`` by value, so a union of many branches costs each
    branch of A a look-up, not a comparison with each of B's."""
    mine = discriminators(x)
    if not mine:
        return ys
    tables = [discriminators(y) for y in ys]
    for name in sorted(mine):
        if not any(name in t for t in tables):
            continue
        index: dict[str, list[int]] = {}
        free: list[int] = []
        for i, table in enumerate(tables):
            if name in table:
                for value in table[name]:
                    index.setdefault(value, []).append(i)
            else:
                free.append(i)
        chosen = set(free).union(*(index.get(v, []) for v in mine[name]))
        return [y for i, y in enumerate(ys) if i in chosen]
    return ys


def _just(value: Any) -> list[Any]:
    return [value]


def _covers(type_: str, cls: str) -> bool:
    return type_ == cls or (type_ == "number" and cls in ("integer", "fraction"))


def _in(value: Any, classes: frozenset[str]) -> bool:
    """Whether ``value`` is of one of ``classes`` (``fraction``: a non-integral number)."""
    types = value_types(value)
    if "number" in types:
        return ("integer" if "integer" in types else "fraction") in classes
    return bool(types & classes)


def _finite(x: Branch) -> tuple[Any, ...] | None:
    """Every value ``x`` can accept, when there are few: its enum, booleans, null."""
    if "enum" in x.keywords:
        return tuple(x.keywords["enum"])
    if x.type == "boolean":
        return (False, True)
    if x.type == "null":
        return (None,)
    return None


def _weaker(
    name: str, ours: tuple[float, bool] | None, theirs: tuple[float, bool], integral: bool
) -> bool:
    """Whether bound ``ours`` admits a number ``theirs`` does not."""
    if ours is None:
        return True
    if integral:
        lower = name == "lower"
        mine, other = _integer_bound(ours, lower), _integer_bound(theirs, lower)
        return mine < other if lower else mine > other
    if name == "lower":
        return ours[0] < theirs[0] or (ours[0] == theirs[0] and not ours[1] and theirs[1])
    return ours[0] > theirs[0] or (ours[0] == theirs[0] and not ours[1] and theirs[1])


def _integer_bound(bound: tuple[float, bool], lower: bool) -> int:
    """The first integer a bound admits (lower) or the last (upper)."""
    value, exclusive = Fraction(str(bound[0])), bound[1]
    if lower:
        return int(value // 1) + 1 if exclusive else -int((-value) // 1)
    return -int((-value) // 1) - 1 if exclusive else int(value // 1)


def _divides(steps: frozenset[float], step: float, integral: bool) -> bool:
    """Whether every number that is a multiple of one of ``steps`` (or, for integers,
    every integer) is a multiple of ``step`` — as the reference validator decides it.

    For a fractional ``multipleOf`` python-jsonschema divides in floating point:
    ``0.3`` is a multiple of ``0.3`` and not of ``0.1`` (``0.3 / 0.1`` is
    ``2.9999999999999996``), though exactly every multiple of 3/10 is one of 1/10. So
    exact arithmetic decides only between integral steps (exact there: an integral
    quotient of doubles is computed exactly); a fractional one is implied only by
    itself."""
    if any(s == step for s in steps):
        return True
    if not _integral(step):
        return False
    wanted = Fraction(step)
    candidates = [Fraction(s) for s in steps if _integral(s)]
    candidates += [Fraction(1)] if integral else []
    return any((c / wanted).denominator == 1 for c in candidates)


def _integral(number: float) -> bool:
    """An integer, or a float holding one (an int of any size: no float() of it)."""
    return isinstance(number, int) or number.is_integer()


def _bound_text(name: str, bound: tuple[float, bool] | None) -> str:
    if bound is None:
        return "no bound"
    op = {
        ("lower", False): ">=",
        ("lower", True): ">",
        ("upper", False): "<=",
        ("upper", True): "<",
    }
    return f"{op[(name, bound[1])]} {bound[0]}"
