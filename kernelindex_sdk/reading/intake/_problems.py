"""What strict intake refuses, in words: the rules for number literals, and the text of
the problems they and the other rules raise.

The stdlib path's hooks and the locator both ask these rules, so the verdict and its
explanation cannot drift apart.
"""

from __future__ import annotations

from kernelindex_sdk.base.escaping import abbreviated
from kernelindex_sdk.base.recordformat import MAX_BIG_INTEGER_DIGITS, MAX_SAFE_INTEGER
from kernelindex_sdk.base.wording import byte_size


def int_problem(literal: str) -> str | None:
    """Why an integer literal is unacceptable, or None.

    JSON forbids leading zeros, so a literal of more than 16 digits is at least
    10**16 > 2**53 - 1 without converting it (which also avoids Python's
    4300-digit ``int()`` limit on hostile input).
    """
    digits = len(literal) - (literal[0] == "-")
    if digits > 16 or abs(int(literal)) > MAX_SAFE_INTEGER:
        return (
            f"integer {abbreviated(literal)} is outside ±(2**53 - 1): an IEEE double cannot hold "
            "it exactly, so JCS (RFC 8785) would change it; write it as a string"
        )
    return None


def big_int_problem(literal: str) -> str | None:
    """Why an integer literal is unacceptable where integers of any size are kept
    exactly (a schema's ``minimum: -9223372036854775808``), or None."""
    if len(literal) - (literal[0] == "-") > MAX_BIG_INTEGER_DIGITS:
        return f"integer {abbreviated(literal)} has more than {MAX_BIG_INTEGER_DIGITS} digits"
    return None


def float_problem(literal: str, value: float, strict: bool = False) -> str | None:
    """Why a number literal with a fraction or exponent is unacceptable, or None.

    Every literal that reads as a finite IEEE double is a number: JCS (RFC 8785)
    writes the double's shortest form, so ``333333333.33333329``, ``4.50`` and
    ``1E30`` are accepted and canonicalized to ``333333333.3333333``, ``4.5`` and
    ``1e+30`` — two writers printing one double differently get one digest. Only a
    literal beyond the double range (it would read as infinity) is refused.

    ``strict`` (the ``--strict-numbers`` lint) also refuses a literal whose text and
    value disagree: one that underflows to 0, or that no double holds exactly (JCS
    would write other digits). Literals with <= 15 significant digits always match
    in the normal range, so the exact :class:`Decimal` comparison is only made for
    long literals and subnormals (which have fewer bits of precision).
    """
    if value in (float("inf"), float("-inf")):
        return (
            f"number {abbreviated(literal)} overflows an IEEE double (it would read as "
            "infinity); JCS (RFC 8785) cannot represent it"
        )
    if not strict:
        return None
    if value == 0.0:
        mantissa = literal.lower().partition("e")[0]
        if mantissa.strip("-.0"):
            return (
                f"number {abbreviated(literal)} underflows an IEEE double (it reads as 0); "
                "JCS (RFC 8785) would write 0 (--strict-numbers)"
            )
        return None
    from decimal import Decimal  # only long literals and subnormals get here

    if Decimal(literal) != Decimal(repr(value)):
        return (
            f"number {abbreviated(literal)} has no exact IEEE double: it reads as {value!r}, "
            "which JCS (RFC 8785) writes instead (--strict-numbers)"
        )
    return None


def constant_message(name: str) -> str:
    """Why ``NaN``, ``Infinity`` or ``-Infinity`` is refused."""
    return f"{name} is not valid JSON: RFC 8259 numbers are finite (and JCS cannot write it)"


def lone_surrogate_message(char: str, what: str) -> str:
    """Why a lone surrogate (``char``) in a string or key (``what``) is refused."""
    return (
        f"lone surrogate U+{ord(char):04X} in {what}: not a Unicode character, so it "
        "cannot be written as UTF-8"
    )


def size_text(size: int) -> str:
    """A byte count for messages: ``256 MiB``, ``1.5 KiB``, ``12 bytes``."""
    return byte_size(size)
