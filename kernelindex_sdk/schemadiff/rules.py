"""The rule IDs of ``kernelindex schema diff``, and which direction each breaks.

Compatibility is about sets of records: **backward** means every record OLD accepts,
NEW accepts (new readers read old records); **forward** the reverse (old readers read
new records); **full** both. The walk looks, in each direction, for records the
*accepting* side takes and the *rejecting* side refuses (backward: OLD accepts, NEW
rejects; forward: NEW accepts, OLD rejects), and names what it found by a *relation*.
A relation's rule ID depends on the direction, because the same fact reads as a
narrowing one way and a widening the other:

=================  =============================  ==============================
relation           backward (NEW rejects)         forward (OLD rejects)
=================  =============================  ==============================
type               TYPE_NARROWED                  TYPE_WIDENED
enum               ENUM_VALUE_REMOVED             ENUM_VALUE_ADDED
const              CONST_CHANGED                  CONST_CHANGED
bound              BOUND_TIGHTENED                BOUND_RELAXED
closed-property    PROPERTY_REMOVED               PROPERTY_ADDED
open-property      PROPERTY_ADDED                 PROPERTY_REMOVED
required           REQUIRED_ADDED                 REQUIRED_REMOVED
additional         ADDITIONAL_PROPERTIES_NARROWED ADDITIONAL_PROPERTIES_WIDENED
kind               KIND_REMOVED                   KIND_ADDED
digest-scope       DIGEST_SCOPE_CHANGED           DIGEST_SCOPE_CHANGED
=================  =============================  ==============================

``closed-property``: the rejecting side's object is closed (``additionalProperties:
false``) and does not declare a member the accepting side declares — a property
removed (backward) or added (forward). ``open-property``: the accepting side's object
is open and does not declare a member the rejecting side constrains — a constraint
added on an open object (backward) or dropped (forward). ``bound`` covers minimum and
maximum (exclusive too), lengths, item and member counts, ``pattern``, ``format``,
``multipleOf`` and ``uniqueItems``, and a constraint compared whole (``not``,
``if``/``then``/``else``, an overlapping ``oneOf``...) that one side has and the other
lacks, when a witness shows it.

Under ``--policy lenient`` a ``closed-property`` finding about an *optional* member is
no violation: an optional property may be added to or removed from a closed object
(kernelindex writers emit only the fields their version declares). Nothing else is
excused, and ``DIGEST_SCOPE_CHANGED`` never is.

Swapping OLD and NEW swaps the directions and, with them, each rule for its
counterpart (:data:`COUNTERPART`): ``backward(A, B)`` is ``forward(B, A)``.
"""

from __future__ import annotations

from typing import Literal

__all__ = [
    "COUNTERPART",
    "DIRECTIONS",
    "MODES",
    "POLICIES",
    "RELATIONS",
    "RULE_IDS",
    "Direction",
    "rule_id",
]

Direction = Literal["backward", "forward"]
MODES = ("backward", "forward", "full")
POLICIES = ("strict", "lenient")
#: The directions each mode checks.
DIRECTIONS: dict[str, tuple[Direction, ...]] = {
    "backward": ("backward",),
    "forward": ("forward",),
    "full": ("backward", "forward"),
}

#: relation → (rule when it breaks backward, rule when it breaks forward).
RELATIONS: dict[str, tuple[str, str]] = {
    "type": ("TYPE_NARROWED", "TYPE_WIDENED"),
    "enum": ("ENUM_VALUE_REMOVED", "ENUM_VALUE_ADDED"),
    "const": ("CONST_CHANGED", "CONST_CHANGED"),
    "bound": ("BOUND_TIGHTENED", "BOUND_RELAXED"),
    "closed-property": ("PROPERTY_REMOVED", "PROPERTY_ADDED"),
    "open-property": ("PROPERTY_ADDED", "PROPERTY_REMOVED"),
    "required": ("REQUIRED_ADDED", "REQUIRED_REMOVED"),
    "additional": ("ADDITIONAL_PROPERTIES_NARROWED", "ADDITIONAL_PROPERTIES_WIDENED"),
    "kind": ("KIND_REMOVED", "KIND_ADDED"),
    "digest-scope": ("DIGEST_SCOPE_CHANGED", "DIGEST_SCOPE_CHANGED"),
}
RULE_IDS = tuple(sorted({rule for pair in RELATIONS.values() for rule in pair}))

#: A rule as it reads with OLD and NEW swapped (and the direction with them).
COUNTERPART: dict[tuple[str, str], str] = {}
for _backward, _forward in RELATIONS.values():
    COUNTERPART[(_backward, "backward")] = _forward
    COUNTERPART[(_forward, "forward")] = _backward


def rule_id(relation: str, direction: Direction) -> str:
    """The rule ID of a finding: its relation read in its direction."""
    backward, forward = RELATIONS[relation]
    return backward if direction == "backward" else forward
