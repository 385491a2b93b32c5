"""``kernelindex serve``: the index over HTTP, one process owning the store.

* :mod:`.schemas` — every shipped schema at the path of its ``$id``, the versions and
  their status, and ``POST /schemas/check`` (a schema diff against a served schema).
* :mod:`.records` — records by digest (immutable, canonical JSON) and submissions
  (checked as ``validate --strict-refs`` checks, added all or nothing).
* :mod:`.queries` — runs by query, paged, and ``compare``'s JSON over the live store.
* :mod:`.app` — the Starlette application: routes, limits, the write token, errors as
  one line; :mod:`.running` — uvicorn on a socket bound before it starts.

Starlette and uvicorn are the optional ``[serve]`` extra, imported only here.
"""

from __future__ import annotations

INSTALL_HINT = "pip install 'kernelindex-sdk[serve]' (from a checkout: pip install '.[serve]')"

__all__ = ["INSTALL_HINT"]
