"""RFC 8785 as its authors test it: the published vectors, byte for byte.

``tests/examples/rfc8785/{input,output}`` are the six test files published with the
reference implementation (cyberphone/json-canonicalization: arrays, french,
structures, unicode, values, weird); :data:`NUMBERS` is RFC 8785 Appendix B, IEEE 754
doubles (as hex) and the text JCS writes for them. Each input goes through strict
intake and :func:`ki.canonicalize`, as ``kernelindex canonicalize`` runs them.
"""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest

import kernelindex_sdk as ki
from kernelindex_sdk.errors import NonFiniteNumber, NumberOutOfRange

VECTORS = Path(__file__).resolve().parent / "examples" / "rfc8785"
NAMES = sorted(p.name for p in (VECTORS / "input").iterdir())

#: RFC 8785, Appendix B: (IEEE 754 bits, what JCS writes).
NUMBERS = [
    ("0000000000000000", "0"),
    ("8000000000000000", "0"),
    ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"),
    ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"),
    ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"),
    ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"),
    ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"),
    ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"),
    ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
    ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"),
    ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"),
    ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"),
    ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]


@pytest.mark.parametrize("name", NAMES)
def test_published_vectors(name: str) -> None:
    text = (VECTORS / "input" / name).read_bytes()
    expected = (VECTORS / "output" / name).read_bytes()
    assert ki.canonicalize(ki.loads(text)) == expected


def test_published_vectors_through_the_cli() -> None:
    for name in NAMES:
        done = subprocess.run(
            [sys.executable, "-m", "kernelindex_sdk.cli.main", "canonicalize",
             str(VECTORS / "input" / name)],
            capture_output=True,
            check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert done.stdout == (VECTORS / "output" / name).read_bytes(), name


@pytest.mark.parametrize(("bits", "expected"), NUMBERS)
def test_appendix_b_numbers_in_every_spelling(bits: str, expected: str) -> None:
    """However a writer prints the double — Python's repr, C's %.17g and %.17e, the
    JCS form itself — it canonicalizes to the RFC's text."""
    value = struct.unpack(">d", bytes.fromhex(bits))[0]
    spellings = {repr(value), f"{value:.17e}", f"{value:.17g}", expected, f"{value:.25E}"}
    for text in spellings:
        if not any(c in text for c in ".eE") and abs(int(text)) > 2**53 - 1:
            # An integer literal beyond 2**53 - 1 is refused, as the reference
            # refuses such ints; the same double written as a float is taken.
            with pytest.raises(NumberOutOfRange):
                ki.loads(text)
            continue
        assert ki.canonicalize(ki.loads(f"[{text}]")) == f"[{expected}]".encode(), text


def test_one_double_one_digest_however_it_is_written() -> None:
    base = '{"apiVersion":"a","kind":"b","spec":{"v":%s}}'
    spellings = [
        "333333333.33333329",
        "333333333.3333333",
        "3.3333333333333331e+08",
        "333333333.333333314",
    ]
    digests = {ki.digest(ki.loads(base % s)) for s in spellings}
    assert len(digests) == 1
    assert len({ki.digest(ki.loads(base % s)) for s in ("4.50", "4.5", "45e-1", "4.5000")}) == 1


def test_what_is_still_refused() -> None:
    for text, kind in (
        ("1e400", NumberOutOfRange),
        ("-1e400", NumberOutOfRange),
        ("9007199254740992", NumberOutOfRange),
        ("NaN", NonFiniteNumber),
        ("Infinity", NonFiniteNumber),
    ):
        with pytest.raises(kind):
            ki.loads(f"[{text}]")


def test_strict_numbers_is_an_opt_in_lint() -> None:
    assert ki.loads("[333333333.33333329, 1e-400]") == [333333333.3333333, 0.0]
    with pytest.raises(NumberOutOfRange, match="has no exact IEEE double"):
        ki.loads("[333333333.33333329]", strict_numbers=True)
    with pytest.raises(NumberOutOfRange, match="underflows"):
        ki.loads("[1e-400]", strict_numbers=True)
    assert ki.loads("[333333333.3333333, 4.5]", strict_numbers=True) == [333333333.3333333, 4.5]
