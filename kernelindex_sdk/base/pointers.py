"""RFC 6901 JSON pointers: the one place that escapes and unescapes reference tokens.

Every layer names places in documents with pointers (intake's duplicate keys, schema
errors, model errors, semantic checks, the schema bundler), so the escaping rule
lives here, below all of them: ``~`` → ``~0`` first, then ``/`` → ``~1``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def escape_token(token: str | int) -> str:
    """One reference token: ``~`` → ``~0``, ``/`` → ``~1`` (in that order, RFC 6901 §3)."""
    text = str(token)
    if "~" in text or "/" in text:
        return text.replace("~", "~0").replace("/", "~1")
    return text


def unescape_token(token: str) -> str:
    """The key a reference token names: ``~1`` → ``/``, then ``~0`` → ``~`` (§4)."""
    if "~" in token:
        return token.replace("~1", "/").replace("~0", "~")
    return token


def pointer_of(path: Iterable[str | int], base: str = "") -> str:
    """The pointer to a path of keys and indices, under the pointer ``base``."""
    return base + "".join("/" + escape_token(p) for p in path)


def pointed_at(document: Any, pointer: str) -> Any:
    """The value ``pointer`` (``""`` or ``/a/0/b``, not percent-encoded) names in
    ``document`` (§4: an array index is digits below the length); :class:`LookupError`
    when it names nothing. What a ``$ref``'s fragment reaches, for every schema walker."""
    node = document
    for escaped in pointer.split("/")[1:]:
        token = unescape_token(escaped)
        if isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        elif isinstance(node, Mapping) and token in node:
            node = node[token]
        else:
            raise LookupError(f"{pointer!r}: no {token!r}")
    return node
