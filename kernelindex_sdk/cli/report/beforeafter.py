"""``compare --against``'s reporters: before/after
(:class:`~kernelindex_sdk.compare.beforeafter.BeforeAfter`) as text, Markdown, CSV, JSON,
GitHub annotations or JUnit XML.

Reporters only format: pairs arrive in report order (regressions first, worst first),
verdicts and reasons decided. Every pair shows its ratio (candidate ÷ reference), both
values with the noise each record carries, the verdict and its reason; then the runs
that could not be paired, then the summary (counts per verdict, the geometric-mean
ratio overall and per kernel × GPU) and the gate's outcome. Machine formats use base
units (ns, bytes) and every run's own digest. The CI formats put a failing pair on the
candidate's file and line (an annotation) or make each pair a test case (JUnit), with
``validate``'s writers (:mod:`~kernelindex_sdk.cli.report.ci`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from itertools import chain
from typing import IO, Any, Final, Protocol

from kernelindex_sdk.base import recordformat
from kernelindex_sdk.base.escaping import markdown_cell, one_line
from kernelindex_sdk.base.metrics import BASE_UNITS, METRIC_NAMES
from kernelindex_sdk.base.wording import counted
from kernelindex_sdk.cli.report.ci import JunitCase, annotation, write_junit
from kernelindex_sdk.cli.report.comparison import workload_text
from kernelindex_sdk.cli.report.writing import (
    csv_number,
    csv_ratio,
    json_number,
    markdown_row,
    markdown_rule,
    put_line,
    write_csv,
    write_markdown_table,
)
from kernelindex_sdk.compare.beforeafter import (
    RATIO_DIRECTION,
    SAME,
    SLOWER,
    VERDICTS,
    BeforeAfter,
    Outcome,
    Pair,
    Tally,
    Unpaired,
    pair_gpu,
)
from kernelindex_sdk.compare.noise import STDDEV, Noise
from kernelindex_sdk.compare.runs import INJECTED_NOTE, ResolvedRun, injected_timer, short_digest
from kernelindex_sdk.compare.units import number, pick_unit, quantity

#: The ratio's direction as people's formats write it: ``candidate ÷ reference``.
_DIRECTION: Final = RATIO_DIRECTION.replace("/", "÷")
#: How many unpaired runs a text or Markdown report lists per side before "and N more".
MAX_UNPAIRED: Final = 50


def what(run: ResolvedRun, gpu: str | None = None) -> str:
    """``GeGLU MLP [geglu] · forward · latency · NVIDIA H100 80GB HBM3`` (``gpu`` in
    place of the run's own: a pair's :func:`~kernelindex_sdk.compare.beforeafter.pair_gpu`)."""
    title, kernel = run.kernel_title, run.kernel
    name = f"{title} [{kernel}]" if kernel and kernel != title else title
    metric = METRIC_NAMES.get(run.metric, run.metric)
    return " · ".join([name, run.pass_ or "pass unknown", metric, gpu or run.gpu])


def pair_what(pair: Pair) -> str:
    """:func:`what` of a pair: its candidate, on both GPUs where they differ."""
    return what(pair.candidate, pair_gpu(pair))


def side_text(run: ResolvedRun, noise: Noise, unit: tuple[str, float]) -> str:
    """``100.0 µs (p20–p80 98.00–103.0 µs)``, ``236.8 µs (± 1.850 µs stddev, n=2112)``,
    ``9.257 ms (no noise: collapsed quantiles)`` or ``OOM: CUDA out of memory``; a run
    an injected timer timed ends ``[injected timer: not a measurement]``."""
    if injected_timer(run):
        return f"{_side_text(run, noise, unit)} [{INJECTED_NOTE}]"
    return _side_text(run, noise, unit)


def _side_text(run: ResolvedRun, noise: Noise, unit: tuple[str, float]) -> str:
    if not run.passed or run.value is None:
        return f"{run.status.upper()}: {run.reason}" if run.reason else run.status.upper()
    shown = quantity(run.value, unit)
    if noise.low is None or noise.high is None:
        return f"{shown} (no noise: {noise.why or 'none recorded'})"
    if noise.kind == STDDEV and run.stddev is not None:
        count = f", n={noise.samples}" if noise.samples is not None else ""
        return f"{shown} (± {quantity(run.stddev, unit)} stddev{count})"
    low, high = number(noise.low / unit[1]), number(noise.high / unit[1])
    return f"{shown} ({noise.label} {low}–{high} {unit[0]})"


def ratio_text(ratio: float | None) -> str:
    """``1.234×`` (three decimals: a 5 % threshold needs more than two), or ``n/a``."""
    return "n/a" if ratio is None else f"{ratio:.3f}×"


def _unit(pair: Pair) -> tuple[str, float]:
    return pick_unit((pair.reference.value, pair.candidate.value), pair.candidate.metric)


def _others(runs: tuple[ResolvedRun, ...]) -> str:
    return f" (+{len(runs)} other{'s' * (len(runs) != 1)} qualified, older)" if runs else ""


def tally_text(tally: Tally) -> str:
    """``3 pairs: 1 slower, 0 unsure, 1 faster, 1 same; geomean ratio 1.012×``."""
    counts = ", ".join(f"{tally.counts.get(v, 0)} {v}" for v in VERDICTS)
    pairs = f"{tally.pairs} pair{'s' * (tally.pairs != 1)}"
    return f"{pairs}: {counts}; geomean ratio {ratio_text(tally.geomean)}"


def unpaired_runs(lonely: Iterable[Unpaired]) -> int:
    """The runs of one side that no run of the other side measures the same."""
    return sum(u.runs for u in lonely)


def summary_line(result: BeforeAfter, outcome: Outcome) -> str:
    """The last line: the tally, the unpaired counts and the exit status with its reason."""
    unpaired_ref = unpaired_runs(result.unpaired_reference)
    unpaired_cand = unpaired_runs(result.unpaired_candidate)
    return (
        f"{tally_text(result.overall)} ({_DIRECTION}, threshold"
        f" {result.threshold * 100:g} %, paired by {result.pair_by}{_across(result)});"
        f" unpaired runs: {unpaired_ref} reference, {unpaired_cand} candidate;"
        f" exit {outcome.status}: {outcome.reason}"
    )


def _across(result: BeforeAfter) -> str:
    """`` across GPUs`` where the pairs may differ in their GPU."""
    return f" across {result.across.upper()}s" if result.across else ""


def _near_text(unpaired: Unpaired) -> str:
    if unpaired.near is None:
        return "nothing on the other side is close"
    found = "; ".join(str(d) for d in unpaired.differences) or "comparable"
    return f"closest {unpaired.near.where} ({short_digest(unpaired.near.digest)}): {found}"


def _lonely_sides(result: BeforeAfter) -> Iterator[tuple[str, tuple[Unpaired, ...]]]:
    """Each side that has unpaired runs (``reference``, then ``candidate``), with them."""
    for side, lonely in (
        ("reference", result.unpaired_reference),
        ("candidate", result.unpaired_candidate),
    ):
        if lonely:
            yield side, lonely


def reason_text(pair: Pair) -> str:
    """The pair's reason, and what a host-bound side means for it: such a figure times
    its host more than the kernel, so a pair across two environments is never shown
    as if it compared kernels without saying so."""
    bound = [
        side
        for side, run in (("reference", pair.reference), ("candidate", pair.candidate))
        if run.passed and recordformat.HOST_BOUND_FLAG in run.flags
    ]
    if not bound:
        return pair.reason
    who = "both sides" if len(bound) == 2 else f"the {bound[0]}"
    note = f"{who} host-bound (the median is over twice the GPU's own time)"
    if pair.reference.environment_digest != pair.candidate.environment_digest:
        note += (
            "; the two ran in different environments, so the ratio is the hosts' more than"
            " the kernels' (compare their GPU-only times, sourceNative gpu_only_ms_50)"
        )
    return f"{pair.reason}; {note}"


def _message(pair: Pair) -> str:
    """A pair on one line: verdict, ratio, what, both sides with their noise, the reason."""
    ref, cand = pair.reference, pair.candidate
    unit = _unit(pair)
    return (
        f"{pair.verdict} {ratio_text(pair.ratio)}: {pair_what(pair)} · {cand.implementation_label}"
        f" · {workload_text(cand)}; reference {side_text(ref, pair.reference_noise, unit)}"
        f" ({ref.implementation_label}, {ref.where}); candidate"
        f" {side_text(cand, pair.candidate_noise, unit)}; {reason_text(pair)}"
    )


def _lineage_label(run: ResolvedRun) -> str:
    """``liger``, ``liger liger_kernel.ops.rms_norm``: the implementation without its
    version (what pairing by lineage keeps)."""
    implementation = run.implementation
    if implementation is None:
        return run.implementation_label
    return " ".join(p for p in (implementation.provider, implementation.entry_point) if p)


class _Reporter:
    """What every before/after reporter is given: where to write, and the verdicts that
    fail the gate (which the CI formats mark as errors and failures)."""

    def __init__(self, out: IO[str], fail_on: tuple[str, ...] = ("slower",)) -> None:
        self.out, self.fail_on = out, fail_on


class TextReporter(_Reporter):
    """Five lines per changed pair for a terminal (what, workload, both sides with their
    noise, the reason), one per ``same`` pair (they are most of a report and need no
    reading), then the unpaired runs and the summary."""

    def write(self, result: BeforeAfter, outcome: Outcome) -> None:
        for pair in result.pairs:
            self._pair(pair)
        for side, lonely in _lonely_sides(result):
            other = "candidate" if side == "reference" else "reference"
            self.out.write("\n")
            runs = unpaired_runs(lonely)
            put_line(self.out, f"unpaired {side} runs: {runs} (no {other} run measures the same)")
            for unpaired in lonely[:MAX_UNPAIRED]:
                run = unpaired.run
                more = _others(unpaired.others)
                put_line(self.out, f"  {what(run)} · {run.implementation_label}  {run.where}{more}")
                put_line(self.out, f"    workload  {workload_text(run)}")
                put_line(self.out, f"    {_near_text(unpaired)}")
            if len(lonely) > MAX_UNPAIRED:
                left = len(lonely) - MAX_UNPAIRED
                put_line(self.out, f"  and {left} more (--format json lists all)")
        if result.by_kernel_gpu:
            self.out.write("\n")
            put_line(self.out, f"per kernel × GPU (ratio {_DIRECTION}):")
            for (kernel, gpu), tally in result.by_kernel_gpu:
                put_line(self.out, f"  {kernel} · {gpu}: {tally_text(tally)}")
        self.out.write("\n")
        put_line(self.out, summary_line(result, outcome))

    def _pair(self, pair: Pair) -> None:
        unit = _unit(pair)
        cand = pair.candidate
        head = f"{pair.verdict.upper():<7} {ratio_text(pair.ratio):>8}  {pair_what(pair)}"
        if pair.verdict == SAME:
            shown = f"{cand.implementation_label} · {workload_text(cand)}  ({reason_text(pair)})"
            if injected_timer(pair.reference) or injected_timer(cand):
                shown += f" [{INJECTED_NOTE}]"
            put_line(self.out, f"{head} · {shown}")
            return
        put_line(self.out, head)
        put_line(self.out, f"    workload   {workload_text(cand)}")
        for name, run, noise, others in (
            ("reference", pair.reference, pair.reference_noise, pair.reference_others),
            ("candidate", cand, pair.candidate_noise, pair.candidate_others),
        ):
            shown = side_text(run, noise, unit)
            label, where = run.implementation_label, run.where
            put_line(self.out, f"    {name}  {shown}  {label}  {where}{_others(others)}")
        put_line(self.out, f"    reason     {reason_text(pair)}")


class MarkdownReporter(_Reporter):
    """A PR comment or ``$GITHUB_STEP_SUMMARY``: the summary first, then one table.
    Every piece of text through :func:`~kernelindex_sdk.base.escaping.markdown_cell`."""

    def write(self, result: BeforeAfter, outcome: Outcome) -> None:
        write = self.out.write
        mark = "❌" if outcome.status else "✅"
        write(f"### {mark} Before/after: {markdown_cell(outcome.reason)}\n\n")
        write(f"{markdown_cell(summary_line(result, outcome))}\n\n")
        if result.by_kernel_gpu:
            header = ("kernel", "GPU", "pairs", *VERDICTS, f"geomean ratio ({_DIRECTION})")
            rows = [
                (kernel, gpu, str(tally.pairs), *_counts(tally), ratio_text(tally.geomean))
                for (kernel, gpu), tally in result.by_kernel_gpu
            ]
            numeric = (False, False, True, *(True for _ in VERDICTS), True)
            write_markdown_table(self.out, header, rows, numeric)
        changed = [p for p in result.pairs if p.verdict != SAME]
        same = [p for p in result.pairs if p.verdict == SAME]
        if changed:
            self._table(changed)
        if same:
            write(f"<details><summary>{counted(len(same), 'pair')} the same</summary>\n\n")
            self._table(same)
            write("</details>\n\n")
        for side, lonely in _lonely_sides(result):
            runs = unpaired_runs(lonely)
            write(f"<details><summary>{runs} unpaired {side} runs</summary>\n\n")
            for unpaired in lonely[:MAX_UNPAIRED]:
                run = unpaired.run
                shown = f"{what(run)} · {run.implementation_label} {workload_text(run)}"
                write(f"- {markdown_cell(shown)} — {markdown_cell(_near_text(unpaired))}\n")
            if len(lonely) > MAX_UNPAIRED:
                write(f"- and {len(lonely) - MAX_UNPAIRED} more\n")
            write("\n</details>\n\n")

    def _table(self, pairs: list[Pair]) -> None:
        """The pairs, a row each; a ``slower`` verdict in bold."""
        write = self.out.write
        ratio = f"ratio ({_DIRECTION})"
        header = ("verdict", ratio, "what", "workload", "reference", "candidate", "reason")
        write(markdown_row(header) + "\n")
        write(markdown_rule((False, True, False, False, False, False, False)) + "\n")
        for pair in pairs:
            unit = _unit(pair)
            ref, cand = pair.reference, pair.candidate
            verdict = markdown_cell(pair.verdict)
            cells = [
                f"**{verdict}**" if pair.verdict == SLOWER else verdict,
                *map(
                    markdown_cell,
                    [
                        ratio_text(pair.ratio),
                        f"{pair_what(pair)} · {ref.implementation_label} →"
                        f" {cand.implementation_label}",
                        workload_text(cand),
                        side_text(ref, pair.reference_noise, unit),
                        side_text(cand, pair.candidate_noise, unit),
                        reason_text(pair),
                    ],
                ),
            ]
            write(markdown_row(cells) + "\n")
        write("\n")


def _counts(tally: Tally) -> tuple[str, ...]:
    """How many pairs got each verdict, in :data:`VERDICTS` order."""
    return tuple(str(tally.counts.get(v, 0)) for v in VERDICTS)


def noise_json(noise: Noise) -> dict[str, Any]:
    return {
        "kind": noise.kind,
        "low": json_number(noise.low),
        "high": json_number(noise.high),
        "samples": noise.samples,
        "why": noise.why,
        "label": noise.label,
    }


def side_json(run: ResolvedRun, noise: Noise, others: tuple[ResolvedRun, ...]) -> dict[str, Any]:
    """One side of a pair: the run's own digest, where it was read, its value and noise."""
    implementation = run.implementation
    out: dict[str, Any] = {
        "digest": run.digest,
        "source": run.where,
        "status": run.status,
        "observedAt": run.observed_at,
        "implementation": {
            "digest": run.implementation_digest,
            "label": run.implementation_label,
            "provider": run.provider,
            "version": implementation.version if implementation else None,
        },
        "environmentDigest": run.environment_digest,
        "gpu": run.gpu,
        "hardware": run.hardware,
    }
    if run.passed:
        out.update(
            statistic=run.statistic,
            value=json_number(run.value),
            unit=BASE_UNITS.get(run.metric),
            noise=noise_json(noise),
        )
    else:
        out["reason"] = run.reason
    out["others"] = [r.digest for r in others]
    out["injectedTimer"] = injected_timer(run)
    return out


def _key_json(run: ResolvedRun) -> dict[str, Any]:
    return {
        "kernel": run.kernel,
        "pass": run.pass_,
        "metric": run.metric,
        "gpu": run.gpu,
        "workload": workload_text(run),
        "workloadDigest": run.workload_digest,
        "protocolDigest": run.protocol_digest,
        "hardware": run.hardware,
    }


def pair_json(pair: Pair) -> dict[str, Any]:
    return {
        "verdict": pair.verdict,
        "ratio": pair.ratio,
        "reason": reason_text(pair),
        **_key_json(pair.candidate),
        "reference": side_json(pair.reference, pair.reference_noise, pair.reference_others),
        "candidate": side_json(pair.candidate, pair.candidate_noise, pair.candidate_others),
    }


def unpaired_json(unpaired: Unpaired) -> dict[str, Any]:
    run = unpaired.run
    near = None
    if unpaired.near is not None:
        near = {
            "digest": unpaired.near.digest,
            "source": unpaired.near.where,
            "differences": [d.as_json() for d in unpaired.differences],
        }
    return {
        "digest": run.digest,
        "source": run.where,
        "status": run.status,
        "implementation": run.implementation_label,
        **_key_json(run),
        "others": [r.digest for r in unpaired.others],
        "near": near,
        "injectedTimer": injected_timer(run),
    }


def tally_json(tally: Tally) -> dict[str, Any]:
    return {
        "pairs": tally.pairs,
        "verdicts": {v: tally.counts.get(v, 0) for v in VERDICTS},
        "geomeanRatio": tally.geomean,
        "ratios": tally.ratios,
    }


class JsonReporter(_Reporter):
    """One object: ``pairs``, ``unpaired`` (``reference``, ``candidate``), ``summary``."""

    def write(self, result: BeforeAfter, outcome: Outcome) -> None:
        """Streamed: one pair (one unpaired run) per line as it is made, so a report of
        100,000 pairs never exists whole in memory; each line by the C encoder (an
        indented dump is pure Python, slow over such a report). ASCII only,
        as every JSON the project writes."""
        out = self.out
        out.write('{\n  "pairs": ')
        _lines(out, (pair_json(p) for p in result.pairs), "  ")
        out.write(',\n  "unpaired": {\n    "reference": ')
        _lines(out, (unpaired_json(u) for u in result.unpaired_reference), "    ")
        out.write(',\n    "candidate": ')
        _lines(out, (unpaired_json(u) for u in result.unpaired_candidate), "    ")
        summary = {
            **tally_json(result.overall),
            "ratioDirection": RATIO_DIRECTION,
            "threshold": result.threshold,
            "pairBy": result.pair_by,
            "across": result.across,
            "unpairedRuns": {
                "reference": unpaired_runs(result.unpaired_reference),
                "candidate": unpaired_runs(result.unpaired_candidate),
            },
            "byKernelGpu": [
                {"kernel": kernel, "gpu": gpu, **tally_json(tally)}
                for (kernel, gpu), tally in result.by_kernel_gpu
            ],
            "exitStatus": outcome.status,
            "outcome": outcome.reason,
        }
        text = json.dumps(summary, ensure_ascii=True, indent=2).replace("\n", "\n  ")
        out.write(f'\n  }},\n  "summary": {text}\n}}\n')


def _lines(out: IO[str], values: Iterable[Any], indent: str) -> None:
    """A JSON array, one compact item per line."""
    first = True
    for value in values:
        text = json.dumps(value, ensure_ascii=True)
        out.write(f"{'[' if first else ','}\n{indent}  {text}")
        first = False
    out.write("[]" if first else f"\n{indent}]")


CSV_COLUMNS: Final = (
    "verdict", "ratio", "reason", "kernel", "pass", "metric", "gpu", "workload",
    "unit", "reference_value", "reference_low", "reference_high", "reference_noise",
    "candidate_value", "candidate_low", "candidate_high", "candidate_noise",
    "reference_implementation", "candidate_implementation", "reference_status",
    "candidate_status", "reference_digest", "candidate_digest", "reference_source",
    "candidate_source", "reference_gpu",
)  # fmt: skip


class CsvReporter(_Reporter):
    """One CSV row per pair, base units; unpaired runs as rows with verdict ``unpaired``."""

    def write(self, result: BeforeAfter, outcome: Outcome) -> None:
        paired = (_pair_row(pair) for pair in result.pairs)
        write_csv(self.out, CSV_COLUMNS, chain(paired, _unpaired_rows(result)))


def _pair_row(pair: Pair) -> list[object]:
    ref, cand = pair.reference, pair.candidate
    return [
        pair.verdict,
        csv_ratio(pair.ratio),
        reason_text(pair),
        cand.kernel or "",
        cand.pass_ or "",
        cand.metric,
        cand.gpu,
        workload_text(cand),
        BASE_UNITS.get(cand.metric, ""),
        *_csv_side(ref, pair.reference_noise),
        *_csv_side(cand, pair.candidate_noise),
        ref.implementation_label,
        cand.implementation_label,
        ref.status,
        cand.status,
        ref.digest,
        cand.digest,
        ref.where,
        cand.where,
        ref.gpu,
    ]


def _unpaired_rows(result: BeforeAfter) -> Iterator[list[object]]:
    """A row per unpaired run (the qualified older ones too), its side's columns filled."""
    for side, lonely in _lonely_sides(result):
        for unpaired in lonely:
            for run in (unpaired.run, *unpaired.others):
                cells = dict.fromkeys(CSV_COLUMNS, "")
                cells.update(
                    verdict=f"unpaired {side}",
                    reason=_near_text(unpaired),
                    kernel=run.kernel or "",
                    metric=run.metric,
                    gpu=run.gpu,
                    workload=workload_text(run),
                    **{
                        f"{side}_implementation": run.implementation_label,
                        f"{side}_status": run.status,
                        f"{side}_digest": run.digest,
                        f"{side}_source": run.where,
                    },
                    **({"reference_gpu": run.gpu} if side == "reference" else {}),
                )
                cells["pass"] = run.pass_ or ""
                yield list(cells.values())


def _csv_side(run: ResolvedRun, noise: Noise) -> list[str]:
    if not run.passed or run.value is None:
        return ["", "", "", ""]
    return [csv_number(run.value), csv_number(noise.low), csv_number(noise.high), noise.label]


class GithubReporter(_Reporter):
    """An ``::error`` annotation per failing pair at the candidate's file and line, a
    ``::warning`` per other ``unsure`` pair, then the summary as a log line."""

    def write(self, result: BeforeAfter, outcome: Outcome) -> None:
        for pair in result.pairs:
            if pair.verdict in self.fail_on:
                level = "error"
            elif pair.verdict == "unsure":
                level = "warning"
            else:
                continue
            cand = pair.candidate
            title = f"kernelindex compare: {pair.verdict} {ratio_text(pair.ratio)}"
            found = annotation(level, _message(pair), file=cand.source, line=cand.line, title=title)
            self.out.write(found + "\n")
        put_line(self.out, summary_line(result, outcome))


class JunitReporter(_Reporter):
    """A test case per pair (class name: kernel · GPU; name: what was measured, never the
    verdict or a version): a failure where the verdict is one the gate fails on, passed
    otherwise; unpaired runs are not tests and are counted in
    the suite's summary line only (the text and JSON reports list them)."""

    def write(self, result: BeforeAfter, outcome: Outcome) -> None:
        cases = []
        for pair in result.pairs:
            cand = pair.candidate
            failed = pair.verdict in self.fail_on
            cases.append(
                JunitCase(
                    f"{cand.kernel or cand.kernel_title} · {pair_gpu(pair)}",
                    # The name stays the same from run to run (no verdict, no ratio,
                    # no version), so a CI system can follow one case's history.
                    f"{pair_what(pair)} · {_lineage_label(cand)} · {workload_text(cand)}",
                    "failure" if failed else None,
                    pair.verdict,
                    (one_line(_message(pair)),) if failed else (),
                )
            )
        write_junit(self.out, "kernelindex compare --against", cases)


Reporter = (
    TextReporter | MarkdownReporter | JsonReporter | CsvReporter | GithubReporter | JunitReporter
)


class ReporterFactory(Protocol):
    """A reporter class: the stream, and the verdicts that fail the gate."""

    def __call__(self, out: IO[str], fail_on: tuple[str, ...] = ...) -> Reporter: ...
