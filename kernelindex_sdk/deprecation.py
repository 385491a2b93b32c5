"""Records of a deprecated apiVersion, counted wherever they are checked.

``kernelindex validate`` warns once per deprecated version it meets — one line on
stderr naming the version that replaces it, not one per record — whatever the number
of worker processes. Records are checked where the pipeline's checker runs: in this
process, or in forked workers (``--jobs``) whose memory the parent never sees. So
:class:`VersionWatch` wraps the checker, counts records of deprecated versions as they
pass, and sends the counts back the way references already travel from workers to
the parent: in what ``take_references`` hands over, as entries under a marker that
``add_references`` takes out again before the session sees them.

Which versions are deprecated is the registry's to say
(:mod:`~kernelindex_sdk.versionstatus`); a registry with none costs nothing, because
``validate`` then does not wrap its checker at all.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from kernelindex_sdk.errors import Problem
from kernelindex_sdk.validation import Item, ValidationSession

__all__ = ["VersionWatch"]

#: The "digest" under which a worker's counts travel (no real digest looks like it).
_MARK = "kernelindex:deprecated-apiVersion"


class VersionWatch:
    """A pipeline checker: ``inner``'s checks, plus counts of deprecated records."""

    def __init__(self, inner: ValidationSession) -> None:
        self.inner = inner
        #: Deprecated apiVersion → the apiVersion that replaces it.
        self.deprecated = {
            version: status.replacement
            for version, status in inner.registry.statuses.items()
            if status.deprecated
        }
        self.seen: Counter[str] = Counter()
        #: Items invalidated in :meth:`finish` (the session's count, read by the pipeline).
        self.invalidated = 0

    def prepare(self) -> None:
        self.inner.prepare()

    def check_document(
        self, value: Any, *, source: str = "<input>", line: int | None = None
    ) -> list[Item]:
        self._count(value)
        return self.inner.check_document(value, source=source, line=line)

    def passes(self, value: Any) -> bool:
        if not self.inner.passes(value):
            return False  # check_document will count it
        self._count(value)
        return True

    def take_references(self) -> tuple[list[tuple[str, str]], list[Any]]:
        known, pending = self.inner.take_references()
        counts = [(_MARK, f"{n} {version}") for version, n in sorted(self.seen.items())]
        self.seen.clear()
        return [*known, *counts], pending

    def add_references(self, known: Iterable[tuple[str, str]], pending: Iterable[Any]) -> None:
        theirs = []
        for found, kind in known:
            if found == _MARK:
                count, version = kind.split(" ", 1)
                self.seen[version] += int(count)
            else:
                theirs.append((found, kind))
        self.inner.add_references(theirs, pending)

    def finish(self) -> list[Problem]:
        late = self.inner.finish()
        self.invalidated = self.inner.invalidated
        return late

    def warnings(self) -> list[str]:
        """One line per deprecated version met: which replaces it, and how many records."""
        return [
            f"apiVersion {version} is deprecated; use {self.deprecated[version]}"
            f" ({n} record{'s' if n != 1 else ''})"
            for version, n in sorted(self.seen.items())
        ]

    def _count(self, value: Any) -> None:
        """Count the records of deprecated versions in one document (a record, a
        bundle, or an array of them)."""
        for item in value if isinstance(value, list) else [value]:
            if not isinstance(item, dict):
                continue
            bundle = "run" in item and "kind" not in item
            records = [m for m in item.values() if isinstance(m, dict)] if bundle else [item]
            for record in records:
                version = record.get("apiVersion")
                if isinstance(version, str) and version in self.deprecated:
                    self.seen[version] += 1
