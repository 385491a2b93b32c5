"""Where the tests find ``shared/``: real published data that is not copied into the repo.

The folder holds the four seed records, Liger-Kernel's benchmark CSV and the nvbench and
KernelBench samples. It is looked for, in order, at ``$KERNELINDEX_SHARED``, beside the
checkout (``../shared``, where CI has it) and inside it (``./shared``). Tests that need a
file in it skip, saying which file and how to provide it, when it is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Where to look, most specific first.
CANDIDATES = tuple(
    Path(p)
    for p in (os.environ.get("KERNELINDEX_SHARED"), ROOT.parent / "shared", ROOT / "shared")
    if p
)


def find(*parts: str) -> Path | None:
    """The first existing ``<shared>/<parts...>``, or None."""
    for base in CANDIDATES:
        path = base.joinpath(*parts)
        if path.exists():
            return path
    return None


def require(*parts: str) -> Path:
    """``<shared>/<parts...>``, or skip the calling test saying how to provide it."""
    path = find(*parts)
    if path is None:
        pytest.skip(
            f"shared data {'/'.join(parts)} not present: put the shared folder beside the "
            "checkout (../shared) or set KERNELINDEX_SHARED to it"
        )
    return path
