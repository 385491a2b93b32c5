"""The number grammar: how every importer reads a number written as text.

Sources write numbers as text — a Liger CSV cell, an nvbench ``int64`` or ``float64``
datum (a JSON string), a KernelBench value given as a string — and one grammar reads
them all: ASCII digits, an optional sign, an optional fraction and exponent
(``-12``, ``+7``, ``0.001``, ``.5``, ``1e-3``). Python's ``int()`` and ``float()`` read
far more, and so would let one source accept what another refuses: ``1_000``,
Arabic-Indic digits (``١٢``), surrounding white space (``" 0.001"``, ``"0.001\\n"``),
``infinity``. Here none of it is a number; the caller refuses it in one line.
"""

from __future__ import annotations

import math
import re

#: A whole number: an optional sign and ASCII digits.
INTEGER = re.compile(r"[+-]?[0-9]+")
#: A decimal number: an optional sign, digits with an optional fraction (or a fraction
#: alone), an optional exponent.
DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
#: How nvbench (C++ formatting of a double) writes the values that are not finite; read
#: only where a source is known to write them (:func:`decimal` with ``non_finite``).
NON_FINITE = {
    "inf": math.inf,
    "+inf": math.inf,
    "-inf": -math.inf,
    "nan": math.nan,
    "-nan": math.nan,
}


def integer(text: str) -> int | None:
    """The whole number ``text`` writes, or None when it is not one in the grammar (or
    has more digits than Python converts: far beyond any number a record holds)."""
    if INTEGER.fullmatch(text) is None:
        return None
    try:
        return int(text)
    except ValueError:  # beyond sys.get_int_max_str_digits()
        return None


def decimal(text: str, *, non_finite: bool = False) -> float | None:
    """The number ``text`` writes, or None when it is not one in the grammar.

    A finite text may still give an infinite float (``1e999``): the caller decides what
    a value it cannot hold means. ``non_finite``: also read :data:`NON_FINITE`'s words.
    """
    if DECIMAL.fullmatch(text) is not None:
        return float(text)
    if non_finite:
        return NON_FINITE.get(text)
    return None
