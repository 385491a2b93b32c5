"""Which pages a site has and what each holds: :class:`Site`, from loaded runs.

A site is built lazily: the constructor sorts the runs by kernel and indexes what
references what (one pass), and each page is rendered only when asked for
(:meth:`Site.page`), so a server can answer one page without writing the others and
:func:`~kernelindex_sdk.site.writing.write_site` can write them one at a time.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from kernelindex_sdk.base.recordformat import KIND_KEY
from kernelindex_sdk.compare.beforeafter import BeforeAfter
from kernelindex_sdk.compare.grouping import natural_order
from kernelindex_sdk.compare.records import RecordIndex
from kernelindex_sdk.compare.runs import ResolvedRun
from kernelindex_sdk.site import pages
from kernelindex_sdk.site.historycharts import history_sections
from kernelindex_sdk.site.html import STYLE, STYLESHEET, kernel_file, record_file

#: Runs a record's page lists among those referencing it (all are counted).
REFERRERS: Final = 50
SCHEMAS: Final = "schemas/index.html"
COMPARE: Final = "compare.html"


class Site:
    """The pages of a report of ``runs`` (resolved from ``index``), and, given a
    before/after (``against``, of ``reference`` and ``runs``), its page. Every record
    of ``index`` has a page, the reference runs' too."""

    def __init__(
        self,
        index: RecordIndex,
        runs: Sequence[ResolvedRun],
        *,
        reference: Sequence[ResolvedRun] = (),
        against: BeforeAfter | None = None,
        title: str = "kernelindex report",
        notes: Sequence[str] = (),
    ) -> None:
        self.index = index
        self.title = title
        self.notes = tuple(notes)
        self.against = against
        kernels: dict[str | None, list[ResolvedRun]] = {}
        self._runs: dict[str, ResolvedRun] = {}
        self._referrers: dict[str, list[str]] = {}
        self._referred: dict[str, int] = {}
        for run in runs:
            kernels.setdefault(run.kernel, []).append(run)
        for run in (*runs, *reference):
            if run.digest in self._runs:
                continue
            self._runs[run.digest] = run
            for digest in (
                run.workload_digest,
                run.implementation_digest,
                run.protocol_digest,
                run.environment_digest,
            ):
                count = self._referred.get(digest, 0)
                self._referred[digest] = count + 1
                if count < REFERRERS:
                    self._referrers.setdefault(digest, []).append(run.digest)
        order = sorted(kernels, key=lambda k: (k is None, natural_order(k or "")))
        self.kernels = {kernel: kernels[kernel] for kernel in order}
        self._kernel_files = {kernel_file(kernel): kernel for kernel in self.kernels}
        self._schemas = _schema_files()

    def paths(self) -> Iterator[str]:
        """Every path of the site, pages and files, in writing order (the overview last,
        so that a partly written site never has an overview pointing into nothing)."""
        yield STYLESHEET
        yield from self._schemas
        yield SCHEMAS
        for digest in self._records():
            found = record_file(digest)
            if found is not None:
                yield found
        yield from self._kernel_files
        if self.against is not None:
            yield COMPARE
        yield "index.html"

    def count(self) -> int:
        """How many paths :meth:`paths` gives (for a progress bar)."""
        pages_ = len(self._kernel_files) + 3 + len(self._schemas) + (self.against is not None)
        return pages_ + len(self._runs) + len(self.index.records)

    def page(self, path: str) -> bytes | None:
        """The content at ``path``, or None where the site has nothing."""
        if path == STYLESHEET:
            return STYLE.encode("utf-8")
        if path == "index.html":
            return self._overview()
        if path == SCHEMAS:
            return self._schemas_page()
        if path in self._schemas:
            return self._schemas[path][0]
        if path == COMPARE:
            return None if self.against is None else pages.before_after_page(path, self.against)
        if path in self._kernel_files:
            kernel = self._kernel_files[path]
            runs = self.kernels[kernel]
            return pages.kernel_page(path, kernel, runs, history_sections(path, runs))
        if path.startswith("records/") and path.endswith(".html"):
            return self._record(path)
        return None

    def _records(self) -> Iterator[str]:
        yield from self._runs
        yield from (d for d in self.index.records if d not in self._runs)

    def _overview(self) -> bytes:
        links = [("schemas", SCHEMAS)]
        if self.against is not None:
            links.insert(0, ("before/after", COMPARE))
        return pages.overview("index.html", self.title, self.kernels, self.notes, links)

    def _schemas_page(self) -> bytes:
        entries = [
            (kind, version, id_, path) for path, (_, kind, version, id_) in self._schemas.items()
        ]
        return pages.schemas_page(SCHEMAS, entries)

    def _record(self, path: str) -> bytes | None:
        digest = "sha256:" + path[len("records/") : -len(".html")]
        run = self._runs.get(digest)
        record = self.index.records.get(digest) if run is None else self.index.run_record(digest)
        if run is None and record is None:
            return None
        kind = str(record.get(KIND_KEY)) if record is not None else "BenchmarkRun"
        return pages.record_page(
            path,
            digest,
            record,
            run,
            self.index.records,
            self._referrers.get(digest, ()),
            self._referred.get(digest, 0),
            self._schema_of(kind, record),
        )

    def _schema_of(self, kind: str, record: Mapping[str, Any] | None) -> str | None:
        version = str(record.get("apiVersion")) if record is not None else None
        for path, (_, k, v, _) in self._schemas.items():
            if k == kind and (version is None or v == version):
                return path
        return None


#: The media type of each kind of file a site holds, by suffix.
MEDIA_TYPES: Final = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
}


def media_type(path: str) -> str:
    """The ``Content-Type`` a server sends a site's ``path`` with."""
    for suffix, media in MEDIA_TYPES.items():
        if path.endswith(suffix):
            return media
    return "application/octet-stream"


def _schema_files() -> dict[str, tuple[bytes, str, str, str]]:
    """``schemas/<group>/<version>/<file>`` → (bytes, kind, apiVersion, ``$id``), every
    packaged schema."""
    from kernelindex_sdk.schema.registry import default_registry

    found: dict[str, tuple[bytes, str, str, str]] = {}
    for entry in default_registry().all_entries:
        group, _, version = entry.api_version.partition("/")
        path = f"schemas/{group}/{version}/{entry.path.name}"
        found[path] = (entry.path.read_bytes(), entry.kind, entry.api_version, entry.id)
    return found


__all__ = ["MEDIA_TYPES", "Site", "media_type"]
