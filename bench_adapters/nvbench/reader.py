"""Reading one nvbench JSON file: the format version, the command line, the devices.

nvbench writes one JSON document per run (``--json FILE``): ``meta`` (argv, the
nvbench and JSON-format versions), ``devices`` and ``benchmarks`` (each with its axes
and states). This module reads the file with the SDK's strict reader and checks what
the whole file depends on; a file that is not nvbench's format, or a format version
the importer does not read, is :class:`~bench_adapters.common.importing.UnreadableSource`
(one line, exit 2, nothing written). Entries inside it — states, and the devices they
ran on — are checked one by one by the mapper, so one odd state is one refused line.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from bench_adapters.common.importing import UnreadableSource
from bench_adapters.nvbench.mapping import NvbenchMapping
from kernelindex_sdk.base.recordformat import json_type
from kernelindex_sdk.errors import Problem
from kernelindex_sdk.reading.sources import load_file


@attrs.frozen
class NvbenchFile:
    """One nvbench output file, its file-level facts read."""

    path: str
    format_version: str
    #: argv with the author's local paths cut to their last component.
    argv: tuple[str, ...] | None
    #: The benchmark executable's name (argv[0] without its folder), if argv says.
    program: str | None
    #: The nvbench version and git sha (``-dirty`` when the tree was dirty), if recorded.
    nvbench_version: str | None
    git_sha: str | None
    devices: Sequence[Any]
    benchmarks: Sequence[Any]


def read_file(path: str, mapping: NvbenchMapping) -> NvbenchFile:
    """Read and check one file; raises the SDK's IntakeError or UnreadableSource."""
    data = load_file(path)

    def refuse(message: str, pointer: str = "") -> UnreadableSource:
        return UnreadableSource(
            Problem(message, code="unsupported-format", pointer=pointer, source=path)
        )

    if not isinstance(data, dict) or "benchmarks" not in data:
        got = "an object without benchmarks" if isinstance(data, dict) else json_type(data)
        raise refuse(
            f"not nvbench JSON output: expected an object with meta, devices and benchmarks, "
            f"got {got}"
        )
    meta = data.get("meta")
    version = _format_version(meta)
    if version is None:
        raise refuse(
            "no JSON format version (meta.version.json): older nvbench output, not read "
            f"(this importer reads format {', '.join(mapping.formats)})",
            "/meta/version/json",
        )
    if version not in mapping.formats:
        raise refuse(
            f"nvbench JSON format {version!r} is not read by this importer "
            f"(it reads {', '.join(mapping.formats)})",
            "/meta/version/json",
        )
    for key in ("devices", "benchmarks"):
        if not isinstance(data.get(key), list):
            raise refuse(f"expected an array, got {json_type(data.get(key))}", f"/{key}")
    argv = _argv(meta.get("argv") if isinstance(meta, dict) else None)
    nvbench = meta.get("version", {}).get("nvbench") if isinstance(meta, dict) else None
    return NvbenchFile(
        path=path,
        format_version=version,
        argv=argv,
        program=os.path.basename(argv[0]) or None if argv else None,
        nvbench_version=_text(nvbench, "string"),
        git_sha=_git_sha(nvbench),
        devices=data["devices"],
        benchmarks=data["benchmarks"],
    )


def _format_version(meta: Any) -> str | None:
    """``major.minor.patch`` of ``meta.version.json``, from its numbers or its string."""
    version = meta.get("version") if isinstance(meta, dict) else None
    found = version.get("json") if isinstance(version, dict) else None
    if not isinstance(found, dict):
        return None
    parts = [found.get(key) for key in ("major", "minor", "patch")]
    if all(isinstance(p, int) and not isinstance(p, bool) for p in parts):
        return ".".join(str(p) for p in parts)
    string = found.get("string")
    return string if isinstance(string, str) and string else None


def _text(value: Any, key: str) -> str | None:
    found = value.get(key) if isinstance(value, dict) else None
    return found if isinstance(found, str) and found and len(found) <= 128 else None


def _git_sha(nvbench: Any) -> str | None:
    sha = _text(nvbench, "git_sha")
    if sha is None:
        return None
    return f"{sha}-dirty" if isinstance(nvbench, dict) and nvbench.get("git_is_dirty") else sha


def _argv(value: Any) -> tuple[str, ...] | None:
    if not isinstance(value, list) or not value or not all(isinstance(a, str) for a in value):
        return None
    return tuple(_without_paths(arg) for arg in value)


def _without_paths(arg: str) -> str:
    """An argument with any path cut to its last component: ``/home/me/out.json`` ->
    ``out.json``, ``--json=/tmp/x.json`` -> ``--json=x.json``. The author's folders say
    nothing about the measurement and may name a person or a machine."""
    option, sep, value = arg.partition("=") if arg.startswith("-") else ("", "", arg)
    if "/" in value or "\\" in value:
        value = value.replace("\\", "/").rstrip("/").rpartition("/")[2] or value
    return f"{option}{sep}{value}"


def argv_text(argv: Sequence[str]) -> str:
    """argv as one shell-quoted line."""
    return shlex.join(argv)


def flags_in(argv: Sequence[str] | None, flags: Sequence[str]) -> Mapping[str, bool]:
    """The measurement flags the command line gave, as settings (``run-once: true``)."""
    given = set(argv or ())
    return {flag.lstrip("-"): True for flag in flags if flag in given}
