"""How to install one of the project's extras, said in forms that work everywhere.

``pip install 'kernelindex-sdk[store]'`` works only where the package is on an index;
from a checkout or the wheel a build makes, the extra is named on the path instead.
Every message that says how to get an extra is made here, so each says both ways.
"""

from __future__ import annotations

from typing import Final

__all__ = ["DISTRIBUTION", "extra_hint"]

#: The distribution's name on an index.
DISTRIBUTION: Final = "kernelindex-sdk"


def extra_hint(extra: str, package: str | None = None) -> str:
    """The install command for the extra ``extra``, then the checkout's and the wheel's.

    ``package``: a package on an index that alone gives what the extra gives
    (``matplotlib`` for ``plot``), named first instead of the distribution's extra.
    """
    first = f"pip install {package}" if package else f"pip install '{DISTRIBUTION}[{extra}]'"
    return (
        f"{first} (from a kernelindex checkout: pip install '.[{extra}]';"
        f" from its wheel: pip install 'WHEEL.whl[{extra}]')"
    )
