"""The canonical form's short scan in C (``_canonical_scan.c``), twin of
``canonical._scan_values``."""

from typing import Any, Final

SCAN_VERSION: Final[int]

def scan_values(obj: dict[str, Any] | list[Any], floats: list[float], /) -> bool: ...
