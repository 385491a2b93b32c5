"""How many examples a hypothesis test draws under each profile.

The profiles are registered and loaded in ``conftest.py``; they differ only in their
``max_examples``. A test written for ``n`` examples sets ``max_examples=examples(n)``
(an explicit count overrides the profile's, so it has to scale here).
"""

from __future__ import annotations

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
