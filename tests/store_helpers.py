"""Helpers of the store's tests: the CLI in a real process, and complete corpora."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "tests" / "examples"
#: Records whose references all resolve among themselves, no run twice (bundles and
#: loose records).
COMPLETE = [
    EXAMPLES / "compare" / "sweep",
    EXAMPLES / "compare" / "two-implementations",
    EXAMPLES / "valid" / "refs" / "split",
]
#: JSON Lines of a run and the records it references.
STREAM = EXAMPLES / "valid" / "refs" / "stream.jsonl"


def corpus_module() -> ModuleType:
    """``benchmarks/store_corpus.py``: complete bundles (every reference resolvable)."""
    spec = importlib.util.spec_from_file_location(
        "store_corpus", ROOT / "benchmarks" / "store_corpus.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_corpus(path: Path, count: int, seed: int = 0) -> Path:
    corpus_module().write_jsonl(path, count, seed)
    return path


def kernelindex(
    *args: str | os.PathLike[str],
    env: dict[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    prefix: tuple[str, ...] = (),
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run the CLI in its own process; ``prefix``: a command to run it under."""
    command = [*prefix, sys.executable, "-m", "kernelindex_sdk.cli.main", *map(str, args)]
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        timeout=timeout,
        check=False,
    )


def count_records(store: Path) -> int:
    import duckdb

    with duckdb.connect(str(store), read_only=True) as connection:
        row: Any = connection.execute("SELECT count(*) FROM records").fetchone()
    return int(row[0])
