"""The report's pages (``kernelindex report``), rendered from the live store.

The site is written by ``kernelindex report STORE --out DIR`` itself, in its own
process, into a folder of the server's, and served from there; it is written again
when the store has changed since (a new add), before the page asked for is served.
The report writes its folder beside itself and swaps it in whole, so a page is never
served from a half-written site.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
import weakref

from starlette.responses import FileResponse, Response

from kernelindex_sdk.reading.kistore import connect
from kernelindex_sdk.serve.limits import Refusal, Settings
from kernelindex_sdk.serve.records import READ_CONFIG
from kernelindex_sdk.serve.schemas import run_bounded

__all__ = ["Site"]


def _last_add(store: str) -> int:
    with connect(store, read_only=True, config=READ_CONFIG) as connection:
        row = connection.execute("SELECT coalesce(max(add_id), 0) FROM adds").fetchone()
    return int(row[0]) if row else 0


class Site:
    """The report of one store, written on demand and again after each add."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.folder = tempfile.mkdtemp(prefix="kernelindex-serve-report-")
        weakref.finalize(self, shutil.rmtree, self.folder, ignore_errors=True)  # at exit too
        self.site = os.path.join(self.folder, "site")
        self.built: int | None = None
        self.lock = asyncio.Lock()

    async def _fresh(self) -> None:
        async with self.lock:
            last = await asyncio.to_thread(_last_add, self.settings.store)
            if last == self.built:
                return
            if last == 0:
                raise Refusal(404, "no report yet: the store holds no records")
            command = [sys.executable, "-m", "kernelindex_sdk.cli.main", "report"]
            command += [self.settings.store, "--out", self.site, "--force", "--no-progress"]
            seconds = self.settings.limits.query_seconds
            status, _, err = await run_bounded(command, seconds)
            if status < 0:
                raise Refusal(503, f"report {err}; stopped")
            if status == 2 or not os.path.isdir(self.site):
                raise Refusal(503, f"the report could not be written: {err}")
            self.built = last

    async def page(self, path: str) -> Response:
        """The file at ``path`` in the site (a folder: its ``index.html``)."""
        parts = [p for p in path.split("/") if p]
        if any(p in (".", "..") or "\\" in p or "\0" in p for p in parts):
            raise Refusal(400, f"not a page of the report: {path!r}")
        await self._fresh()
        full = os.path.join(self.site, *parts)
        if os.path.isdir(full):
            full = os.path.join(full, "index.html")
        root = os.path.realpath(self.site) + os.sep
        if not os.path.realpath(full).startswith(root) or not os.path.isfile(full):
            raise Refusal(404, f"no page {path!r} in the report")
        return FileResponse(full)
