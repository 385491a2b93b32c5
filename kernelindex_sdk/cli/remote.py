"""A ``kernelindex serve`` URL where a command takes a store: the client side.

``validate``, ``compare`` (either side of ``--against``), ``history``, ``report``, ``ls``
and ``digest`` take ``http://…`` or ``https://…`` as a PATH: the server's documents
(``GET /documents.jsonl``, every document as added) are fetched into a temporary JSON
Lines file, read like any other, and removed afterwards. ``store add --store URL`` posts
each PATH to ``POST /records`` instead of opening a store (:func:`post_file`). The
standard library's HTTP client only; a server that cannot be reached, or that answers
an error, is one line (exit 2).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Final
from urllib.parse import urlsplit

__all__ = ["TOKEN_ENV", "RemoteError", "fetched", "is_url", "post_file"]

#: Commands whose PATHs may be server URLs.
READERS: Final = ("validate", "compare", "history", "report", "ls", "digest")
#: The environment variable holding the write token, when ``--token-file`` is not given.
TOKEN_ENV: Final = "KERNELINDEX_TOKEN"
#: Seconds to wait for a server's answer.
TIMEOUT_S: Final = 600.0


class RemoteError(Exception):
    """A server that could not be reached or refused: one line."""


def is_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


def _base(url: str) -> str:
    parts = urlsplit(url)
    if not parts.netloc:
        raise RemoteError(f"{url}: not a server URL (http://HOST[:PORT])")
    return url.rstrip("/")


def _reason(url: str, error: Exception) -> RemoteError:
    if isinstance(error, urllib.error.HTTPError):
        body = error.read(2000).decode("utf-8", "replace").strip()
        first = body.splitlines()[0] if body else error.reason
        return RemoteError(f"{url}: {error.code} {first}")
    reason = getattr(error, "reason", None) or error
    return RemoteError(f"{url}: cannot reach the server: {reason}")


@contextlib.contextmanager
def fetched(args: list[str]) -> Iterator[list[str]]:
    """``args`` with each server URL replaced by a file of its documents (removed on
    leaving); raises :class:`RemoteError`."""
    if not args or args[0] not in READERS or not any(is_url(a) for a in args[1:]):
        yield args
        return
    folder = tempfile.mkdtemp(prefix="kernelindex-remote-")
    try:
        local = [args[0]]
        for number, arg in enumerate(args[1:]):
            local.append(_download(arg, folder, number) if is_url(arg) else arg)
        yield local
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _download(url: str, folder: str, number: int) -> str:
    source = _base(url) + "/documents.jsonl"
    host = urlsplit(url).netloc.replace(":", "_").replace("/", "_")
    path = os.path.join(folder, f"{number}-{host}.jsonl")
    try:
        with urllib.request.urlopen(source, timeout=TIMEOUT_S) as answer, open(path, "wb") as out:
            shutil.copyfileobj(answer, out)
    except (urllib.error.URLError, OSError, ValueError) as error:
        raise _reason(url, error) from None
    return path


def post_file(url: str, path: str, token: str) -> tuple[int, bytes]:
    """``POST /records`` of the file at ``path`` (JSON Lines by its suffix): the status
    and the answer; raises :class:`RemoteError` when there is no answer, and
    ``OSError`` when the file cannot be read."""
    with open(path, "rb") as handle:
        body = handle.read()
    jsonl = path.lower().endswith((".jsonl", ".ndjson"))
    request = urllib.request.Request(
        _base(url) + "/records",
        data=body,
        method="POST",
        headers={"Content-Type": "application/x-ndjson" if jsonl else "application/json"},
    )
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:
            return int(answer.status), answer.read()
    except urllib.error.HTTPError as error:
        if error.code in (400, 422):
            return error.code, error.read()
        raise _reason(url, error) from None
    except (urllib.error.URLError, OSError, ValueError) as error:
        raise _reason(url, error) from None
