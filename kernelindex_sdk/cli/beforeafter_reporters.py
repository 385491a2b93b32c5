"""The CI formats of ``compare --against``: GitHub annotations and JUnit XML.

They sit beside validate's reporters (:mod:`~kernelindex_sdk.cli.reporters`) and reuse
its escaping of workflow-command data and its JUnit writer, so one rule covers every
command: whatever a record holds, one annotation is one line and the XML is
well-formed. The other formats are the compare layer's
(:mod:`~kernelindex_sdk.compare.beforeafter_report`).
"""

from __future__ import annotations

from typing import IO

from kernelindex_sdk.base.escaping import github_data, github_property, one_line
from kernelindex_sdk.cli.reporters import JunitCase, write_junit
from kernelindex_sdk.compare.beforeafter import BeforeAfter, Outcome, Pair
from kernelindex_sdk.compare.beforeafter_report import (
    ratio_text,
    side_text,
    summary_line,
    what,
)
from kernelindex_sdk.compare.report import workload_text
from kernelindex_sdk.compare.runs import ResolvedRun
from kernelindex_sdk.compare.units import pick_unit


def _message(pair: Pair) -> str:
    unit = pick_unit((pair.reference.value, pair.candidate.value), pair.candidate.metric)
    ref, cand = pair.reference, pair.candidate
    return (
        f"{pair.verdict} {ratio_text(pair.ratio)}: {what(cand)} · {cand.implementation_label}"
        f" · {workload_text(cand)}; reference {side_text(ref, pair.reference_noise, unit)}"
        f" ({ref.implementation_label}, {ref.where}); candidate"
        f" {side_text(cand, pair.candidate_noise, unit)}; {pair.reason}"
    )


def _lineage_label(run: ResolvedRun) -> str:
    """``liger``, ``liger liger_kernel.ops.rms_norm``: the implementation without its
    version (what pairing by lineage keeps)."""
    implementation = run.implementation
    if implementation is None:
        return run.implementation_label
    return " ".join(p for p in (implementation.provider, implementation.entry_point) if p)


class GithubReporter:
    """An ``::error`` annotation per failing pair at the candidate's file and line, a
    ``::warning`` per other ``unsure`` pair, then the summary as a log line."""

    def __init__(self, out: IO[str], fail_on: tuple[str, ...] = ("slower",)) -> None:
        self.out, self.fail_on = out, fail_on

    def write(self, result: BeforeAfter, outcome: Outcome) -> None:
        for pair in result.pairs:
            if pair.verdict in self.fail_on:
                level = "error"
            elif pair.verdict == "unsure":
                level = "warning"
            else:
                continue
            cand = pair.candidate
            fields = [f"file={github_property(cand.source)}"]
            if cand.line is not None:
                fields.append(f"line={cand.line}")
            title = f"kernelindex compare: {pair.verdict} {ratio_text(pair.ratio)}"
            fields.append(f"title={github_property(title)}")
            self.out.write(f"::{level} {','.join(fields)}::{github_data(_message(pair))}\n")
        self.out.write(one_line(summary_line(result, outcome)) + "\n")


class JunitReporter:
    """A test case per pair (class name: kernel · GPU; name: what was measured, never the
    verdict or a version): a failure where the verdict is one the gate fails on, passed
    otherwise; unpaired runs are not tests and are counted in
    the suite's summary line only (the text and JSON reports list them)."""

    def __init__(self, out: IO[str], fail_on: tuple[str, ...] = ("slower",)) -> None:
        self.out, self.fail_on = out, fail_on

    def write(self, result: BeforeAfter, outcome: Outcome) -> None:
        cases = []
        for pair in result.pairs:
            cand = pair.candidate
            failed = pair.verdict in self.fail_on
            cases.append(
                JunitCase(
                    f"{cand.kernel or cand.kernel_title} · {cand.gpu}",
                    # The name stays the same from run to run (no verdict, no ratio,
                    # no version), so a CI system can follow one case's history.
                    f"{what(cand)} · {_lineage_label(cand)} · {workload_text(cand)}",
                    "failure" if failed else None,
                    pair.verdict,
                    (one_line(_message(pair)),) if failed else (),
                )
            )
        write_junit(self.out, "kernelindex compare --against", cases)
