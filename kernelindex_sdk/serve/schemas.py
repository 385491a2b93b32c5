"""The schema registry over HTTP: each shipped schema at the path of its ``$id``, the
list of versions and kinds with their status, and a compatibility check.

A validator or editor resolving ``https://kernelindex.dev/schemas/…`` against this
server gets the bytes of the packaged file (the wheel's), unchanged. The check runs
``kernelindex schema diff`` itself, in its own process: the same rules and the same
JSON, its time bounds armed (they need a process's main thread), and a schema that
costs too much stopped by killing that process, never the server.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from kernelindex_sdk.schema.registry import SchemaEntry, SchemaRegistry, default_registry

__all__ = ["SchemaIndex", "check_schema"]

#: Content type of a schema (JSON Schema's own media type).
SCHEMA_TYPE = "application/schema+json"
MODES = ("backward", "forward", "full")
POLICIES = ("strict", "lenient")


class SchemaIndex:
    """The served schemas by URL path, and the versions document."""

    def __init__(self, registry: SchemaRegistry | None = None) -> None:
        self.registry = registry if registry is not None else default_registry()
        self.by_path: dict[str, SchemaEntry] = {
            urlsplit(entry.id).path: entry for entry in self.registry.all_entries
        }

    def versions(self) -> dict[str, Any]:
        """Every apiVersion, its status and its kinds, each with ``$id`` and path."""
        listed = []
        for api_version in self.registry.api_versions():
            status = self.registry.status(api_version)
            entries = [e for e in self.registry.all_entries if e.api_version == api_version]
            listed.append(
                {
                    "apiVersion": api_version,
                    "status": status.status,
                    "replacement": status.replacement,
                    "schemas": [
                        {"kind": e.kind, "$id": e.id, "path": urlsplit(e.id).path} for e in entries
                    ],
                }
            )
        return {"versions": listed}

    def find(self, against: str) -> SchemaEntry | None:
        """The served schema named by its ``$id``, its path, or a kind (newest version)."""
        entry = self.by_path.get(urlsplit(against).path)
        if entry is not None:
            return entry
        for candidate in self.registry.entries:
            if candidate.kind == against:
                newest = self.registry.api_versions()[-1]
                return self.registry.find(against, newest)
        return None


async def check_schema(
    entry: SchemaEntry, posted: bytes, options: Mapping[str, str], seconds: float
) -> tuple[int, bytes, str]:
    """``schema diff SERVED POSTED`` in its own process: its exit status, its JSON
    report, its standard error (one line). The posted schema sits beside copies of
    the served version's other files, in place of the one it is checked against, so
    its ``$ref`` resolve as the served one's do."""
    with tempfile.TemporaryDirectory(prefix="kernelindex-serve-check-") as folder:
        for sibling in entry.path.parent.glob("*.schema.json"):
            if sibling.name != entry.path.name:
                shutil.copyfile(sibling, os.path.join(folder, sibling.name))
        new = os.path.join(folder, entry.path.name)
        with open(new, "wb") as handle:
            handle.write(posted)
        command = [
            *(sys.executable, "-m", "kernelindex_sdk.cli.main", "schema", "diff"),
            *(str(entry.path), new, "--mode", options["mode"], "--policy", options["policy"]),
            "--format",
            "json",
            *(["--format-assertion"] if options.get("format_assertion") else []),
        ]
        status, out, err = await run_bounded(command, seconds)
        return status, out, err.replace(folder + os.sep, "posted/")


async def run_bounded(command: list[str], seconds: float) -> tuple[int, bytes, str]:
    """Run ``command``; its status, output and last line of standard error. Past
    ``seconds`` it is killed and the status is -1."""
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), seconds)
    except (asyncio.TimeoutError, asyncio.CancelledError):
        process.kill()
        await process.wait()
        return -1, b"", f"took longer than {seconds:g} s"
    lines = err.decode("utf-8", "replace").strip().splitlines()
    return int(process.returncode or 0), out, lines[-1] if lines else ""
