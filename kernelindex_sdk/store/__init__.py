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

from kernelindex_sdk.reading.kistore import DEFAULT_STORE, STORE_ENV, StoreError, default_store
from kernelindex_sdk.store.adding import AddResult, add

__all__ = ["DEFAULT_STORE", "STORE_ENV", "AddResult", "StoreError", "add", "default_store"]
