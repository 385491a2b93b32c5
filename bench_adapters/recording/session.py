"""What a pytest session of ``kernel_bench`` shows at its end: the results table, and
the gate that judges the session's runs against earlier records.

The table is pytest-benchmark's, one row per measurement: the test, the median, the
p20–p80 the run recorded, how many samples, calls per second (1 / median) and the timer
that produced the figures (``unknown (injected …)`` for a timer injected through the
seam: never a measurement).

The gate is ``kernelindex compare --against REF``'s, called, not rewritten: the
session's bundles (the files ``--kernelindex-out`` wrote, else each written to a
temporary folder) and REF are loaded by
:func:`kernelindex_sdk.compare.load`, paired and judged by
:func:`~kernelindex_sdk.compare.before_after`, its exit status decided by
:func:`~kernelindex_sdk.compare.gate`, its table written by ``compare --against``'s text
reporter. A run on either side timed by an injected timer fails the gate: such figures
are not measurements, so no verdict on them may pass.
"""

from __future__ import annotations

import io
import math
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import attrs

from bench_adapters.recording.bundles import InvalidBundle, write_bundle
from bench_adapters.recording.recorder import Recording
from kernelindex_sdk.base import recordformat
from kernelindex_sdk.base.escaping import one_line
from kernelindex_sdk.compare.units import TIME_UNITS, pick_unit, quantity, spread

#: The table's columns, in order.
COLUMNS = ("name", "median", "p20–p80", "samples", "ops/s", "timer")


@attrs.frozen
class Entry:
    """One measurement of the session: the test's name and what it recorded."""

    name: str
    recording: Recording
    #: Where ``--kernelindex-out`` wrote it (None when it was not written).
    path: Path | None = None


def _latency(recording: Recording) -> dict[str, float]:
    """The run's median, p20 and p80 in ns (whatever of them it recorded)."""
    spec = recording.bundle["run"][recordformat.SPEC_KEY]
    found = dict(spec.get(recordformat.TIMING_KEY, {}).get(recordformat.LATENCY_NS_KEY, {}))
    for item in spec.get(recordformat.MEASUREMENTS_KEY, ()):
        found.setdefault(item[recordformat.STATISTIC_KEY], item[recordformat.VALUE_KEY])
    return {key: float(value) for key, value in found.items()}


def _timer_text(recording: Recording) -> str:
    if recording.injected is not None:
        return f"unknown (injected {recording.injected.rpartition('.')[2]})"
    return recording.timer


def _ops(median_ns: float) -> str:
    rate = 1e9 / median_ns
    for suffix, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if rate >= size:
            return f"{rate / size:.4g}{suffix}"
    return f"{rate:.4g}"


def _row(entry: Entry, unit: tuple[str, float]) -> tuple[str, ...]:
    recording = entry.recording
    if recording.status != "passed":
        reason = one_line(recording.reason or "")[:60]
        return (entry.name, recording.status.upper(), reason, "", "", _timer_text(recording))
    latency = _latency(recording)
    median = latency.get("median", math.nan)
    samples = recording.bundle["run"][recordformat.SPEC_KEY][recordformat.TIMING_KEY].get(
        recordformat.SAMPLES_KEY
    )
    return (
        entry.name,
        quantity(median, unit),
        spread(latency.get("p20"), latency.get("p80"), unit),
        str(samples) if samples is not None else "—",
        _ops(median) if median > 0 else "—",
        _timer_text(recording),
    )


def results_table(entries: Sequence[Entry]) -> list[str]:
    """The table's lines (a header, a rule, one row per measurement), fastest first,
    every cell one printable line, all times in one unit."""
    medians = [_latency(e.recording).get("median") for e in entries]
    unit = pick_unit(medians, "latency") if any(medians) else TIME_UNITS[0]
    order = sorted(
        range(len(entries)),
        key=lambda i: (medians[i] is None, medians[i] or 0.0, entries[i].name),
    )
    rows = [COLUMNS] + [tuple(one_line(c) for c in _row(entries[i], unit)) for i in order]
    widths = [max(len(row[c]) for row in rows) for c in range(len(COLUMNS))]

    def line(row: tuple[str, ...]) -> str:
        return "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))

    rule = "  ".join("-" * width for width in widths)
    return [line(rows[0]).rstrip(), rule, *(line(row).rstrip() for row in rows[1:])]


@attrs.frozen
class Judged:
    """What the gate came to: the exit status (``compare --against``'s), its reason,
    and the verdict table's lines."""

    status: int
    reason: str
    lines: list[str]


def judge_session(
    entries: Sequence[Entry],
    reference: str | os.PathLike[str],
    *,
    threshold: float,
    fail_on: Sequence[str],
) -> Judged:
    """Judge the session's runs against the records under ``reference`` (the module doc)."""
    from kernelindex_sdk import compare
    from kernelindex_sdk.cli.report import REPORTERS
    from kernelindex_sdk.compare.refusal import refuse_injected

    problems: list[str] = []
    refused = 0
    with tempfile.TemporaryDirectory(prefix="kernelindex-session-") as folder:
        written = [os.fspath(entry.path) for entry in entries if entry.path is not None]
        if len(written) < len(entries):  # not all written out: all of them here
            written = [folder]
            for entry in entries:
                try:
                    write_bundle(folder, entry.recording.bundle)
                except InvalidBundle as error:  # counted as invalid: the gate fails on it
                    refused += 1
                    problems.append(f"{entry.name}: the record would not validate: {error}")
        loaded = compare.load(
            written, [os.fspath(reference)], on_problem=lambda p: problems.append(str(p))
        )
    assert loaded.reference is not None  # a before/after has both sides
    before, after = loaded.reference.runs, loaded.candidate.runs
    lines = [one_line(f"kernelindex: {problem}") for problem in problems]
    result = compare.before_after(before, after, threshold=threshold, lookup=loaded.index.lookup)
    outcome = compare.gate(
        result, tuple(fail_on), invalid=loaded.invalid + refused, unreadable=loaded.unreadable
    )
    outcome = refuse_injected(outcome, [*before, *after])
    text = io.StringIO()
    REPORTERS["compare --against", "text"](text, tuple(fail_on)).write(result, outcome)
    lines += text.getvalue().splitlines()
    return Judged(outcome.status, outcome.reason, lines)
