"""Listing the records of documents with their digests, without validating them.

``kernelindex digest`` prints the digest of anything that has one — a record needs
only ``apiVersion``, ``kind`` and ``spec`` — valid or not, so a user can see what a
broken record *would* be referenced by. :class:`DigestSession` is the checker the
document pipeline (:mod:`kernelindex_sdk.validating.pipeline`) runs for it: each item comes back
with one :class:`~kernelindex_sdk.validating.validation.RecordRef` per record (every member of a
bundle), and a ``not-a-record`` problem for anything that has no digest.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kernelindex_sdk.canonical import safe_digest
from kernelindex_sdk.errors import Problem
from kernelindex_sdk.validating.validation import (
    Item,
    RecordRef,
    name_of,
    records_of,
    split_document,
)


class DigestSession:
    """Lists records and digests; keeps no state between documents."""

    #: Items that passed and failed later: never, there is nothing to resolve.
    invalidated = 0

    def prepare(self) -> None:
        """Nothing to compile."""

    def check_document(
        self, value: Any, *, source: str = "<input>", line: int | None = None
    ) -> list[Item]:
        """One item per record or bundle of the document, with every record's digest."""
        items = []
        for item_at, element in split_document(value):
            records = list(records_of(element, item_at)) or [(item_at, element)]
            refs: list[RecordRef] = []
            problems: list[Problem] = []
            for at, record in records:
                found = safe_digest(record) if isinstance(record, dict) else None
                if found is None:
                    problems.append(
                        Problem(
                            "not a record: needs apiVersion, kind and spec to have a digest",
                            code="not-a-record",
                            pointer=at,
                            source=source,
                            line=line,
                        )
                    )
                else:
                    refs.append(RecordRef(str(record.get("kind")), name_of(record), found, at))
            head = refs[0] if refs else None
            items.append(
                Item(
                    source,
                    line,
                    item_at,
                    head.kind if head else None,
                    head.name if head else None,
                    tuple(problems),
                    tuple(refs),
                )
            )
        return items

    def passes(self, value: Any, written: bytes | None = None) -> bool:
        """Never: every item's digests are what this checker is for."""
        return False

    def take_references(self) -> tuple[list[tuple[str, str]], list[Any]]:
        """Nothing is gathered: digests are listed, not resolved."""
        return [], []

    def add_references(self, known: Iterable[tuple[str, str]], pending: Iterable[Any]) -> None:
        """Nothing to merge."""

    def finish(self) -> list[Problem]:
        """No late problems."""
        return []
