"""Records by digest, and submissions.

Reading: ``GET /records/sha256:<hex>`` is the stored record in its canonical form
(RFC 8785), which never changes for a digest: cached forever, its ``ETag`` the digest.

Writing: a submission is written to a private spool file and added with
:func:`kernelindex_sdk.store.adding.add` — the checks of ``validate --strict-refs``,
references resolving into the store and the request, all or nothing. Adds run one at
a time (this process owns the store): two submissions of one record store it once.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tempfile
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from kernelindex_sdk.canonical import canonicalize, digest
from kernelindex_sdk.errors import IntakeError, Problem
from kernelindex_sdk.reading.intake import loads
from kernelindex_sdk.reading.kistore import connect
from kernelindex_sdk.store.adding import AddResult, add
from kernelindex_sdk.validating.validation import is_bundle, records_of

__all__ = [
    "DIGEST",
    "Submission",
    "TooSlow",
    "count_documents",
    "export_documents",
    "read_record",
    "submit",
]

#: A digest as a path segment names it.
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
#: How the server reads the store: read-only, and no file but the store (the settings
#: of ``store query``'s connection, so one database kept open serves both).
READ_CONFIG = {"enable_external_access": False}
#: JSON Lines media types (anything else is one JSON document).
JSONL_TYPES = ("application/x-ndjson", "application/jsonl", "application/json-lines")


class TooSlow(Exception):
    """A submission's checks outlasted its time: nothing of it is stored."""


class _Recent:
    """Canonical forms served lately, by digest: a digest's record never changes, so
    they are kept (the least recently used dropped past :data:`KEPT_RECORDS`)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.forms: OrderedDict[str, bytes] = OrderedDict()

    def get(self, wanted: str) -> bytes | None:
        with self.lock:
            found = self.forms.get(wanted)
            if found is not None:
                self.forms.move_to_end(wanted)
            return found

    def put(self, wanted: str, form: bytes) -> None:
        with self.lock:
            self.forms[wanted] = form
            while len(self.forms) > KEPT_RECORDS:
                self.forms.popitem(last=False)


#: Canonical forms kept in memory (a few KB each).
KEPT_RECORDS = 4096
_RECENT = _Recent()


def read_record(store: str, wanted: str) -> bytes | None:
    """The canonical form of the stored record ``wanted`` (a full digest), or None."""
    key = f"{os.path.abspath(store)}\0{wanted}"
    found = _RECENT.get(key)
    if found is not None:
        return found
    with connect(store, read_only=True, config=READ_CONFIG) as connection:
        row = connection.execute(
            "SELECT record FROM records WHERE digest = ? ORDER BY seq LIMIT 1", [wanted]
        ).fetchone()
    if row is None:
        return None
    form = canonicalize(loads(str(row[0]).encode()))
    _RECENT.put(key, form)
    return form


@dataclass(slots=True)
class Submission:
    """What a submission did: the add's counts, each document's digests, or the
    problems that refused it (lines as ``validate`` prints them)."""

    result: AddResult
    label: str
    documents: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


class _Spool:
    """Numbered names for submissions: what the store records as their place."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.count = 0

    def label(self, suffix: str) -> str:
        with self.lock:
            self.count += 1
            stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
            return f"posted/{stamp}-{os.getpid()}-{self.count}{suffix}"


_SPOOL = _Spool()
#: One add at a time: the store has one writer, and a record posted twice at once
#: is found present by the second add.
_WRITING = threading.Lock()


def submit(store: str, body: bytes, jsonl: bool, deadline: float) -> Submission:
    """Check and add ``body`` (JSON Lines if ``jsonl``) all or nothing; raises
    :class:`TooSlow` when the checks end after ``deadline`` (``time.monotonic``)."""
    suffix = ".jsonl" if jsonl else ".json"
    label = _SPOOL.label(suffix)
    with tempfile.TemporaryDirectory(prefix="kernelindex-serve-") as folder:
        path = os.path.join(folder, "request" + suffix)
        with open(path, "wb") as handle:
            handle.write(body)

        def in_time() -> None:
            if time.monotonic() > deadline:
                raise TooSlow()

        with _WRITING:
            in_time()
            result = add(
                [path],
                store,
                jobs=1,
                all_or_nothing=True,
                origins={path: label},
                before_commit=in_time,
                read_config=READ_CONFIG,
            )
    done = Submission(result, label)
    if result.problems:
        done.problems = [str(_relabel(p, path, label)) for p in result.problems]
    else:
        done.documents = document_digests(body, jsonl)
    return done


def _relabel(problem: Problem, path: str, label: str) -> Problem:
    """The problem as found in the submission, not in the spool file."""
    if problem.source != path:
        return problem
    return dataclasses.replace(problem, source=label)


def document_digests(body: bytes, jsonl: bool) -> list[dict[str, Any]]:
    """Each document's digest (a bundle's: its run's) and, for a bundle, its members'."""
    values: list[Any] = []
    if jsonl:
        values = [loads(line) for line in body.splitlines() if line.strip()]
    else:
        value = loads(body)
        values = value if isinstance(value, list) else [value]
    listed = []
    for value in values:
        members = {pointer: digest(record) for pointer, record in records_of(value)}
        if is_bundle(value):
            listed.append({"digest": members.get("/run"), "records": members})
        else:
            listed.append({"digest": members.get("")})
    return listed


def export_documents(store: str, folder: str) -> str:
    """Every document of the store, as added (bundles as bundles), in the order added:
    ``store export --format jsonl``'s file, written under ``folder``; its path."""
    from kernelindex_sdk.store.exporting import export

    out = os.path.join(folder, "export")
    export(store, out, format="jsonl")
    return os.path.join(out, "records.jsonl")


def count_documents(body: bytes, jsonl: bool) -> int:
    """How many documents ``body`` holds (lines, or a top-level array's elements),
    counted without parsing where it can be."""
    if jsonl:
        return sum(1 for line in body.splitlines() if line.strip())
    if not body.lstrip().startswith(b"["):
        return 1
    try:
        value = loads(body)
    except IntakeError:
        return 1  # the add says what is wrong with it
    return len(value) if isinstance(value, list) else 1
