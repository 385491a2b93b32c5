"""Whether kernelindex may use its compiled modules.

Two hot paths have a twin in C, built with the wheel where a C compiler is
(``hatch_build.py``): the canonical form's walk of a value
(``kernelindex_sdk/_canonical_scan.c``) and the quick rules of a run
(``kernelindex_sdk/checks/_runrules.c``). Each is used only where it was built, names
the version of its semantics its Python twin expects, and gives the twin's answers on a
probe at import. ``KERNELINDEX_NATIVE=0`` in the environment turns both off: every
answer is then the Python twin's (the tests compare the two through the CLI with it).
"""

from __future__ import annotations

import os
from typing import Final

#: The environment variable that turns the compiled modules off (``0``).
NATIVE_VARIABLE: Final = "KERNELINDEX_NATIVE"


def native_allowed() -> bool:
    """False where ``KERNELINDEX_NATIVE=0`` turns the compiled modules off."""
    return os.environ.get(NATIVE_VARIABLE, "").strip() != "0"
