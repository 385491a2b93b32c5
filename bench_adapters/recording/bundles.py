"""Writing a recorded bundle: checked as ``validate --strict-refs`` checks it, then
written atomically through the importers' writer (``DIR/<run name>-<16 hex>.json``).

Nothing the project writes may fail its own ``validate``: a bundle with a problem is
refused (:class:`InvalidBundle`, one line per problem) and nothing is written. The
writer stages and renames (a killed write leaves the file whole or absent) and never
replaces a file of the same name holding other content.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from bench_adapters.common.checking import MEMBERS, RecordChecker
from bench_adapters.common.writer import bundle_file_name, write_records
from kernelindex_sdk import checks
from kernelindex_sdk.base.recordformat import API_VERSION_KEY, SPEC_KEY
from kernelindex_sdk.canonical import digest
from kernelindex_sdk.errors import KernelIndexError, Problem
from kernelindex_sdk.reading.intake import json_problems
from kernelindex_sdk.validating.validation import ValidationSession

#: The stream name the shared writer asks for (the bundles layout never writes one).
JSONL_NAME = "kernelindex.jsonl"


class InvalidBundle(KernelIndexError):
    """The bundle fails ``validate``: nothing was written. ``problems``: each finding."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        first = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(f"{first.pointer or '/'}: {first.message}{more}")


@attrs.frozen
class _Run:
    run: dict[str, Any]
    digest: str
    refs: tuple[str, str, str, str]


def bundle_problems(bundle: Mapping[str, Any]) -> list[Problem]:
    """What ``validate --strict-refs`` would find in the bundle's five records."""
    run = bundle["run"]
    return RecordChecker().entry_problems(
        run, [bundle[member] for member in MEMBERS], source=None, line=None
    )


def record_problems(record: Mapping[str, Any]) -> list[Problem]:
    """What ``validate`` would find in one record once it is written: what it finds in
    the value, and what its intake refuses in the text (a lone surrogate, say, which
    the value holds without complaint but no UTF-8 file can)."""
    written = json_problems(record)
    if written:
        return written
    session = ValidationSession(strict_json=True)
    return list(session.check_item(record, pointer="").problems)


def write_bundle(out: str | os.PathLike[str], bundle: Mapping[str, Any]) -> Path:
    """Check, then write ``bundle`` under ``out``; return the file's path."""
    problems = bundle_problems(bundle)
    if problems:
        raise InvalidBundle(problems)
    run = dict(bundle["run"])
    spec = run[SPEC_KEY]
    fields = checks.for_version(run[API_VERSION_KEY]) or checks.newest()
    protocol, workload, environment, implementation = (
        spec[fields.REFERENCES[member][1]] for member in MEMBERS
    )
    refs = (protocol, workload, environment, implementation)
    mapped = _Run(run=run, digest=digest(run), refs=refs)
    referenced = {ref: dict(bundle[member]) for member, ref in zip(MEMBERS, refs, strict=True)}
    write_records([mapped], referenced, out, "bundles", jsonl_name=JSONL_NAME)
    return Path(out) / bundle_file_name(run, mapped.digest)
