"""A static HTML report of loaded runs: ``kernelindex report``'s site.

    from kernelindex_sdk import compare, site

    loaded = compare.load(["imported/"])
    report = site.Site(loaded.index, loaded.candidate.runs)
    report.paths()                     # every page's path: index.html, kernels/…, records/…
    report.page("index.html")          # one page, rendered on demand (a server's way)
    site.media_type("index.html")      # the Content-Type to serve it with
    site.write_site(report, "out/")    # all of it, into a folder, whole or not at all

The site is self-contained: relative links only, one stylesheet, charts as inline SVG
(:mod:`~kernelindex_sdk.site.svg`), no script and nothing fetched, so it reads the same
from ``file://`` and from any static host. Its pages:

* ``index.html`` — kernels × GPUs: the newest result, the fastest implementation, how
  many runs;
* ``kernels/<kernel>.html`` — the kernel's sweeps per GPU and implementation, each a
  chart with the spread drawn and a table linking every point's run;
* ``records/<hex>.html`` — each record by its digest: its JSON, the provenance of its
  fields, what it references and what references it;
* ``schemas/index.html`` and the schema files;
* ``compare.html`` — with a reference set, the before/after
  (:func:`~kernelindex_sdk.compare.beforeafter.before_after`).

Everything a record holds is escaped (:mod:`~kernelindex_sdk.site.html`).
"""

from __future__ import annotations

from kernelindex_sdk.site.build import Site, media_type
from kernelindex_sdk.site.writing import SiteRefused, write_site

__all__ = ["Site", "SiteRefused", "media_type", "write_site"]
