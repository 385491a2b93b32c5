"""Problems and the exceptions that carry them.

Every failure the SDK reports, from a stray byte to a quantile out of order, becomes
one :class:`Problem`: *where* (file, line, column, RFC 6901 pointer) and *what*
(a one-line message and a stable code). Reporters only ever format problems, so
schema errors, model errors, intake errors and semantic checks all print alike:
``file[:line[:col]]: <pointer>: message``.

Failures that stop reading a document raise a subclass of :class:`IntakeError`,
one precise type per cause (as python-jsonschema/referencing does), each holding
its problem.
"""

from __future__ import annotations

import re

from kernelindex_sdk.base.escaping import one_line, short_repr
from kernelindex_sdk.base.frozenvalue import FrozenValue
from kernelindex_sdk.base.recordformat import json_type
from kernelindex_sdk.base.suggest import closest, did_you_mean


class Problem(FrozenValue):
    """One thing wrong with one input, located as precisely as we can.

    A frozen dataclass to :mod:`dataclasses` (``replace``, ``fields``, ``asdict``), made
    without one's import-time cost (:mod:`kernelindex_sdk.base.frozenvalue`)."""

    __match_args__ = __slots__ = ("message", "code", "pointer", "source", "line", "column")
    message: str
    #: Stable machine-readable cause, e.g. ``duplicate-key`` or ``schema``.
    code: str
    #: RFC 6901 JSON pointer into the document ("" is the whole document).
    pointer: str
    #: The file (or ``<stdin>``) the problem was found in.
    source: str | None
    #: 1-based line, where known (JSON Lines: the line of the record).
    line: int | None
    #: 1-based column, where known.
    column: int | None

    def __init__(
        self,
        message: str,
        code: str = "invalid",
        pointer: str = "",
        source: str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        _set = object.__setattr__
        _set(self, "message", message)
        _set(self, "code", code)
        _set(self, "pointer", pointer)
        _set(self, "source", source)
        _set(self, "line", line)
        _set(self, "column", column)

    def located(self) -> str:
        """``file:line:col`` (as much of it as is known)."""
        where = self.source or "<input>"
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return where

    def __str__(self) -> str:
        """``file[:line[:col]]: <pointer>: message`` as one printable line.

        The pointer is left out for the root. Everything from input is escaped
        (:func:`~kernelindex_sdk.base.escaping.one_line`), so a problem is always one line.
        """
        if self.pointer:
            return one_line(f"{self.located()}: {self.pointer}: {self.message}")
        return one_line(f"{self.located()}: {self.message}")


class KernelIndexError(Exception):
    """Base of every exception the SDK raises on purpose."""


class IntakeError(KernelIndexError):
    """A document could not be read as strict JSON. Carries its :class:`Problem`."""

    code = "unreadable"

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        column: int | None = None,
        pointer: str = "",
    ) -> None:
        self.problem = Problem(
            message=message,
            code=self.code,
            pointer=pointer,
            source=source,
            line=line,
            column=column,
        )
        super().__init__(str(self.problem))


class UnreadableFile(IntakeError):
    """The file cannot be opened or read (missing, a directory, permissions)."""

    code = "unreadable-file"


class UnreadableDirectory(IntakeError):
    """A directory under a walked path cannot be listed (permissions, I/O error)."""

    code = "unreadable-directory"


class SymlinkLoop(IntakeError):
    """A symbolic link under a walked path leads back to a directory being walked."""

    code = "symlink-loop"


class NotARegularFile(IntakeError):
    """A FIFO, socket or device: reading one may block forever or never end."""

    code = "not-a-regular-file"


class DocumentTooLarge(IntakeError):
    """One document (a file, a JSON Lines line, stdin) is above the size limit."""

    code = "document-too-large"


class EmptyDocument(IntakeError):
    """The input holds no JSON value at all (empty or whitespace only)."""

    code = "empty-document"


class MalformedJSON(IntakeError):
    """The text is not JSON (syntax error, trailing data, ...)."""

    code = "malformed-json"


class InvalidEncoding(IntakeError):
    """The bytes are not UTF-8, or a string holds a lone surrogate."""

    code = "invalid-encoding"


class ByteOrderMark(IntakeError):
    """The input starts with a byte-order mark, which RFC 8259 forbids in JSON text."""

    code = "byte-order-mark"


class DuplicateKey(IntakeError):
    """An object names the same key twice: two parsers would read two different records."""

    code = "duplicate-key"


class NonFiniteNumber(IntakeError):
    """NaN, Infinity or -Infinity: not JSON, and not representable in JCS."""

    code = "non-finite-number"


class NumberOutOfRange(IntakeError):
    """An integer beyond ±(2**53 - 1), or a number no IEEE double represents exactly."""

    code = "number-out-of-range"


class NestingTooDeep(IntakeError):
    """Arrays and objects nested deeper than the fixed limit."""

    code = "nesting-too-deep"


class NotARecord(KernelIndexError):
    """A value given where a record is needed lacks ``apiVersion``, ``kind`` or ``spec``
    (or, for ``link``, is not the kind its argument names)."""


class NotJSON(KernelIndexError):
    """A Python value is not one strict JSON document (a cycle, nesting beyond the
    limit, a non-string key, a value of no JSON type, NaN, an integer beyond
    ±(2**53 − 1)); ``problems`` locates each reason."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        shown = "; ".join(f"{p.pointer or '/'}: {p.message}" for p in problems[:3]) + (
            f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        )
        super().__init__(one_line(f"not strict JSON: {shown}"))


class SchemaDirectoryError(KernelIndexError):
    """A folder given as a schema registry is missing or unreadable, holds no schemas,
    or holds a schema file that cannot be read (not JSON, no ``$id``)."""


class UnresolvableReference(KernelIndexError):
    """A schema's ``$ref`` names a URI that no schema of the registry holds (nothing is
    ever fetched over the network): ``schema`` is the schema being used, ``ref`` the
    reference that failed."""

    def __init__(self, schema: str, ref: str, message: str | None = None) -> None:
        self.schema = schema
        self.ref = ref
        if message is None:
            message = f"{schema}: $ref {ref!r} resolves to no schema of the registry (offline)"
        super().__init__(one_line(message))


def _kinds_like(kind: str, kinds: list[str]) -> tuple[str, ...]:
    """Kinds to suggest for ``kind``: the closest spellings; else kinds one of whose
    words is close (``protocl`` → ``BenchmarkProtocol``) or that hold it (``Run`` →
    ``BenchmarkRun``)."""
    names = list(dict.fromkeys(kinds))
    found = closest(kind, names)
    if found:
        return found
    by_word: dict[str, str] = {}
    for name in names:
        for word in re.findall(r"[A-Z][a-z0-9]*|[a-z0-9]+", name):
            by_word.setdefault(word, name)
    found = tuple(dict.fromkeys(by_word[word] for word in closest(kind, by_word)))
    if not found and kind.strip():
        found = tuple(name for name in names if kind.strip().casefold() in name.casefold())
    return found


class UnknownKind(KernelIndexError):
    """No schema is registered for a record's ``apiVersion`` + ``kind`` (or, looked up
    by name, for a kind in any or a given version: ``api_version`` is then None or the
    version asked for, and ``lookup`` is True)."""

    def __init__(
        self, api_version: object, kind: object, known: list[str], *, lookup: bool = False
    ) -> None:
        self.api_version = api_version
        self.kind = kind
        self.known = known
        by_version: dict[str, list[str]] = {}
        for pair in known:
            version, _, name = pair.rpartition("/")
            by_version.setdefault(version, []).append(name)
        listed = "; ".join(f"{v}: {', '.join(names)}" for v, names in by_version.items())
        # A string is quoted whole; anything else short (it may be deep, cyclic or huge).
        given_version, given_kind = (
            repr(v) if isinstance(v, str) else short_repr(v) for v in (api_version, kind)
        )
        if not lookup:
            message = (
                f"unknown apiVersion/kind {_member(api_version)}/{_member(kind)} (known: {listed})"
            )
        elif api_version is None:
            message = f"no schema for a kind named {given_kind} (known: {listed})"
        else:
            message = (
                f"no schema for kind {given_kind} in apiVersion {given_version} (known: {listed})"
            )
        if isinstance(kind, str):
            message += did_you_mean(_kinds_like(kind, [pair.rpartition("/")[2] for pair in known]))
        super().__init__(message)


def _member(value: object) -> str:
    """A record's ``apiVersion`` or ``kind`` as a message shows it: a string quoted, a
    missing or null one as ``(missing)``, anything else by its JSON type — never
    Python's ``None`` or a Python type name."""
    if isinstance(value, str):
        return repr(value)
    if value is None:
        return "(missing)"
    name = json_type(value)
    return f"({'an' if name[0] in 'aeiou' else 'a'} {name}, not a string)"
