"""``kernelindex store export``: the store's records out, as JSON Lines or Parquet.

* ``jsonl``: ``DIR/records.jsonl``, one document per line in the order and shape they
  were added (:func:`~kernelindex_sdk.reading.storefile.store_documents`): added to a new
  store, it gives the same records, digest for digest.
* ``parquet``: one dataset per kind (``DIR/<view>/``, split into files of at most
  :data:`FILE_BYTES` so readers take them in parallel) and the flattened runs
  partitioned by kernel (``DIR/runs/kernel=<name>/``, Hive-style, which Spark, DuckDB,
  pandas and polars read as a column). All from one read transaction: one snapshot.

The output folder is written beside its final place and renamed into it, so a killed
export leaves no half-written ``DIR``; an existing non-empty ``DIR`` is replaced only
with ``force``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from typing import Final, Literal

from kernelindex_sdk.errors import IntakeError
from kernelindex_sdk.reading.storefile import KIND_VIEWS, StoreError, connect, store_documents

__all__ = ["FILE_BYTES", "ExportRefused", "export"]

#: The most bytes of one Parquet file of a kind's dataset.
FILE_BYTES: Final = "256MB"


class ExportRefused(StoreError):
    """The output exists (and ``force`` was not given), or cannot be made."""


def export(
    store: str,
    out: str,
    *,
    format: Literal["jsonl", "parquet"],
    force: bool = False,
    on_wait: Callable[[str], None] | None = None,
) -> int:
    """Write the store's records to the folder ``out``; return how many rows (JSON
    Lines: documents; Parquet: records of every kind)."""
    if format not in ("jsonl", "parquet"):
        raise ValueError(f"format must be 'jsonl' or 'parquet', not {format!r}")
    if os.path.lexists(out):
        if not os.path.isdir(out):
            raise ExportRefused(f"{out}: exists and is not a folder; nothing written")
        if os.listdir(out) and not force:
            raise ExportRefused(f"{out}: exists and is not empty; use --force to replace it")
    parent = os.path.dirname(os.path.abspath(out))
    work = tempfile.mkdtemp(prefix=f".{os.path.basename(out) or 'export'}.", dir=parent)
    try:
        if format == "jsonl":
            count = _jsonl(store, work, on_wait)
        else:
            count = _parquet(store, work, on_wait)
        _into_place(work, out)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return count


def _into_place(work: str, out: str) -> None:
    """Rename the finished folder to ``out``, moving an old one aside first."""
    old = None
    if os.path.lexists(out):
        old = tempfile.mkdtemp(
            prefix=f".{os.path.basename(out)}.old.", dir=os.path.dirname(os.path.abspath(out))
        )
        os.rmdir(old)
        os.rename(out, old)
    os.rename(work, out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _jsonl(store: str, work: str, on_wait: Callable[[str], None] | None) -> int:
    from orjson import dumps

    count = 0
    with open(os.path.join(work, "records.jsonl"), "wb") as handle:
        for document in store_documents(store, on_wait=on_wait):
            if isinstance(document, IntakeError):
                raise StoreError(str(document.problem.message))
            handle.write(dumps(document.value) + b"\n")
            count += 1
        handle.flush()
        os.fsync(handle.fileno())
    return count


def _quote(path: str) -> str:
    return "'" + path.replace("'", "''") + "'"


def _parquet(store: str, work: str, on_wait: Callable[[str], None] | None) -> int:
    count = 0
    with connect(store, read_only=True, on_wait=on_wait) as connection:
        connection.execute("BEGIN TRANSACTION")
        for kind, view in KIND_VIEWS.items():
            row = connection.execute(
                "SELECT count(*) FROM records WHERE kind = ?", [kind]
            ).fetchone()
            if not row or not row[0]:
                continue
            count += int(row[0])
            connection.execute(
                f"""COPY (SELECT digest, name, api_version, record, origin,
                    origin_line, add_id FROM records WHERE kind = '{kind}' ORDER BY seq)
                TO {_quote(os.path.join(work, view))}
                (FORMAT parquet, FILE_SIZE_BYTES '{FILE_BYTES}')"""
            )
        row = connection.execute("SELECT count(*) FROM run_facts").fetchone()
        if row and row[0]:
            connection.execute(
                f"""COPY (SELECT * REPLACE (coalesce(kernel, '(unknown)') AS kernel)
                    FROM runs)
                TO {_quote(os.path.join(work, "runs"))}
                (FORMAT parquet, PARTITION_BY (kernel))"""
            )
        connection.execute("COMMIT")
    return count
