"""The quick rules of a v1alpha1 run in C (``_runrules.c``), twin of
``v1alpha1.run_spec_passes``."""

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Final

RULES_VERSION: Final[int]

def configure(
    ranks: Mapping[str, int],
    factors: Mapping[str, Mapping[str, int]],
    results: tuple[tuple[str, str, str], ...],
    recent_days: int,
    twin: Callable[[Mapping[str, Any], datetime | None], bool],
    /,
) -> None: ...
def run_passes(spec: Any, cutoff: str, /) -> bool | None: ...
def quick(spec: Mapping[str, Any], now: datetime | None, /) -> bool: ...
