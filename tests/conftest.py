"""Shared fixtures (the seeds, from ../shared when present, and small records of our own)
and the hypothesis profiles.

Profiles, chosen with ``HYPOTHESIS_PROFILE`` (or pytest's ``--hypothesis-profile``):

* ``default`` (plain ``pytest``): 10 examples a test; a test written for ``n`` examples
  (``max_examples=profiles.examples(n)``) draws a tenth of them, at least one.
* ``long``: 100 examples a test, and ``examples(n)`` is ``n``: the counts the
  differential and property tests were written for. ``.ci/run`` runs it over every
  test marked ``hypothesis_long``.
* ``thorough``: 20 times ``long``, for a run of its own.

``hypothesis_long`` marks what the ``long`` profile runs with more data: every ``@given``
test (marked at collection below) and, by hand, the tests that call ``@given`` inside
their body and the exhaustive differential checks that take a share of their cases in
``default`` (``profiles.long_profile()``).
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import shared_data
from hypothesis import is_hypothesis_test, settings
from profiles import MAX_EXAMPLES

# pytest keeps the test modules it rewrites (for its assert messages) as bytecode only
# where bytecode may be written: under PYTHONDONTWRITEBYTECODE (set on the development
# machine) each xdist worker rewrote every test module again, ~3.5 s a worker and a run.
# The test run writes its own (``tests/__pycache__/``, ignored), as it compiles the package
# (``_compile_the_package``); the processes the tests start keep the variable.
sys.dont_write_bytecode = False

ROOT = Path(__file__).resolve().parent.parent
SEEDS_DIR = shared_data.find("seeds") or ROOT / "tests" / "examples" / "valid" / "seeds"
EXAMPLE_SEEDS = ROOT / "tests" / "examples" / "valid" / "seeds"

# ------------------------------------------------------------------ hypothesis profiles

# Only the example count differs; tests set their own deadline and health checks.
for _name, _max_examples in MAX_EXAMPLES.items():
    settings.register_profile(_name, max_examples=_max_examples)
if "KERNELINDEX_HYPOTHESIS_PROFILE" in os.environ:
    raise pytest.UsageError(
        "KERNELINDEX_HYPOTHESIS_PROFILE is gone: set HYPOTHESIS_PROFILE=long (the example "
        "counts once called quick) or HYPOTHESIS_PROFILE=thorough (20 times as many)"
    )
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "default")
if PROFILE not in MAX_EXAMPLES:
    raise pytest.UsageError(f"HYPOTHESIS_PROFILE must be one of {sorted(MAX_EXAMPLES)}")
settings.load_profile(PROFILE)


def _compile_the_package() -> None:
    """Bytecode for kernelindex's own modules, where they are, as ``pip install`` writes it.

    An editable install has none, and with ``PYTHONDONTWRITEBYTECODE`` set (it is, on the
    development machine) no process writes any: each CLI process the tests start compiled
    the package from source again (~0.1 s of a ~0.2 s start; a fifth of the CPU of the
    store's tests and the acceptance faults). Reading bytecode is allowed
    under that variable; this writes it once, beside the sources (``__pycache__/`` is
    ignored), as the benchmarks do (``benchmarks/bench_cli.py``'s ``ensure_bytecode``).
    Files already compiled are only looked at; without ``benchmarks/`` (the sdist ships
    none) nothing is compiled, and the tests run as they did.
    """
    bench_cli = ROOT / "benchmarks" / "bench_cli.py"
    if not bench_cli.is_file():
        return
    spec = importlib.util.spec_from_file_location("bench_cli", bench_cli)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.ensure_bytecode()


def pytest_configure(config: pytest.Config) -> None:
    if "PYTEST_XDIST_WORKER" not in os.environ:  # once, before xdist starts its workers
        _compile_the_package()
    config.addinivalue_line(
        "markers",
        "hypothesis_long: draws more data under HYPOTHESIS_PROFILE=long (CI runs these "
        "again with it)",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if isinstance(item, pytest.Function) and is_hypothesis_test(item.obj):
            item.add_marker(pytest.mark.hypothesis_long)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to open a connection or resolve a host fails the test (offline
    schema resolution: the registry, ``schema diff``)."""
    import socket

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)


# ------------------------------------------------------------------------------ seeds


def seed_paths() -> list[Path]:
    """The four published seeds: ../shared/seeds when present, else the shipped copies."""
    directory = SEEDS_DIR if SEEDS_DIR.is_dir() else EXAMPLE_SEEDS
    return sorted(directory.glob("*.json"))


@pytest.fixture
def seed_bundle() -> dict[str, Any]:
    """A fresh, mutable copy of seed 001 (a bundle with distinct p20/median/p80)."""
    paths = seed_paths()
    return copy.deepcopy(json.loads(paths[1].read_text(encoding="utf-8")))
