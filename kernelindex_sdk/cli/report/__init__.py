"""Every command's output formats, and the one registry a command picks its reporter from.

A reporter turns what the library answered into one format; it decides nothing. Each
command's reporters are a module here, named after what they show: ``validate``'s
(:mod:`.validate`), ``schema diff``'s (:mod:`.schemadiff`), ``compare``'s tables
(:mod:`.comparison`), ``compare --summary``'s (:mod:`.summary`), ``compare --against``'s
(:mod:`.beforeafter`), ``history``'s (:mod:`.history`), ``ls``'s (:mod:`.inventory`) and
``store query``'s (:mod:`.query`).

What they share is written once: a line, aligned columns, Markdown tables, CSV rows,
JSON and figures (:mod:`.writing`); GitHub annotations and JUnit XML (:mod:`.ci`). Each
applies its format's escaping (:mod:`kernelindex_sdk.base.escaping`) to whatever it is
given.

A command names its reporter once: ``REPORTERS["compare", fmt](out, options)``.
:data:`REPORTERS` imports a reporter's module when it is asked for it, and
:func:`formats` lists a command's formats without importing any, so ``validate``'s
start-up loads this table and its own reporters only.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import IO, TYPE_CHECKING, Any, Literal, overload

if TYPE_CHECKING:
    from kernelindex_sdk.cli.report import (
        beforeafter,
        comparison,
        history,
        inventory,
        query,
        schemadiff,
        summary,
        validate,
    )

#: (command, format) → (module of this package, name of the reporter in it), each
#: command's formats in the order its ``--format`` lists them.
_WHERE: dict[tuple[str, str], tuple[str, str]] = {
    ("validate", "github"): ("validate", "GithubReporter"),
    ("validate", "json"): ("validate", "JsonReporter"),
    ("validate", "junit"): ("validate", "JunitReporter"),
    ("validate", "text"): ("validate", "TextReporter"),
    ("schema diff", "github"): ("schemadiff", "GithubReporter"),
    ("schema diff", "json"): ("schemadiff", "JsonReporter"),
    ("schema diff", "junit"): ("schemadiff", "JunitReporter"),
    ("schema diff", "text"): ("schemadiff", "TextReporter"),
    ("compare", "text"): ("comparison", "TextReporter"),
    ("compare", "markdown"): ("comparison", "MarkdownReporter"),
    ("compare", "json"): ("comparison", "JsonReporter"),
    ("compare", "csv"): ("comparison", "CsvReporter"),
    ("compare --summary", "text"): ("summary", "SummaryTextReporter"),
    ("compare --summary", "markdown"): ("summary", "SummaryMarkdownReporter"),
    ("compare --summary", "json"): ("summary", "SummaryJsonReporter"),
    ("compare --summary", "csv"): ("summary", "SummaryCsvReporter"),
    ("compare --against", "text"): ("beforeafter", "TextReporter"),
    ("compare --against", "markdown"): ("beforeafter", "MarkdownReporter"),
    ("compare --against", "json"): ("beforeafter", "JsonReporter"),
    ("compare --against", "csv"): ("beforeafter", "CsvReporter"),
    ("compare --against", "github"): ("beforeafter", "GithubReporter"),
    ("compare --against", "junit"): ("beforeafter", "JunitReporter"),
    ("history", "text"): ("history", "TextReporter"),
    ("history", "markdown"): ("history", "MarkdownReporter"),
    ("history", "csv"): ("history", "CsvReporter"),
    ("history", "json"): ("history", "JsonReporter"),
    ("ls", "text"): ("inventory", "InventoryTextReporter"),
    ("ls", "json"): ("inventory", "InventoryJsonReporter"),
    ("store query", "text"): ("query", "write_text"),
    ("store query", "json"): ("query", "write_json"),
    ("store query", "csv"): ("query", "write_csv"),
}


def formats(command: str) -> tuple[str, ...]:
    """The formats ``command`` offers, in its ``--format`` order (nothing imported)."""
    return tuple(fmt for name, fmt in _WHERE if name == command)


class Registry:
    """``REPORTERS[command, format]``: the reporter (a class, or for ``store query`` a
    function) a command makes with its output stream and options. A ``KeyError`` for a
    pair not offered: commands check the format first (:func:`formats`)."""

    @overload
    def __getitem__(
        self, key: tuple[Literal["validate"], str]
    ) -> Callable[..., validate.Reporter]: ...
    @overload
    def __getitem__(
        self, key: tuple[Literal["schema diff"], str]
    ) -> Callable[..., schemadiff.DiffReporter]: ...
    @overload
    def __getitem__(self, key: tuple[Literal["compare"], str]) -> comparison.ReporterFactory: ...
    @overload
    def __getitem__(
        self, key: tuple[Literal["compare --summary"], str]
    ) -> summary.SummaryReporterFactory: ...
    @overload
    def __getitem__(
        self, key: tuple[Literal["compare --against"], str]
    ) -> beforeafter.ReporterFactory: ...
    @overload
    def __getitem__(
        self, key: tuple[Literal["ls"], str]
    ) -> Callable[[IO[str]], inventory.InventoryReporter]: ...
    @overload
    def __getitem__(
        self, key: tuple[Literal["history"], str]
    ) -> Callable[..., history.HistoryReporter]: ...
    @overload
    def __getitem__(self, key: tuple[Literal["store query"], str]) -> query.Writer: ...
    def __getitem__(self, key: tuple[str, str]) -> Any:
        module, name = _WHERE[key]
        return getattr(importlib.import_module(f"{__name__}.{module}"), name)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(_WHERE)

    def __len__(self) -> int:
        return len(_WHERE)

    def __contains__(self, key: object) -> bool:
        return key in _WHERE


#: The registry: every (command, format) the CLI offers → its reporter.
REPORTERS = Registry()
