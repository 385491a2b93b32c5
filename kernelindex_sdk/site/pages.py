"""The site's pages, each from loaded runs: the overview, a kernel's page, a record's
page, the schemas and a before/after. Each function returns one whole page (bytes);
:class:`~kernelindex_sdk.site.Site` says which exist and at which path.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import orjson

from kernelindex_sdk.base.escaping import html_href, html_lines
from kernelindex_sdk.base.metrics import LATENCY, METRIC_NAMES
from kernelindex_sdk.base.recordformat import KIND_KEY, METADATA_KEY, SPEC_KEY, TITLE_KEY
from kernelindex_sdk.compare.beforeafter import VERDICTS, BeforeAfter, Pair
from kernelindex_sdk.compare.grouping import group_runs, natural_order
from kernelindex_sdk.compare.runs import ResolvedRun, short_digest, show_value
from kernelindex_sdk.compare.sweeps import Panel, panels
from kernelindex_sdk.compare.units import pick_unit, quantity
from kernelindex_sdk.site.charts import describe, panel_chart
from kernelindex_sdk.site.html import (
    esc,
    kernel_file,
    legend,
    link,
    page,
    record_file,
    relative,
    table,
)
from kernelindex_sdk.site.svg import Chart, ChartPoint, ChartSeries, render

#: Rows a listing shows before it says how many more there are.
LISTED: Final = 200
#: Most pairs the before/after chart draws.
CHARTED_PAIRS: Final = 1000
#: The references of a run, by the spec field that holds each.
REFERENCES: Final = (
    ("workload", "workloadDigest"),
    ("implementation", "implementationDigest"),
    ("protocol", "protocolDigest"),
    ("environment", "environmentDigest"),
)


def when(run: ResolvedRun) -> str:
    return run.observed_at[:10] if run.dated else "undated"


def run_text(run: ResolvedRun) -> str:
    """A run's value as a cell says it: ``1.234 ms`` or its status."""
    if run.passed and run.value is not None:
        return quantity(run.value, pick_unit([run.value], run.metric))
    return run.status


def overview(
    path: str,
    title: str,
    kernels: Mapping[str | None, Sequence[ResolvedRun]],
    notes: Sequence[str],
    extra_links: Sequence[tuple[str, str]],
) -> bytes:
    """Kernels × GPUs: the newest result, the fastest implementation, how many runs."""
    gpus = sorted({run.gpu for runs in kernels.values() for run in runs}, key=natural_order)
    rows = []
    for kernel, runs in kernels.items():
        name = runs[0].kernel_title if kernel is not None else "(workload not given)"
        cells = [link(path, kernel_file(kernel), name)]
        by_gpu: dict[str, list[ResolvedRun]] = {}
        for run in runs:
            by_gpu.setdefault(run.gpu, []).append(run)
        target = kernel_file(kernel)
        cells.extend(_cell(path, target, gpu, by_gpu.get(gpu, ())) for gpu in gpus)
        rows.append(cells)
    total = sum(len(runs) for runs in kernels.values())
    body = [
        f"<h1>{esc(title)}</h1>",
        f'<p class="sub">{total} runs of {len(kernels)} kernels on {len(gpus)} GPUs.'
        " Each cell: the newest result, the implementation fastest on most shapes"
        " (latency, newest runs), and how many runs.</p>",
        *(f'<p class="note">{esc(note)}</p>' for note in notes),
        table(["kernel", *gpus], rows, css="overview"),
        "<h2>More</h2><ul>",
        *(f"<li>{link(path, to, text)}</li>" for text, to in extra_links),
        "</ul>",
    ]
    return page(path, title, body)


def gpu_anchor(gpu: str) -> str:
    """The id of a GPU's section on a kernel's page (never the name itself: it is input)."""
    return "gpu-" + hashlib.sha256(gpu.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def _cell(path: str, kernel_page_: str, gpu: str, runs: Sequence[ResolvedRun]) -> str:
    """One overview cell: the newest result, the fastest implementation, the runs
    (linked to the GPU's section of the kernel's page)."""
    if not runs:
        return "—"
    newest = max(runs, key=lambda run: run.recency)
    lines = [
        f"newest: {esc(run_text(newest))} · {esc(newest.implementation_label)}"
        f" · {esc(when(newest))}"
    ]
    fastest = fastest_implementation(runs)
    if fastest is not None:
        label, wins, shapes = fastest
        lines.append(f"fastest: {esc(label)} ({wins} of {shapes} shapes)")
    count = f"{len(runs)} run{'s' * (len(runs) != 1)}"
    lines.append(link(path, f"{kernel_page_}#{gpu_anchor(gpu)}", count))
    return "<br>".join(lines)


def fastest_implementation(runs: Iterable[ResolvedRun]) -> tuple[str, int, int] | None:
    """The implementation whose newest latency is lowest in most groups of two or more
    implementations: its label, in how many groups, of how many; None if no group has two."""
    wins: Counter[str] = Counter()
    shapes = 0
    for group in group_runs(runs).groups:
        if group.metric != LATENCY:
            continue
        timed = [row for row in group.rows if row.newest.passed and row.newest.value is not None]
        if len(timed) < 2:
            continue
        shapes += 1
        best = min(timed, key=lambda row: (row.newest.value, row.label))
        wins[best.label] += 1
    if not shapes:
        return None
    label, count = min(wins.items(), key=lambda item: (-item[1], natural_order(item[0])))
    return label, count, shapes


def kernel_page(
    path: str, kernel: str | None, runs: Sequence[ResolvedRun], history: Sequence[str] = ()
) -> bytes:
    """A kernel's sweeps per GPU and implementation, each a chart and a table, and its
    history charts (``history``: sections already written, or none)."""
    name = runs[0].kernel_title if kernel is not None else "(workload not given)"
    found, unplaced = panels(group_runs(runs))
    by_gpu: dict[str, list[Panel]] = {}
    for panel in found:
        by_gpu.setdefault(panel.gpu, []).append(panel)
    body = [
        f"<h1>{esc(name)}</h1>",
        f'<p class="sub">{len(runs)} runs on {len(by_gpu)} GPUs. Each point: a newest run'
        " (hover for its value, click for its record); the band or whiskers: its recorded"
        " spread; ✕: a run that did not pass.</p>",
    ]
    if unplaced:
        body.append(f'<p class="note">{unplaced} groups have no Workload record: not drawn.</p>')
    for gpu in sorted(by_gpu, key=natural_order):
        body.append(f'<h2 id="{gpu_anchor(gpu)}">{esc(gpu)}</h2><div class="panels">')
        body.extend(_panel_section(panel, path) for panel in by_gpu[gpu])
        body.append("</div>")
    if history:
        body.append("<h2>History</h2>")
        body.extend(history)
    return page(path, name, body, crumbs=[(name, path)])


def _panel_section(panel: Panel, path: str) -> str:
    chart = panel_chart(panel, path)
    labels = [series.label for series in chart.series]
    unit = pick_unit([p.value for s in panel.series for p in s.points], panel.metric)
    cells: dict[tuple[int, str], str] = {}
    for series in panel.series:
        for point in series.points:
            cells[(id(series), show_value(point.x))] = link(
                path, record_file(point.run.digest), describe(point.run, unit)
            )
        for failure in series.failures:
            cells[(id(series), show_value(failure.x))] = link(
                path, record_file(failure.run.digest), describe(failure.run, unit)
            )
    rows = [
        [esc(show_value(x)), *(cells.get((id(s), show_value(x)), "—") for s in panel.series)]
        for x in panel.x_values
    ]
    return (
        f'<section><h3>{esc(panel.title)}</h3><p class="sub">{esc(panel.subtitle)}'
        f" · {esc(panel.protocol)}</p>"
        + legend(labels)
        + render(chart)
        + table([panel.x_name or "workload", *labels], rows)
        + "</section>"
    )


def record_page(
    path: str,
    digest: str,
    record: Mapping[str, Any] | None,
    run: ResolvedRun | None,
    lookup: Mapping[str, Mapping[str, Any]],
    referenced_by: Sequence[str],
    referenced_count: int,
    schema_link: str | None,
) -> bytes:
    """One record by its digest: what it is, what it references and what references
    it, the provenance of each field it (or an environment or protocol it references)
    declares, the links it holds, and its JSON."""
    kind = str(record.get(KIND_KEY)) if record is not None else "BenchmarkRun"
    metadata = record.get(METADATA_KEY, {}) if record is not None else {}
    name = str(metadata.get("name", short_digest(digest)))
    body = [f"<h1>{esc(kind)} {esc(name)}</h1>", f'<p class="sub"><code>{esc(digest)}</code></p>']
    if metadata.get(TITLE_KEY):
        body.append(f"<p>{esc(metadata[TITLE_KEY])}</p>")
    if run is not None:
        body.append(_run_facts(path, run))
    spec = record.get(SPEC_KEY, {}) if record is not None else {}
    body.append(_references(path, spec, lookup))
    if referenced_count:
        shown = "".join(f"<li>{link(path, record_file(d), d)}</li>" for d in referenced_by)
        more = referenced_count - len(referenced_by)
        tail = f'<p class="note">and {more} more</p>' if more > 0 else ""
        body.append(f"<h2>Referenced by {referenced_count} runs</h2><ul>{shown}</ul>{tail}")
    body.append(_provenance(path, digest, spec, lookup))
    body.append(_links(spec))
    if schema_link is not None:
        body.append(f"<p>Schema: {link(path, schema_link, kind)}</p>")
    if record is not None:
        text = orjson.dumps(record, option=orjson.OPT_INDENT_2).decode("utf-8")
        body.append(f"<h2>JSON</h2><pre>{html_lines(text)}</pre>")
    else:
        body.append(
            '<p class="note">The record itself was not loaded (a store read by its facts).</p>'
        )
    return page(path, f"{kind} {name}", body, crumbs=[(f"{kind} {name}", path)])


def _run_facts(path: str, run: ResolvedRun) -> str:
    unit = pick_unit([run.value], run.metric)
    rows = [
        ["kernel", link(path, kernel_file(run.kernel), run.kernel_title)],
        ["pass", esc(run.pass_ or "—")],
        ["shape", esc(run.workload.describe() if run.workload else "—")],
        ["implementation", esc(run.implementation_label)],
        ["GPU", esc(run.gpu)],
        ["metric", esc(METRIC_NAMES.get(run.metric, run.metric))],
        ["result", esc(describe(run, unit))],
        ["observed", esc(run.observed_at if run.dated else "undated (observed_at_unknown)")],
        ["read from", esc(f"{run.where} {run.pointer}".strip())],
        ["quality flags", esc(", ".join(run.flags) or "—")],
    ]
    return "<h2>Run</h2>" + table(["", ""], rows)


def _references(path: str, spec: Mapping[str, Any], lookup: Mapping[str, Mapping[str, Any]]) -> str:
    rows = []
    for member, field in REFERENCES:
        target = spec.get(field)
        if not isinstance(target, str):
            continue
        found = lookup.get(target)
        if found is None:
            rows.append([esc(member), esc("not given"), f"<code>{esc(target)}</code>"])
            continue
        name = str(found.get(METADATA_KEY, {}).get("name", short_digest(target)))
        rows.append(
            [esc(member), link(path, record_file(target), name), f"<code>{esc(target)}</code>"]
        )
    return "<h2>References</h2>" + table(["", "record", "digest"], rows) if rows else ""


def _provenance(
    path: str, digest: str, spec: Mapping[str, Any], lookup: Mapping[str, Mapping[str, Any]]
) -> str:
    """Every provenance entry this record declares, and those of the environment and
    protocol it references (each saying whose)."""
    sources: list[tuple[str, Mapping[str, Any]]] = [(digest, spec)]
    for _, field in REFERENCES:
        target = spec.get(field)
        if isinstance(target, str) and target in lookup:
            sources.append((target, lookup[target].get(SPEC_KEY, {})))
    rows = []
    for owner, owner_spec in sources:
        entries = owner_spec.get("provenance")
        if not isinstance(entries, Mapping):
            continue
        for pointer, entry in sorted(entries.items()):
            entry = entry if isinstance(entry, Mapping) else {}
            rows.append(
                [
                    link(path, record_file(owner), short_digest(owner)),
                    f"<code>{esc(pointer)}</code>",
                    esc(entry.get("origin", "")),
                    esc(entry.get("detail", "")),
                ]
            )
    if not rows:
        return ""
    return "<h2>Provenance per field</h2>" + table(["record", "field", "origin", "detail"], rows)


def _links(spec: Mapping[str, Any]) -> str:
    """The URLs the record holds (a harness's or a source's ``repository``): linked
    when http(s), else shown as text."""
    found = []
    for holder in ("harness", "source"):
        inner = spec.get(holder)
        if isinstance(inner, Mapping) and isinstance(inner.get("repository"), str):
            found.append(inner["repository"])
    if not found:
        return ""
    items = []
    for url in found:
        href = html_href(url)
        shown = f'<a href="{href}">{esc(url)}</a>' if href else f"{esc(url)} (not linked)"
        items.append(f"<li>{shown}</li>")
    return "<h2>Links</h2><ul>" + "".join(items) + "</ul>"


def schemas_page(path: str, entries: Sequence[tuple[str, str, str, str]]) -> bytes:
    """Every schema: kind, version, ``$id`` and its file in the site."""
    rows = [
        [
            esc(kind),
            esc(version),
            f"<code>{esc(id_)}</code>",
            link(path, file, file.rsplit("/", 1)[-1]),
        ]
        for kind, version, id_, file in entries
    ]
    body = [
        "<h1>Schemas</h1>",
        '<p class="sub">The JSON Schemas (Draft 2020-12) the records are checked against;'
        " digests, semantic rules and references are checked by <code>kernelindex"
        " validate</code>.</p>",
        table(["kind", "apiVersion", "$id", "file"], rows),
    ]
    return page(path, "Schemas", body, crumbs=[("schemas", path)])


def before_after_page(path: str, result: BeforeAfter) -> bytes:
    """The pairs of a before/after, worst first: verdict, ratio (candidate ÷ reference),
    both runs linked; a chart of every pair's ratio; the unpaired runs counted."""
    tally = result.overall
    counts = ", ".join(f"{tally.counts.get(v, 0)} {v}" for v in VERDICTS)
    geomean = f"{tally.geomean:.3f}×" if tally.geomean is not None else "n/a"
    unpaired = len(result.unpaired_reference), len(result.unpaired_candidate)
    body = [
        "<h1>Before/after</h1>",
        f'<p class="sub">{tally.pairs} pairs: {esc(counts)}. Geometric mean of candidate ÷'
        f" reference: {esc(geomean)} (above 1: the candidate is slower or needs more memory)."
        f" Threshold {result.threshold:.1%}, paired by {esc(result.pair_by)}."
        f" Unpaired: {unpaired[0]} reference, {unpaired[1]} candidate.</p>",
    ]
    if result.pairs:
        body.append(legend([v for v in VERDICTS]))
        body.append(render(_ratio_chart(result.pairs, path)))
    rows = [_pair_row(path, pair) for pair in result.pairs[:LISTED]]
    body.append(
        table(["verdict", "ratio", "kernel", "shape", "GPU", "reference", "candidate", "why"], rows)
    )
    if len(result.pairs) > LISTED:
        body.append(
            f'<p class="note">and {len(result.pairs) - LISTED} more pairs (all of them:'
            " kernelindex compare --against … --format csv)</p>"
        )
    return page(path, "Before/after", body, crumbs=[("before/after", path)])


def _pair_row(path: str, pair: Pair) -> list[str]:
    ratio = f"{pair.ratio:.3f}×" if pair.ratio is not None else "n/a"
    run = pair.candidate
    return [
        f'<span class="{esc(pair.verdict)}">{esc(pair.verdict)}</span>',
        esc(ratio),
        link(path, kernel_file(run.kernel), run.kernel_title),
        esc(run.workload.describe() if run.workload else "—"),
        esc(run.gpu),
        link(
            path,
            record_file(pair.reference.digest),
            f"{pair.reference.implementation_label}: {run_text(pair.reference)}",
        ),
        link(path, record_file(run.digest), f"{run.implementation_label}: {run_text(run)}"),
        esc(pair.reason),
    ]


def _ratio_chart(pairs: Sequence[Pair], path: str) -> Chart:
    """Every pair's ratio, sorted, one series per verdict (coloured as the legend); of
    many pairs, :data:`CHARTED_PAIRS` evenly spaced in that order (both ends kept)."""
    ordered = sorted(
        (p for p in pairs if p.ratio is not None and p.ratio > 0), key=lambda p: p.ratio or 0
    )
    if len(ordered) > CHARTED_PAIRS:
        last = len(ordered) - 1
        picked = sorted({round(i * last / (CHARTED_PAIRS - 1)) for i in range(CHARTED_PAIRS)})
        ordered = [ordered[i] for i in picked]
    series = []
    for verdict in VERDICTS:
        points = []
        for index, pair in enumerate(ordered):
            if pair.verdict != verdict or pair.ratio is None:
                continue
            target = record_file(pair.candidate.digest)
            points.append(
                ChartPoint(
                    index,
                    pair.ratio,
                    tip=f"{pair.candidate.kernel_title} {pair.candidate.gpu}:"
                    f" {pair.ratio:.3f}× ({verdict})",
                    href=None if target is None else relative(path, target),
                )
            )
        series.append(ChartSeries(verdict, tuple(points)))
    return Chart(
        x_labels=tuple("" for _ in ordered),
        x_positions=None,
        x_title=f"{len(ordered)} pairs, by ratio",
        y_title="candidate ÷ reference",
        series=tuple(series),
        log_y=True,
        description="ratio of every pair, candidate over reference",
    )
