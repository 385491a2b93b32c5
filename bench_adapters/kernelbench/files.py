"""Which files a KernelBench import reads, and what their names and folders say.

KernelBench keeps its baseline timings as
``results/timing/<GPU>_<provider>/baseline_time_<implementation>.json``. The
implementation is only in the file name (``torch``: eager PyTorch;
``torch_compile_<backend>_<mode>``), so it is read from there; the folder's GPU is
*never* used for the environment — upstream folders mix GPUs (an ``A10G`` folder
holding ``NVIDIA A10`` entries) — and serves only to flag entries whose own
``hardware`` disagrees with it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence

import attrs

from bench_adapters.kernelbench.mapping import KernelBenchMapping
from kernelindex_sdk.errors import IntakeError
from kernelindex_sdk.reading.sources import walk

_FOLDER = re.compile(r"([A-Za-z0-9][A-Za-z0-9.-]*)_(.+)")
_TOKENS = re.compile(r"[a-z0-9]+")


@attrs.frozen
class Implementation:
    """What a file name says was timed: eager (no backend) or torch.compile."""

    #: The file-name part that names it (``torch_compile_inductor_default``).
    name: str
    compiled: bool
    backend: str | None = None
    mode: str | None = None


class FileNameError(ValueError):
    """A file name that names no implementation (the message says how to declare one)."""


def timing_files(
    paths: Sequence[str | os.PathLike[str]],
    prefix: str,
    warn: Callable[[str, tuple[str, ...]], None],
) -> Iterator[str]:
    """The files to read: each named file, and each ``<prefix>*.json`` under a named
    folder (walked as ``kernelindex validate`` walks: sorted, hidden names left out,
    links followed, loops refused). Other JSON files in a folder are passed over with a
    warning. Raises the SDK's IntakeError for a path that cannot be read."""
    for path in paths:
        name = os.fspath(path)
        if not os.path.isdir(name):
            yield name
            continue
        for found in walk(name):
            if isinstance(found, IntakeError):
                raise found
            base = os.path.basename(found.path)
            if base.lower().startswith(prefix.lower()) and base.lower().endswith(".json"):
                yield found.path
            else:
                warn(
                    f"{found.path}: not a KernelBench timing file name ({prefix}*.json): "
                    "passed over",
                    ("passed-over", found.path),
                )


def implementation_of(stem: str, mapping: KernelBenchMapping) -> Implementation:
    """``torch`` / ``torch_compile_inductor_max-autotune`` → what was timed.

    Raises :class:`FileNameError` when the name is neither.
    """
    eager, compiled = mapping.eager["name"], mapping.compile["name"]
    if stem == eager:
        return Implementation(name=stem, compiled=False)
    if stem == compiled:
        return Implementation(name=stem, compiled=True)
    if not stem.startswith(compiled + "_"):
        raise FileNameError(
            f"{stem!r} names no implementation KernelBench times ({eager}, or "
            f"{compiled}_<backend>[_<mode>])"
        )
    rest = stem[len(compiled) + 1 :]
    for backend in mapping.backends:
        if rest == backend:
            return Implementation(name=stem, compiled=True, backend=backend)
        if rest.startswith(backend + "_"):
            return Implementation(
                name=stem, compiled=True, backend=backend, mode=rest[len(backend) + 1 :] or None
            )
    backend, _, mode = rest.partition("_")
    return Implementation(name=stem, compiled=True, backend=backend or None, mode=mode or None)


def implementation_of_file(path: str, mapping: KernelBenchMapping) -> Implementation:
    """The implementation a timing file's name states (``baseline_time_<it>.json``)."""
    base = os.path.basename(path)
    stem = base[:-5] if base.lower().endswith(".json") else base
    prefix = mapping.file_prefix + "_"
    if not stem.startswith(prefix):
        raise FileNameError(
            f"the file name {base!r} does not say what was timed (expected "
            f"{mapping.file_prefix}_<implementation>.json)"
        )
    return implementation_of(stem[len(prefix) :], mapping)


def folder_gpu(path: str) -> str | None:
    """The GPU a ``<GPU>_<provider>`` folder names (``H100`` of ``H100_Modal``), if the
    folder is named that way and its GPU part holds a letter and a digit."""
    folder = os.path.basename(os.path.dirname(os.path.abspath(path)))
    match = _FOLDER.fullmatch(folder)
    if match is None:
        return None
    gpu = match.group(1)
    if not (any(c.isdigit() for c in gpu) and any(c.isalpha() for c in gpu)):
        return None
    return gpu


def agrees(folder: str, hardware: str) -> bool:
    """Whether a folder's GPU names the entry's GPU: every word of the folder's GPU
    (``A100``, ``80GB``) is a word of the entry's name (``NVIDIA A100-SXM4-80GB``)."""
    words = set(_TOKENS.findall(hardware.lower()))
    return all(word in words for word in _TOKENS.findall(folder.lower()))


def folder_name(path: str) -> str:
    """The name of the folder a file is in."""
    return os.path.basename(os.path.dirname(os.path.abspath(path)))
