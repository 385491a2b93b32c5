"""Command-line text that a command writes into records: refused unless it is UTF-8.

Every option or argument whose text ends up in a record (``--set KEY=VALUE`` of
``env``, ``import`` and ``bench``) takes :func:`utf8_text` as its click callback. A
byte that is not UTF-8 (``--set $'torch=\\xff'``) reaches Python as a lone surrogate
(``surrogateescape``); written into a record, it makes one that ``validate`` refuses.
Such text is refused before anything runs: one line naming the option and showing the
bytes (:func:`~kernelindex_sdk.printable.not_utf8`), exit 2.
"""

from __future__ import annotations

from typing import IO, Any

import click

from kernelindex_sdk.printable import not_utf8, one_line

#: The exit status of a usage error, as every command has it.
USAGE_ERROR = 2


class NotUtf8Text(click.ClickException):
    """Text for a record that is not UTF-8: shown as its one line, exit 2."""

    exit_code = USAGE_ERROR

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(self.format_message(), err=True, file=file)


def _name(param: click.Parameter) -> str:
    """How a message names the parameter: its first option spelling, or its metavar."""
    if isinstance(param, click.Option) and param.opts:
        return param.opts[0]
    return param.human_readable_name


def utf8_text(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """A click callback: ``value`` (text, or a tuple of texts for a repeatable option)
    as it is, or :class:`NotUtf8Text` for the first text that is not UTF-8."""
    values = value if isinstance(value, (tuple, list)) else (value,)
    for text in values:
        if isinstance(text, str):
            problem = not_utf8(_name(param), text)
            if problem is not None:
                raise NotUtf8Text(one_line(f"{ctx.command_path}: error: {problem}"))
    return value
