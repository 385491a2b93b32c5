"""``kernelindex validate``'s click command, built from :data:`~kernelindex_sdk.cli.
validate_cmd.OPTIONS`: click parses into the same :class:`ValidateOptions` that
``parse_plain`` makes, and :func:`~kernelindex_sdk.cli.validate_cmd.run_validate` runs it.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from kernelindex_sdk.base.checked_options import worker_count
from kernelindex_sdk.cli.validate_cmd import (
    HELP,
    OPTIONS,
    OptionSpec,
    ValidateOptions,
    run_validate,
)

_DEFAULTS = ValidateOptions._field_defaults


def _option(spec: OptionSpec) -> click.Option:
    """The click option for ``spec``: its type says what ``parse_plain`` must agree with."""
    declarations = [*spec.names, spec.dest]
    if spec.kind == "flag":
        return click.Option(declarations, is_flag=True, help=spec.help)
    kind: click.ParamType[Any]
    callback = None
    if spec.kind == "choice":
        kind = click.Choice(spec.choices)
    elif spec.kind == "count":
        kind, callback = click.INT, worker_count  # out of range: one line, exit 2
    else:
        kind = click.Path(exists=True, allow_dash=False)
    return click.Option(
        declarations,
        type=kind,
        callback=callback,
        multiple=spec.multiple,
        default=None if spec.multiple else _DEFAULTS[spec.dest],
        show_default=spec.kind == "choice",
        metavar=spec.metavar,
        help=spec.help,
    )


def _validate(**values: Any) -> None:
    sys.exit(run_validate(ValidateOptions(**values)))


validate_command = click.Command(
    "validate",
    callback=_validate,
    params=[click.Argument(["paths"], nargs=-1, required=True), *map(_option, OPTIONS)],
    help=HELP,
)
