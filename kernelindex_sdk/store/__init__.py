"""The store: every run kept, append-only, in one embedded DuckDB file (docs/store.md).

* :func:`add` — check records as ``validate --strict-refs`` does, then append the
  valid ones in one transaction (:mod:`~kernelindex_sdk.store.adding`).
* :func:`query` — read-only SQL over the documented views
  (:mod:`~kernelindex_sdk.store.querying`).
* :func:`export` — the records as JSON Lines, or Parquet partitioned for parallel
  readers (:mod:`~kernelindex_sdk.store.exporting`).

Reading a store as a PATH (``validate``, ``compare``, ...) is
:mod:`kernelindex_sdk.reading.kistore`'s, below every command. DuckDB is the optional
``[store]`` extra, imported only when a store is opened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kernelindex_sdk.reading.kistore import DEFAULT_STORE, STORE_ENV, StoreError, default_store

if TYPE_CHECKING:
    from kernelindex_sdk.store.adding import AddResult, add


def __getattr__(name: str) -> Any:
    """``add`` and ``AddResult``, imported at their first use: adding pulls in the
    validation pipeline and the comparison's records, which ``store query`` and
    ``store export`` never need (benchmarks/README.md has what that saves)."""
    if name in ("add", "AddResult"):
        from kernelindex_sdk.store import adding

        return getattr(adding, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["DEFAULT_STORE", "STORE_ENV", "AddResult", "StoreError", "add", "default_store"]
