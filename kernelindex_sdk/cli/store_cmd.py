"""``kernelindex store add|query|export``: click options → :mod:`kernelindex_sdk.store`.

Every failure that is not a record's is one line on stderr and exit 2: DuckDB not
installed (how to install it), a store that is not a kernelindex store or is corrupt,
a full disk, SQL that is refused. A refused record is its problem line, the rest of
the add goes in, and the exit status is 1.
"""

from __future__ import annotations

import sys
from typing import Any, Literal, NoReturn

import click

from kernelindex_sdk.base.checked_options import worker_count
from kernelindex_sdk.base.escaping import one_line
from kernelindex_sdk.cli.report import REPORTERS, formats

_STORE_HELP = (
    "The store file. Default: $KERNELINDEX_STORE, else kernelindex.kistore in the"
    " working directory."
)


def _fail(command: str, message: str) -> NoReturn:
    sys.stdout.flush()
    name = f"store {command}" if command else "store"
    sys.stderr.write(one_line(f"kernelindex {name}: {message}") + "\n")
    sys.exit(2)


def _waiting(command: str) -> Any:
    def say(message: str) -> None:
        sys.stderr.write(one_line(f"kernelindex store {command}: {message}") + "\n")
        sys.stderr.flush()

    return say


def _store_path(store: str | None) -> str:
    from kernelindex_sdk.reading.kistore import default_store

    return store or default_store()


@click.group("store")
def store_group() -> None:
    """Keep every run: an append-only DuckDB store, SQL over it, Parquet out.

    A store file is also a PATH: validate, digest, ls, compare and export read it
    exactly as the files it was made from (docs/store.md).
    """
    try:
        import duckdb  # noqa: F401
    except ImportError:
        from kernelindex_sdk.reading.kistore import INSTALL_HINT

        _fail("", f"needs DuckDB: {INSTALL_HINT}")


@store_group.command("add")
@click.argument("paths", nargs=-1, required=True)
@click.option("--store", "store", default=None, help=_STORE_HELP)
@click.option(
    "-j",
    "--jobs",
    type=click.INT,
    callback=worker_count,
    default=None,
    help="Processes to check with, as for validate (0: one per core; never more than two"
    " per core, nor than there is work for; above 1024 is refused).",
)
@click.option(
    "--token-file",
    default=None,
    help="With --store URL (a kernelindex serve): the file holding the write token."
    " Default: $KERNELINDEX_TOKEN.",
)
def add_command(
    paths: tuple[str, ...], store: str | None, jobs: int | None, token_file: str | None
) -> None:
    """Check records as validate --strict-refs does, then add the valid ones.

    References may resolve to records already in the store. A refused record is one
    line (FILE[:LINE]: POINTER: MESSAGE) and is not stored; the others are, in one
    transaction (all or none of them, whatever happens). A record already stored
    (same digest) is counted, not stored again. Exit status: 0 all stored or
    present, 1 something refused, 2 unreadable input or an unusable store.

    --store URL posts each PATH (a file) to that kernelindex serve instead: each file
    is added all or nothing there (docs/serve.md).
    """
    if store is not None and store.startswith(("http://", "https://")):
        _add_remote(paths, store, token_file)
    from kernelindex_sdk.base.parallel import WorkerFailed
    from kernelindex_sdk.cli.report.validate import ProblemPrinter
    from kernelindex_sdk.reading.kistore import require_duckdb
    from kernelindex_sdk.store import StoreError, add

    duckdb = require_duckdb()
    path = _store_path(store)

    report = ProblemPrinter(sys.stdout.write)
    try:
        try:
            result = add(paths, path, jobs=jobs, on_problem=report, on_wait=_waiting("add"))
        finally:
            report.close()
    except StoreError as error:
        _fail("add", f"{error}")
    except WorkerFailed as error:
        _fail("add", f"{error} (rerun with --jobs 1); nothing added")
    except duckdb.Error as error:
        _fail("add", f"{path}: {_first_line(str(error))}; nothing added")
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        _fail("add", f"{where}cannot write: {error.strerror or error}; nothing added")
    sys.stdout.write(one_line(f"{path}: {result.summary()}") + "\n")
    sys.exit(result.exit_status())


def _add_remote(paths: tuple[str, ...], url: str, token_file: str | None) -> NoReturn:
    """``store add`` into a server: each file posted, its problems printed as the
    server gives them but naming the file; the summary and exit status of ``add``."""
    import json
    import os

    from kernelindex_sdk.cli.remote import TOKEN_ENV, RemoteError, post_file

    token = os.environ.get(TOKEN_ENV, "")
    if token_file is not None:
        try:
            with open(token_file, encoding="utf-8") as handle:
                token = handle.read().strip()
        except (OSError, UnicodeDecodeError) as error:
            _fail("add", f"{token_file}: cannot read the token file: {error}")
    stored = present = refused = unreadable = files = 0
    for path in paths:
        try:
            status, answer = post_file(url, path, token)
        except RemoteError as error:
            _fail("add", f"{error}; {path} not added")
        except OSError as error:
            _fail("add", f"{path}: cannot read: {error.strerror or error}; not added")
        files += 1
        if status in (400, 422):
            lines = answer.decode("utf-8", "replace").splitlines()
            for line in lines[:-1]:
                label, _, rest = line.partition(":")
                sys.stdout.write(
                    one_line(f"{path}:{rest}" if label.startswith("posted/") else line) + "\n"
                )
            unreadable += status == 400
            refused += status == 422
            continue
        done = json.loads(answer)
        stored, present = stored + done["stored"], present + done["present"]
    summary = (
        f"{stored} stored, {present} already present, {refused} files refused"
        f"{f', {unreadable} unreadable' if unreadable else ''} in {files} files"
    )
    sys.stdout.write(one_line(f"{url}: {summary}") + "\n")
    sys.exit(2 if unreadable else 1 if refused else 0)


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


@store_group.command("query")
@click.argument("sql")
@click.option("--store", "store", default=None, help=_STORE_HELP)
@click.option(
    "--format",
    "format_",
    type=click.Choice(formats("store query")),
    default="text",
    show_default=True,
    help="Aligned columns for people, a JSON array of objects, or CSV with a header.",
)
def query_command(sql: str, store: str | None, format_: str) -> None:
    """Run one read-only SELECT over the store's views (runs, benchmark_runs,
    workloads, implementations, protocols, environments; docs/store.md)."""
    from kernelindex_sdk.reading.kistore import StoreError
    from kernelindex_sdk.store.querying import query

    path = _store_path(store)
    try:
        result = query(path, sql, on_wait=_waiting("query"))
    except StoreError as error:
        _fail("query", str(error))
    REPORTERS["store query", format_](sys.stdout, result.columns, result.rows)


@store_group.command("export")
@click.option(
    "--format", "format_", type=click.Choice(["jsonl", "parquet"]), required=True,
    help="jsonl: DIR/records.jsonl, the documents as added. parquet: a dataset per"
    " kind and the runs partitioned by kernel.",
)  # fmt: skip
@click.option("--out", "out", required=True, help="The folder to write (made by export).")
@click.option("--store", "store", default=None, help=_STORE_HELP)
@click.option("--force", is_flag=True, help="Replace an existing non-empty --out folder.")
def export_command(format_: str, out: str, store: str | None, force: bool) -> None:
    """Write the store's records out: JSON Lines, or Parquet for Spark, DuckDB,
    pandas and polars."""
    from kernelindex_sdk.reading.kistore import StoreError, require_duckdb
    from kernelindex_sdk.store.exporting import export

    duckdb = require_duckdb()
    path = _store_path(store)
    fmt: Literal["jsonl", "parquet"] = "jsonl" if format_ == "jsonl" else "parquet"
    try:
        count = export(path, out, format=fmt, force=force, on_wait=_waiting("export"))
    except StoreError as error:
        _fail("export", str(error))
    except duckdb.Error as error:
        _fail("export", f"{out}: {_first_line(str(error))}; nothing written")
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        _fail("export", f"{where}cannot write: {error.strerror or error}; nothing written")
    what = "documents" if format_ == "jsonl" else "records"
    sys.stdout.write(one_line(f"{out}: {count} {what} exported") + "\n")
