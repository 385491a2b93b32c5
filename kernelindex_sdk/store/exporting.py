"""``kernelindex store export``: the store's records out, as JSON Lines or Parquet.

* ``jsonl``: ``DIR/records.jsonl``, one document per line in the order and shape they
  were added (:func:`~kernelindex_sdk.reading.kistore.store_documents`): added to a new
  store, it gives the same records, digest for digest.
* ``parquet``: one dataset per kind (``DIR/<view>/``, split into files of at most
  :data:`FILE_BYTES` so readers take them in parallel) and the flattened runs
  partitioned by kernel (``DIR/runs/kernel=<name>/``, Hive-style, which Spark, DuckDB,
  pandas and polars read as a column). All from one read transaction: one snapshot.

The output folder is written beside its final place and swapped into it in one step,
so a killed or interrupted export leaves the old ``DIR`` whole (or the new one, never
a part of either). The folder holds a manifest (:data:`MANIFEST`) of every file
export wrote, by which a later ``force`` recognises its own output: it replaces a
folder only when everything in it is what that export wrote, never a folder it did
not write. Never an output that holds the store read (``DIR`` the store's own folder
or one above it): replacing it would delete the store. Symbolic links are resolved,
so a linked ``DIR`` is replaced where it points and the link kept.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from typing import Any, Final, Literal

from kernelindex_sdk.base.ownedfolders import (
    into_place,
    new_work_folder,
    not_written_by,
    umask,
    write_manifest,
)
from kernelindex_sdk.errors import IntakeError
from kernelindex_sdk.reading.kistore import KIND_VIEWS, StoreError, connect, store_documents

__all__ = ["FILE_BYTES", "ExportRefused", "export"]

#: The most bytes of one Parquet file of a kind's dataset.
FILE_BYTES: Final = "256MB"


#: The manifest an export writes into its folder: what it wrote, so that ``force``
#: replaces only that. Hidden, so readers of the folder pass it over.
MANIFEST: Final = ".kernelindex-export.json"
_WRITER: Final = "kernelindex store export"


class ExportRefused(StoreError):
    """The output exists (and ``force`` was not given), holds what export did not
    write, holds the store, or cannot be made."""


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
    target = _output_folder(store, out, force)
    work = new_work_folder(target)
    try:
        if format == "jsonl":
            count = _jsonl(store, work, on_wait)
        else:
            count = _parquet(store, work, out, on_wait)
        write_manifest(work, MANIFEST, _WRITER, format=format)
        _as_the_umask_says(work)
        into_place(work, target)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return count


def _output_folder(store: str, out: str, force: bool) -> str:
    """Where ``out`` resolves to, once it is known that an export may replace it."""
    from kernelindex_sdk.base.outputs import input_inside, real, within

    if input_inside(out, [store]) is not None:
        raise ExportRefused(
            f"{out}: holds the store being exported ({store}): replacing it would delete"
            " the store; export to another folder. Nothing written"
        )
    if within(out, store):
        raise ExportRefused(f"{out}: is inside the store {store}, which is a file; nothing written")
    target = real(out)
    if not os.path.isdir(os.path.dirname(target)):
        raise ExportRefused(
            f"{out}: the folder it would be made in does not exist; nothing written"
        )
    if not os.path.lexists(target):
        return target
    if not os.path.isdir(target):
        raise ExportRefused(f"{out}: exists and is not a folder; nothing written")
    if not os.listdir(target):
        return target
    if not force:
        raise ExportRefused(f"{out}: exists and is not empty; use --force to replace it")
    foreign = not_written_by(target, MANIFEST, _WRITER)
    if foreign is not None:
        raise ExportRefused(f"{out}: not replaced, even with --force: {foreign}; nothing written")
    return target


def _as_the_umask_says(folder: str) -> None:
    """Every folder and file of the export with the permissions a new one gets (``0777``
    and ``0666`` less the umask), as ``import --out`` writes them: DuckDB makes its
    folders ``0755`` whatever the umask. Another user (a Spark job running as one)
    reads the export as the umask allows, no more and no less."""
    mask = umask()
    for parent, folders, files in os.walk(folder):
        for name in folders:
            os.chmod(os.path.join(parent, name), 0o777 & ~mask)
        for name in files:
            os.chmod(os.path.join(parent, name), 0o666 & ~mask)


def _jsonl(store: str, work: str, on_wait: Callable[[str], None] | None) -> int:
    from orjson import dumps

    count = 0
    with open(os.path.join(work, "records.jsonl"), "wb") as handle:
        for document in store_documents(store, on_wait=on_wait):
            if isinstance(document, IntakeError):
                raise StoreError(f"{document.problem}; nothing written")
            handle.write(dumps(document.value) + b"\n")
            count += 1
        handle.flush()
        os.fsync(handle.fileno())
    return count


def _quote(path: str) -> str:
    return "'" + path.replace("'", "''") + "'"


def _parquet(store: str, work: str, out: str, on_wait: Callable[[str], None] | None) -> int:
    from kernelindex_sdk.reading.kistore import require_duckdb

    duckdb = require_duckdb()
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
            _copy(
                connection,
                duckdb,
                f"""COPY (SELECT digest, name, api_version, record, origin,
                    origin_line, add_id FROM records WHERE kind = '{kind}' ORDER BY seq)
                TO {_quote(os.path.join(work, view))}
                (FORMAT parquet, FILE_SIZE_BYTES '{FILE_BYTES}')""",
                work,
                out,
            )
        row = connection.execute("SELECT count(*) FROM run_facts").fetchone()
        if row and row[0]:
            _copy(
                connection,
                duckdb,
                f"""COPY (SELECT * REPLACE (coalesce(kernel, '(unknown)') AS kernel)
                    FROM runs)
                TO {_quote(os.path.join(work, "runs"))}
                (FORMAT parquet, PARTITION_BY (kernel))""",
                work,
                out,
            )
        connection.execute("COMMIT")
    return count


def _copy(connection: Any, duckdb: Any, sql: str, work: str, out: str) -> None:
    """One ``COPY`` into ``work``: a failure to write there (a full disk) is the
    output's, said as such; any other (the store cannot be read) is the store's."""
    try:
        connection.execute(sql)
    except duckdb.Error as error:
        text = str(error)
        if work not in text:
            raise
        first = text.strip().splitlines()[0].replace(work, out)
        raise ExportRefused(f"{out}: cannot write: {first}; nothing written") from None
