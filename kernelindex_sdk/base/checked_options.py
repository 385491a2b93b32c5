"""Option values every command checks alike, each refused in one line with exit 2.

The click callbacks of the SDK's commands and of the adapters' (``env``, ``import``,
``bench``), which use the SDK's public modules only: so here, not under ``cli``.

* **Text that goes into records** (``--set KEY=VALUE`` of ``env``, ``import`` and
  ``bench``): the callback :func:`utf8_text`. A byte that is not UTF-8
  (``--set $'torch=\\xff'``) reaches Python as a lone surrogate (``surrogateescape``);
  written into a record, it makes one that ``validate`` refuses. Such text is refused
  before anything runs, in one line naming the option and showing the bytes
  (:func:`~kernelindex_sdk.base.escaping.not_utf8`).
* **Worker counts** (``-j N``/``--jobs N`` of ``validate`` and ``store add``): the
  callback :func:`worker_count`. 0 means one per core; above
  :data:`~kernelindex_sdk.base.parallel.MAX_JOBS` or below 0 is refused. Within that, the
  run itself starts no more workers than two per core and than there is work for
  (:func:`~kernelindex_sdk.base.parallel.planned_workers`).
"""

from __future__ import annotations

from typing import IO, Any

import click

from kernelindex_sdk.base.escaping import int_text, not_utf8, one_line
from kernelindex_sdk.base.parallel import MAX_JOBS

#: The exit status of a usage error, as every command has it.
USAGE_ERROR = 2
#: What ``--jobs`` takes, said in its refusal.
JOBS_RANGE = f"0 (one per core) to {MAX_JOBS}"


class OneLineUsageError(click.ClickException):
    """A refused option value: its message is the whole output, one line; exit 2."""

    exit_code = USAGE_ERROR

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(self.format_message(), err=True, file=file)


def _name(param: click.Parameter) -> str:
    """How a message names the parameter: its longest option spelling, or its metavar."""
    if isinstance(param, click.Option) and param.opts:
        return max(param.opts, key=len)
    return param.human_readable_name


def _refuse(ctx: click.Context, message: str) -> OneLineUsageError:
    return OneLineUsageError(one_line(f"{ctx.command_path}: error: {message}"))


def utf8_text(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """A click callback: ``value`` (text, or a tuple of texts for a repeatable option)
    as it is, or :class:`OneLineUsageError` for the first text that is not UTF-8."""
    values = value if isinstance(value, (tuple, list)) else (value,)
    for text in values:
        if isinstance(text, str):
            problem = not_utf8(_name(param), text)
            if problem is not None:
                raise _refuse(ctx, problem)
    return value


def worker_count(ctx: click.Context, param: click.Parameter, value: int | None) -> int | None:
    """A click callback for ``--jobs`` (type ``int``): ``value``, or
    :class:`OneLineUsageError` when it is outside :data:`JOBS_RANGE`."""
    if value is not None and not 0 <= value <= MAX_JOBS:
        raise _refuse(ctx, f"{_name(param)} {int_text(value)}: expected {JOBS_RANGE}")
    return value
