"""The pieces every page of the site is made of: the page shell, tables, links, and
the file names pages live at.

Everything here writes text that came from input through
:func:`~kernelindex_sdk.base.escaping.html_text` (a value on one line) or
:func:`~kernelindex_sdk.base.escaping.html_lines` (a ``<pre>`` block); links taken
from a record through :func:`~kernelindex_sdk.base.escaping.html_href`. Names of
files are never input: a record's page is named by its digest's hex, a kernel's by
its slug when it is one (else by a hash of its name), so no name read from a record
reaches a path.

Pages hold no script. Each names a Content Security Policy that allows none, styles
only from the site's own ``style.css`` and images only inline: were an escape ever
missed, a browser would still run nothing.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from typing import Final

from kernelindex_sdk.base.escaping import html_text

#: The site's one stylesheet, at its root.
STYLESHEET: Final = "style.css"
#: What a page may load: no script at all, styles from the site, inline images.
POLICY: Final = "default-src 'none'; style-src 'self'; img-src 'self' data:"
#: A kernel name used as a file name as it is (the schema's slug, lower case).
_SLUG = re.compile(r"[a-z0-9][a-z0-9._-]{0,80}")
#: A record digest: its hex names the record's page.
_DIGEST = re.compile(r"sha256:([0-9a-f]{64})")


def esc(text: object) -> str:
    """Any value as escaped HTML text on one line."""
    return html_text(text if isinstance(text, str) else str(text))


def kernel_file(kernel: str | None) -> str:
    """``kernels/<slug>.html``: a kernel's page, by its name where that is a plain slug
    (else ``_k-<hash>``; a run whose Workload was not given: ``_no-workload``)."""
    if kernel is None:
        return "kernels/_no-workload.html"
    if _SLUG.fullmatch(kernel):
        return f"kernels/{kernel}.html"
    hashed = hashlib.sha256(kernel.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"kernels/_k-{hashed}.html"


def record_file(digest: str) -> str | None:
    """``records/<hex>.html``: a record's page; None for what is no digest."""
    found = _DIGEST.fullmatch(digest)
    return f"records/{found.group(1)}.html" if found else None


def relative(from_page: str, to: str) -> str:
    """The link from one page of the site to another (both site paths)."""
    depth = from_page.count("/")
    return "../" * depth + to


def link(from_page: str, to: str | None, text: str) -> str:
    """``<a href=…>text</a>``, or the text alone where there is no page."""
    if to is None:
        return esc(text)
    return f'<a href="{esc(relative(from_page, to))}">{esc(text)}</a>'


def page(
    path: str, title: str, body: Iterable[str], *, crumbs: Sequence[tuple[str, str]] = ()
) -> bytes:
    """A whole page at site path ``path``: head, a line of links back, the body."""
    home = relative(path, "index.html")
    trail = "".join(f" › {link(path, to, text)}" for text, to in crumbs)
    head = (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,">'
        f'<link rel="stylesheet" href="{esc(relative(path, STYLESHEET))}">'
        f"<title>{esc(title)}</title></head><body>"
        f'<nav><a href="{esc(home)}">overview</a>{trail}</nav><main>'
    )
    return (head + "".join(body) + "</main></body></html>\n").encode("utf-8")


def table(header: Sequence[str], rows: Iterable[Sequence[str]], *, css: str = "") -> str:
    """A table whose header cells are plain text and whose cells are HTML already."""
    cls = f' class="{css}"' if css else ""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    thead = f"<thead><tr>{head}</tr></thead>" if any(header) else ""
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table{cls}>{thead}<tbody>{body}</tbody></table>"


def legend(labels: Sequence[str]) -> str:
    """The colour of each series, in the charts' order (classes ``c0`` … ``c9``)."""
    items = "".join(
        f'<li><span class="swatch c{index % 10}"></span>{esc(label)}</li>'
        for index, label in enumerate(labels)
    )
    return f'<ul class="legend">{items}</ul>'


STYLE: Final = """\
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1b1b1b}
nav{padding:.6em 1.2em;background:#f3f4f6;border-bottom:1px solid #ddd}
main{padding:0 1.2em 2em;max-width:1500px}
.panels{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:0 2em}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em}h3{font-size:1.05em;margin-bottom:.2em}
table{border-collapse:collapse;margin:.6em 0;font-size:.92em}
th,td{border:1px solid #d6d8dc;padding:.25em .55em;text-align:left;vertical-align:top}
th{background:#f7f7f9}
td.num,th.num{text-align:right}
.sub{color:#555;margin:.1em 0 .4em}
.note{color:#555;font-size:.9em}
pre{background:#f7f7f9;border:1px solid #e1e3e6;padding:.8em;overflow:auto;font-size:.85em}
code{font-size:.92em}
svg.chart{width:100%;max-width:760px;height:auto;display:block;background:#fff}
svg .axis{stroke:#333;stroke-width:1}
svg .grid{stroke:#e6e6e6;stroke-width:1}
svg .tick{font-size:11px;fill:#333;stroke:none}
svg .title{font-size:12px;fill:#222;stroke:none}
svg .band{fill-opacity:.18;stroke:none}
svg .line{stroke-width:1.8}
svg .whisker{stroke-width:1.5}
svg circle{stroke:#fff;stroke-width:.8}
svg .failure{font-size:14px;stroke:none}
svg .marker line{stroke-dasharray:5 4;stroke-width:1.5}
svg .marker text{font-size:11px;stroke:none}
svg .marker.worse line{stroke:#c62828}svg .marker.worse text{fill:#c62828}
svg .marker.better line{stroke:#2e7d32}svg .marker.better text{fill:#2e7d32}
svg .marker.neutral line{stroke:#777}svg .marker.neutral text{fill:#777}
ul.legend{list-style:none;padding:0;margin:.2em 0 .6em;display:flex;flex-wrap:wrap;gap:.4em 1.2em}
.swatch{display:inline-block;width:.9em;height:.9em;margin-right:.35em;vertical-align:-.1em;border-radius:2px}
.c0{background:#1f77b4}.c1{background:#ff7f0e}.c2{background:#2ca02c}.c3{background:#d62728}
.c4{background:#9467bd}.c5{background:#8c564b}.c6{background:#e377c2}.c7{background:#7f7f7f}
.c8{background:#bcbd22}.c9{background:#17becf}
.slower{color:#c62828;font-weight:600}.faster{color:#2e7d32;font-weight:600}
.unsure{color:#8a6d00}.same{color:#555}
"""
