"""The ``kernelindex`` click group: every command, and the adapters' commands found
through the ``kernelindex.commands`` entry-point group (the SDK never imports an adapter
by name). :func:`kernelindex_sdk.cli.main.main` runs it for every command line that
``validate``'s plain parser does not take.
"""

from __future__ import annotations

import sys
from typing import Any

import click

BUILTIN = {
    "validate": "kernelindex_sdk.cli.validate_click:validate_command",
    "digest": "kernelindex_sdk.cli.digest_cmd:digest_command",
    "canonicalize": "kernelindex_sdk.cli.digest_cmd:canonicalize_command",
    "schema": "kernelindex_sdk.cli.schema_cmd:schema_group",
    "compare": "kernelindex_sdk.cli.compare_cmd:compare_command",
    "history": "kernelindex_sdk.cli.history_cmd:history_command",
    "ls": "kernelindex_sdk.cli.ls_cmd:ls_command",
    "store": "kernelindex_sdk.cli.store_cmd:store_group",
    "serve": "kernelindex_sdk.cli.serve_cmd:serve_command",
    "report": "kernelindex_sdk.cli.report_cmd:report_command",
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


class OutputClosed(Exception):
    """Standard output was closed by its reader (``EPIPE``). Not an ``OSError``, so
    that click's own handling (exit 1) does not take it: :func:`run_click` raises the
    ``BrokenPipeError`` instead, and :func:`~kernelindex_sdk.cli.main.main` exits 141."""


class LazyGroup(click.Group):
    """Imports a command only when it runs, so start-up stays fast."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise OutputClosed() from None

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """As click's, but a mistyped command gets a suggestion, as options do."""
        name = click.utils.make_str(args[0]) if args else ""
        if args and not name.startswith("-") and self.get_command(ctx, name) is None:
            import difflib

            close = difflib.get_close_matches(name, self.list_commands(ctx), n=3, cutoff=0.6)
            hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            ctx.fail(f"No such command {name!r}.{hint}")
        return super().resolve_command(ctx, args)

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
        except Exception as error:  # a broken plugin must not break --help or the rest
            return _unavailable(cmd_name, f"{plugin.value} cannot be loaded: {error}")
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


def run_click(argv: list[str] | None) -> object:
    """Run the group on ``argv`` (None: ``sys.argv[1:]``) and return its exit status as
    ``SystemExit.code`` has it (None or 0 for success, an int, or a message).

    A click usage error is shown here (one line, exit 2); click's abort (Ctrl-C) becomes
    the ``KeyboardInterrupt`` and :class:`OutputClosed` the ``BrokenPipeError`` that
    :func:`~kernelindex_sdk.cli.main.main` answers for every command alike.
    """
    try:
        try:
            cli.main(args=argv, prog_name="kernelindex", standalone_mode=False)
        except SystemExit as exit_:
            return exit_.code
        except click.exceptions.Exit as exit_:
            return exit_.exit_code
        return 0
    except click.exceptions.Abort:
        raise KeyboardInterrupt from None
    except click.ClickException as error:
        error.show()
        return error.exit_code
    except OutputClosed:
        raise BrokenPipeError from None
