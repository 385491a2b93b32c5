"""Schema evolution, checked: what ``kernelindex schema diff`` does, as a library.

::

    from kernelindex_sdk.schemadiff import diff

    report = diff("schemas-released/kernelindex.dev/v1alpha1", "kernelindex.dev/v1alpha1",
                  mode="full", policy="lenient")
    for v in report.violations:      # each proven by a record, its witness
        print(v.rule, v.mode, v.old, "->", v.new, v.message, v.witness)
    raise SystemExit(report.exit_status())   # 0 compatible, 1 violations, 3 undecided

A side is a schema file, a folder of schema files, an apiVersion of the installed
registry, a :class:`~kernelindex_sdk.schema.registry.SchemaRegistry` or a :class:`SchemaSet`
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

from typing import TYPE_CHECKING

from kernelindex_sdk.base.lightimport import names_on_first_use

#: Each public name and the module that defines it, imported at first use: the
#: ``schema`` command's options need only :mod:`.rules`, and the diff machinery is
#: slow to import, which ``kernelindex --help`` and ``schema list`` need not pay.
_EXPORTS: dict[str, str] = {
    "MODES": "kernelindex_sdk.schemadiff.rules",
    "POLICIES": "kernelindex_sdk.schemadiff.rules",
    "RULE_IDS": "kernelindex_sdk.schemadiff.rules",
    "DiffReport": "kernelindex_sdk.schemadiff.report",
    "SchemaInputError": "kernelindex_sdk.schemadiff.inputs",
    "SchemaSet": "kernelindex_sdk.schemadiff.inputs",
    "Undecided": "kernelindex_sdk.schemadiff.report",
    "Violation": "kernelindex_sdk.schemadiff.report",
    "diff": "kernelindex_sdk.schemadiff.diffing",
    "load": "kernelindex_sdk.schemadiff.inputs",
    "normalized": "kernelindex_sdk.schemadiff.inputs",
}

__all__ = list(_EXPORTS)  # built from the one list above

if TYPE_CHECKING:  # the same names for type checkers ("X as X": re-exported)
    from kernelindex_sdk.schemadiff.diffing import diff as diff
    from kernelindex_sdk.schemadiff.inputs import SchemaInputError as SchemaInputError
    from kernelindex_sdk.schemadiff.inputs import SchemaSet as SchemaSet
    from kernelindex_sdk.schemadiff.inputs import load as load
    from kernelindex_sdk.schemadiff.inputs import normalized as normalized
    from kernelindex_sdk.schemadiff.report import DiffReport as DiffReport
    from kernelindex_sdk.schemadiff.report import Undecided as Undecided
    from kernelindex_sdk.schemadiff.report import Violation as Violation
    from kernelindex_sdk.schemadiff.rules import MODES as MODES
    from kernelindex_sdk.schemadiff.rules import POLICIES as POLICIES
    from kernelindex_sdk.schemadiff.rules import RULE_IDS as RULE_IDS


__getattr__ = names_on_first_use(__name__, _EXPORTS, globals())


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
