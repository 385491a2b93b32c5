"""Provenance of environment and protocol fields, and what the caller declares.

A source file rarely says everything a record can hold: nvbench records no driver or
CUDA version, KernelBench no PyTorch version and no timer, Liger's CSV no software at
all. The format's optional ``provenance`` map (docs/format.md) says, per field, where
its value came from — the source's own entry (``record``), elsewhere in the same file
(``file``), a file or folder name, the importer's catalog, the caller — and which
fields are ``unknown`` (absent, because nothing said them). Importers build it with
:class:`ProvenanceMap`.

What the caller knows and the file does not (``--set torch=2.5.0``) arrives as
:class:`Declarations`: software versions — the :data:`KNOWN_SOFTWARE` components by
name, any other as ``software.NAME`` — plus a few keys each importer reserves for
itself (``timer``, ``warmup``, ``gpu``, ``observed-at``). Every other key is refused,
naming the known ones, and every value is checked: a typo is a usage error, never a
recorded fact that changes digests. A declared value is written with origin
``caller``; it never overrides what the source itself records.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import attrs

from kernelindex_sdk.base.escaping import not_utf8
from kernelindex_sdk.base.pointers import pointer_of
from kernelindex_sdk.base.recordformat import parse_timestamp

RECORD = "record"
FILE = "file"
CALLER = "caller"
CATALOG = "catalog"
UNKNOWN = "unknown"

#: A software component name, as ``ExecutionEnvironment.spec.software`` allows it.
_COMPONENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_MAX_VERSION = 128
#: A version as packages publish them (``2.5.0``, ``2.5.0+cu124``, ``550.54.15``,
#: ``1:2.3-1``, ``12.4.0~rc1``): letters, digits and ``. + - _ ~ :``, starting with a
#: letter or a digit and holding a digit. No spaces or control characters: a version
#: with a newline (``torch=2.5\n0``) is a typo, never a fact to record.
_VERSION = re.compile(r"(?=[^0-9]*[0-9])[A-Za-z0-9][A-Za-z0-9.+_~:-]*")
_MAX_DETAIL = 4096
#: The schema's timestamp pattern (common.schema.json#/$defs/timestamp).
_TIMESTAMP = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})"
)
#: The timers a protocol may name (the schema's enum, "unknown" aside).
TIMERS = ("cuda_events", "cuda_graph", "cupti", "wall_clock")
#: Software components every importer takes as ``--set NAME=VERSION`` (those the
#: schema's ``software`` description names). Any other component must be spelled
#: ``--set software.NAME=VERSION``: a mistyped key (``tim=cuda_events`` for ``timer``)
#: is then a usage error, not a software version recorded as a fact.
KNOWN_SOFTWARE = ("driver", "cuda", "torch", "triton", "python")
#: The explicit form of a free-form software component: ``software.NAME=VERSION``.
SOFTWARE_PREFIX = "software."
#: The workload dtypes the importers write (each importer's data maps its source's
#: spellings onto these; a test holds them to it), and so the only ones a caller may
#: declare with ``--set dtype=``. The schema itself allows any slug.
DTYPES = (
    "fp64",
    "fp32",
    "tf32",
    "fp16",
    "bf16",
    "fp8_e4m3fn",
    "fp8_e4m3fnuz",
    "fp8_e5m2",
    "fp8_e5m2fnuz",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
)


class DeclarationError(ValueError):
    """A ``--set KEY=VALUE`` the importer cannot use; the message is one line."""


class ProvenanceMap:
    """Pointer into a spec → where that field came from; written sorted by pointer."""

    def __init__(self) -> None:
        self._entries: dict[str, dict[str, str]] = {}

    def add(self, path: Sequence[str], origin: str, detail: str | None = None) -> None:
        """Say where the field at ``path`` (keys from the spec) came from."""
        entry = {"origin": origin}
        if detail:
            entry["detail"] = detail[:_MAX_DETAIL]
        self._entries[pointer_of(path)] = entry

    def add_all(
        self, paths: Iterable[Sequence[str]], origin: str, detail: str | None = None
    ) -> None:
        """The same origin for several fields."""
        for path in paths:
            self.add(path, origin, detail)

    def as_json(self) -> dict[str, dict[str, str]]:
        """The ``provenance`` member: entries sorted by pointer (stable bytes)."""
        return {pointer: self._entries[pointer] for pointer in sorted(self._entries)}


def hardware_provenance(
    provenance: ProvenanceMap, hardware: Mapping[str, Any], origin: str, detail: str
) -> None:
    """Every field of ``hardware`` came from one place (the importer adds exceptions after)."""
    provenance.add_all((("hardware", key) for key in hardware), origin, detail)


@attrs.frozen
class Declarations:
    """What the caller declared: software versions, and the importer's reserved keys."""

    software: Mapping[str, str] = attrs.field(factory=dict)
    reserved: Mapping[str, str] = attrs.field(factory=dict)

    def __bool__(self) -> bool:
        return bool(self.software or self.reserved)


def known_keys(reserved: Iterable[str] = ()) -> list[str]:
    """The ``--set`` keys an importer with ``reserved`` keys takes, as its messages list
    them: its own keys, the :data:`KNOWN_SOFTWARE` components, ``software.NAME``."""
    return [*reserved, *KNOWN_SOFTWARE, f"{SOFTWARE_PREFIX}NAME"]


def split_setting(
    item: str, error: type[Exception], shown: str | None = None, example: str = ""
) -> tuple[str, str]:
    """The KEY (stripped) and the VALUE of a ``--set KEY=VALUE`` item. An item that is
    not UTF-8 text, or has no ``=`` or no KEY, raises ``error`` with the one line that
    says so: the item shown as ``shown`` (its ``repr`` when not given), ``example``
    after the form expected."""
    problem = not_utf8("--set", item)
    if problem is not None:
        raise error(problem)
    key, sep, value = item.partition("=")
    key = key.strip()
    if not sep or not key:
        shown = repr(item) if shown is None else shown
        raise error(f"--set {shown}: expected KEY=VALUE{example}")
    return key, value


def parse_declarations(items: Sequence[str], reserved: Iterable[str] = ()) -> Declarations:
    """``["torch=2.5.0", "timer=cuda_events", "software.nccl=2.21.5"]`` → :class:`Declarations`.

    A key in ``reserved`` is the importer's own; a key in :data:`KNOWN_SOFTWARE` or
    ``software.NAME`` declares that component's version. Raises
    :class:`DeclarationError` for an item that is not UTF-8 text, a malformed item, a
    key given twice, any other key (naming the known ones), a component name or a
    version the format does not allow.
    """
    own = tuple(reserved)
    software: dict[str, str] = {}
    settings: dict[str, str] = {}
    for item in items:
        key, value = split_setting(item, DeclarationError)
        if not value:
            raise DeclarationError(f"--set {key}=: an empty value declares nothing")
        if key in own:
            if key in settings:
                raise DeclarationError(f"--set {key}: given twice")
            settings[key] = value
            continue
        component = _component(key, own)
        if component in software:
            raise DeclarationError(f"--set {key}: given twice")
        software[component] = _version(key, value)
    return Declarations(software=software, reserved=settings)


def _component(key: str, own: Sequence[str]) -> str:
    """The software component a ``--set`` key declares, or a usage error naming the keys."""
    if key.startswith(SOFTWARE_PREFIX):
        component = key[len(SOFTWARE_PREFIX) :]
        if not _COMPONENT.fullmatch(component):
            raise DeclarationError(
                f"--set {key!r}: not a software component name (letters, digits, . _ -; "
                "at most 128, starting with a letter or digit)"
            )
        return component
    if key in KNOWN_SOFTWARE:
        return key
    import difflib  # only for the message

    known = known_keys(own)
    close = difflib.get_close_matches(key, [*own, *KNOWN_SOFTWARE], n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise DeclarationError(
        f"--set {key!r}: unknown key{hint} (known: {', '.join(known)}; "
        f"declare any other software version as {SOFTWARE_PREFIX}NAME=VERSION)"
    )


def _version(key: str, value: str) -> str:
    """A declared version, checked: a typo must not become a recorded fact."""
    if len(value) > _MAX_VERSION:
        raise DeclarationError(f"--set {key}: a version holds at most {_MAX_VERSION} characters")
    if not _VERSION.fullmatch(value):
        raise DeclarationError(
            f"--set {key}={value!r}: not a version (letters, digits and . + - _ ~ :, "
            "starting with a letter or digit and holding a digit; no spaces or control "
            "characters)"
        )
    return value


def declared_dtype(value: str) -> str:
    """A declared workload dtype: one of :data:`DTYPES`."""
    if value not in DTYPES:
        raise DeclarationError(
            f"--set dtype={value!r}: not a known dtype (known: {', '.join(DTYPES)})"
        )
    return value


def declared_timer(value: str) -> str:
    """A declared timer: one of the format's timers."""
    if value not in TIMERS:
        raise DeclarationError(f"--set timer={value!r}: expected one of {', '.join(TIMERS)}")
    return value


def declared_count(key: str, value: str) -> int:
    """A declared non-negative whole number (warm-up iterations)."""
    if not value.isascii() or not value.isdigit() or len(value) > 15:
        raise DeclarationError(f"--set {key}={value!r}: expected a whole number")
    return int(value)


def declared_timestamp(value: str) -> str:
    """A declared ``observedAt``: an RFC 3339 timestamp with an offset, not in the future."""
    moment = parse_timestamp(value) if _TIMESTAMP.fullmatch(value) else None
    if moment is None:
        raise DeclarationError(
            f"--set observed-at={value!r}: expected an RFC 3339 timestamp with an offset, "
            "e.g. 2024-12-01T00:00:00Z"
        )
    if moment > datetime.now(timezone.utc) + timedelta(minutes=5):
        raise DeclarationError(f"--set observed-at={value}: is in the future")
    return value


def software_spec(
    recorded: Mapping[str, tuple[str, str, str]],
    declared: Mapping[str, str],
    expected: Sequence[str],
    provenance: ProvenanceMap,
) -> dict[str, str]:
    """``spec.software`` from what the source records and the caller declares.

    ``recorded``: component → (version, origin, detail), from the source; a declared
    version never replaces one of these. ``expected``: components a reader would
    want and the source may not say (``driver``, ``cuda``): each one neither recorded
    nor declared is listed as ``unknown``.
    """
    software: dict[str, str] = {}
    for component, (version, origin, detail) in recorded.items():
        software[component] = version
        provenance.add(("software", component), origin, detail)
    for component, version in declared.items():
        if component not in software:
            software[component] = version
            provenance.add(("software", component), CALLER, f"--set {component}={version}")
    for component in expected:
        if component not in software:
            provenance.add(("software", component), UNKNOWN, "the source does not say")
    return dict(sorted(software.items()))
