"""Writing JSON text the way kernelindex writes records.

:func:`pretty` is ``json.dumps(value, indent=2, ensure_ascii=False)`` byte for byte,
faster: the standard library drops to its pure-Python encoder whenever it indents;
this walks only the containers in Python and leaves every scalar to the C encoder.
Importers write bundle files with it, and ``ki.dumps(x, indent=2)`` uses it.
"""

from __future__ import annotations

import json
from typing import Any

_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False)


def pretty(value: Any, indent: str = "") -> str:
    """``json.dumps(value, indent=2, ensure_ascii=False)``, nested at ``indent``."""
    if isinstance(value, dict) and value:
        inner = indent + "  "
        encode = _ENCODER.encode
        items = ",\n".join(f"{inner}{encode(k)}: {pretty(v, inner)}" for k, v in value.items())
        return "{\n" + items + "\n" + indent + "}"
    if isinstance(value, list) and value:
        inner = indent + "  "
        items = ",\n".join(inner + pretty(v, inner) for v in value)
        return "[\n" + items + "\n" + indent + "]"
    return _ENCODER.encode(value)
