"""Shared fixtures: the seeds (from ../shared when present) and small records of our own."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
SEEDS_DIR = SHARED / "seeds"
EXAMPLE_SEEDS = ROOT / "examples" / "seeds"


def seed_paths() -> list[Path]:
    """The four published seeds: ../shared/seeds when present, else the shipped copies."""
    directory = SEEDS_DIR if SEEDS_DIR.is_dir() else EXAMPLE_SEEDS
    return sorted(directory.glob("*.json"))


@pytest.fixture
def seed_bundle() -> dict[str, Any]:
    """A fresh, mutable copy of seed 001 (a bundle with distinct p20/median/p80)."""
    paths = seed_paths()
    return copy.deepcopy(json.loads(paths[1].read_text(encoding="utf-8")))
