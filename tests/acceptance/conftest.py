"""Fixtures of the CLI acceptance tests (helpers live in :mod:`.support`)."""

from __future__ import annotations

import pytest

from .support import Invoke, make_invoke


@pytest.fixture
def invoke() -> Invoke:
    """Run the CLI in-process: ``invoke("validate", path, input=b"...")`` -> Run."""
    return make_invoke()
