"""Schema evolution, checked: what ``kernelindex schema diff`` does, as a library.

::

    from kernelindex_sdk.schemadiff import diff

    report = diff("schemas-released/kernelindex.dev/v1alpha1", "kernelindex.dev/v1alpha1",
                  mode="full", policy="lenient")
    for v in report.violations:      # each proven by a record, its witness
        print(v.rule, v.mode, v.old, "->", v.new, v.message, v.witness)
    raise SystemExit(report.exit_status())   # 0 compatible, 1 violations, 3 undecided

A side is a schema file, a folder of schema files, an apiVersion of the installed
registry, a :class:`~kernelindex_sdk.registry.SchemaRegistry` or a :class:`SchemaSet`
(:func:`load`). **backward**: every record OLD accepts, NEW accepts; **forward**: the
reverse; **full**: both. ``policy="lenient"`` lets an optional property be added to or
removed from a closed object. Rule IDs and their directions: :mod:`.rules`.

How it decides: both sides are brought to a normal form (:mod:`.normal`) and walked
in parallel (:mod:`.walk`); each claim of a break becomes a violation only with a
witness — a whole record the reference engine accepts under one side and rejects
under the other (:mod:`.witness`, :mod:`.values`). What it cannot decide soundly is
reported as undecided, never passed.
"""

from __future__ import annotations

from kernelindex_sdk.schemadiff.diffing import diff
from kernelindex_sdk.schemadiff.inputs import SchemaInputError, SchemaSet, load, normalized
from kernelindex_sdk.schemadiff.report import DiffReport, Undecided, Violation
from kernelindex_sdk.schemadiff.rules import MODES, POLICIES, RULE_IDS

__all__ = [
    "MODES",
    "POLICIES",
    "RULE_IDS",
    "DiffReport",
    "SchemaInputError",
    "SchemaSet",
    "Undecided",
    "Violation",
    "diff",
    "load",
    "normalized",
]
