"""The names closest to one that matches nothing: the ``did you mean …?`` of every message.

One rule for every suggestion the project makes (a mistyped ``--kernel``, ``--gpu`` or
``--baseline`` value; a kind that has no schema): :func:`difflib.get_close_matches`
over names compared as ``normalize`` makes them (case folded by default), closest
first, at most :data:`SUGGESTIONS` of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Final

#: Similarity (difflib's ratio) below which a name is not suggested.
CUTOFF: Final = 0.6
#: Most names suggested for one value.
SUGGESTIONS: Final = 3


def closest(
    value: str, candidates: Iterable[str], normalize: Callable[[str], str] = str.casefold
) -> tuple[str, ...]:
    """The candidates closest to ``value`` as ``normalize`` compares them, closest first."""
    import difflib  # only when a name matched nothing: not at every start-up

    by_key: dict[str, str] = {}
    for candidate in candidates:
        by_key.setdefault(normalize(candidate), candidate)
    keys = difflib.get_close_matches(normalize(value), list(by_key), n=SUGGESTIONS, cutoff=CUTOFF)
    return tuple(by_key[k] for k in keys)


def did_you_mean(names: Iterable[str]) -> str:
    """``; did you mean 'geglu'?`` (or ``'a' or 'b'``), empty without names."""
    listed = " or ".join(repr(name) for name in names)
    return f"; did you mean {listed}?" if listed else ""
