"""What the quick run holds of a law: how many examples a hypothesis test draws under
each profile, and which variants of a parametrized law run in plain ``pytest``.

The profiles are registered and loaded in ``conftest.py``; they differ only in their
``max_examples``. A test written for ``n`` examples sets ``max_examples=examples(n)``
(an explicit count overrides the profile's, so it has to scale here).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import pytest
from hypothesis import settings

#: ``max_examples`` of each profile: ``default`` for plain ``pytest``, ``long`` (the
#: counts the tests were written for) for CI's second run, ``thorough`` for a run of its own.
MAX_EXAMPLES = {"default": 10, "long": 100, "thorough": 2000}
LONG_EXAMPLES = MAX_EXAMPLES["long"]


def examples(n: int) -> int:
    """``n`` scaled by the active profile: a tenth (at least 1) in ``default``, ``n`` in
    ``long``, ``20 * n`` in ``thorough``.

    The active profile is whatever hypothesis has loaded (``HYPOTHESIS_PROFILE`` or
    ``--hypothesis-profile``) when the test's settings are built.
    """
    return max(1, round(n * settings.default.max_examples / LONG_EXAMPLES))


def long_profile() -> bool:
    """Whether the active profile draws at least the written counts (``long``, ``thorough``)."""
    return settings.default.max_examples >= LONG_EXAMPLES


def variants(
    values: Sequence[Any],
    quick: Collection[int],
    *,
    ids: Sequence[str] | None = None,
    several: bool = False,
) -> list[Any]:
    """``values`` as the pytest parameters of one law: those at the indices in ``quick``
    run in plain ``pytest`` (the law's cheap cases), the others are marked ``slow`` (the
    costlier variants, run by ``.ci/run``). ``several``: each value is a tuple of
    several arguments. A value may be a ``pytest.param`` already; its marks are kept."""
    assert quick and all(0 <= i < len(values) for i in quick), quick
    params = []
    for i, value in enumerate(values):
        slow: tuple[Any, ...] = () if i in quick else (pytest.mark.slow,)
        if hasattr(value, "marks") and hasattr(value, "values"):  # a pytest.param
            params.append(pytest.param(*value.values, marks=(*value.marks, *slow), id=value.id))
            continue
        arguments = tuple(value) if several else (value,)
        params.append(pytest.param(*arguments, marks=slow, id=None if ids is None else ids[i]))
    return params
