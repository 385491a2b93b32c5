"""``kernelindex``: validate, digest, canonicalize, schema — and adapter commands.

Click parses options into plain attrs objects that the command functions take, so
each command is testable without click (check-jsonschema's pattern). Commands from
adapters (``kernelindex import ...``) are found through the ``kernelindex.commands``
entry-point group: the SDK never imports an adapter by name.

Exit status everywhere: 0 all good, 1 something invalid, 2 usage error or unreadable
input. No traceback ever reaches the user for bad input.
"""

from __future__ import annotations

import sys
from typing import Any

import click

BUILTIN = {
    "validate": "kernelindex_sdk.cli.validate_cmd:validate_command",
    "digest": "kernelindex_sdk.cli.digest_cmd:digest_command",
    "canonicalize": "kernelindex_sdk.cli.digest_cmd:canonicalize_command",
    "schema": "kernelindex_sdk.cli.schema_cmd:schema_group",
    "compare": "kernelindex_sdk.cli.compare_cmd:compare_command",
}
ENTRY_POINT_GROUP = "kernelindex.commands"


def _load(target: str) -> click.Command:
    import importlib

    module, _, attr = target.partition(":")
    command = getattr(importlib.import_module(module), attr)
    if not isinstance(command, click.Command):
        raise TypeError(f"{target} is not a click command")
    return command


def _plugins() -> dict[str, Any]:
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


class LazyGroup(click.Group):
    """Imports a command only when it runs, so start-up stays fast."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(BUILTIN) | set(_plugins()))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in BUILTIN:
            return _load(BUILTIN[cmd_name])
        plugin = _plugins().get(cmd_name)
        if plugin is None:
            return None
        try:
            command = plugin.load()
        except ImportError as error:
            return _unavailable(cmd_name, f"{error}; is its extra installed?")
        if not isinstance(command, click.Command):
            return _unavailable(cmd_name, f"{plugin.value} is not a click command")
        return command


def _unavailable(name: str, why: str) -> click.Command:
    """A stand-in for a plugin that cannot load: listed in --help, fails cleanly if run."""

    def fail() -> None:
        click.echo(f"kernelindex {name}: cannot load this command: {why}", err=True)
        sys.exit(2)

    return click.Command(name, callback=fail, help=f"(unavailable: {why})")


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kernelindex-sdk", prog_name="kernelindex")
def cli() -> None:
    """Record, check and compare GPU-kernel benchmark results (kernelindex.dev)."""


def main(argv: list[str] | None = None) -> None:
    """Console entry point: click, with exit status 2 for usage errors (click's default)."""
    try:
        cli.main(args=argv, prog_name="kernelindex")
    except KeyboardInterrupt:
        sys.stderr.write("kernelindex: interrupted\n")
        sys.exit(130)


if __name__ == "__main__":
    main()
