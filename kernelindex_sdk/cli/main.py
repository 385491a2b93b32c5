"""``kernelindex``: validate, digest, canonicalize, schema — and adapter commands.

Click parses options into plain attrs objects that the command functions take, so
each command is testable without click (check-jsonschema's pattern). Commands from
adapters (``kernelindex import ...``) are found through the ``kernelindex.commands``
entry-point group: the SDK never imports an adapter by name.

Exit status everywhere: 0 all good, 1 something invalid, 2 usage error or unreadable
input, 130 interrupted, 141 standard output closed early. No traceback ever reaches
the user for bad input.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import sys
from collections.abc import Iterator
from typing import Any, NoReturn

import click

from kernelindex_sdk.errors import SchemaDirectoryError
from kernelindex_sdk.printable import one_line
from kernelindex_sdk.wholewrite import whole_text_stream

BUILTIN = {
    "validate": "kernelindex_sdk.cli.validate_cmd:validate_command",
    "digest": "kernelindex_sdk.cli.digest_cmd:digest_command",
    "canonicalize": "kernelindex_sdk.cli.digest_cmd:canonicalize_command",
    "schema": "kernelindex_sdk.cli.schema_cmd:schema_group",
    "compare": "kernelindex_sdk.cli.compare_cmd:compare_command",
    "ls": "kernelindex_sdk.cli.ls_cmd:ls_command",
    "store": "kernelindex_sdk.cli.store_cmd:store_group",
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
    that click's own handling (exit 1) does not take it: :func:`main` exits 141."""


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


def main(argv: list[str] | None = None) -> NoReturn:
    """Console entry point: run a command and exit with its status, whatever happens.

    * Usage errors: click's message, exit 2.
    * Ctrl-C (SIGINT): ``kernelindex: interrupted``, exit 130; workers are ended by
      the executor before this returns.
    * Standard output closed early (``| head``): a quiet exit, 141 (128 + SIGPIPE),
      as a process killed by SIGPIPE reports.
    * Standard output that fails (``> /dev/full``): one line on stderr, exit 2.

    Every write to standard output is whole or raises (:func:`_whole_stdout`), so
    neither case can pass as success with the output cut short.

    Output that cannot be encoded (``PYTHONIOENCODING=ascii``) is written with
    backslash escapes instead of failing.
    """
    _freeze_at_exit()
    _tolerant_streams()
    with _whole_stdout():
        try:
            try:
                cli.main(args=argv, prog_name="kernelindex", standalone_mode=False)
                code: int = 0
            except SystemExit as exit_:
                code = _exit_code(exit_.code)
            except click.exceptions.Exit as exit_:
                code = exit_.exit_code
            sys.stdout.flush()
        except (KeyboardInterrupt, click.exceptions.Abort):
            _quiet_stdout()
            _say("interrupted")
            code = 130
        except click.ClickException as error:
            error.show()
            code = error.exit_code
        except SchemaDirectoryError as error:
            # The installed schemas themselves are broken (overwritten by an export,
            # edited): every command needs them, so one line, not a traceback each.
            _say(one_line(f"error: the installed schemas cannot be loaded: {error}"))
            code = 2
        except (BrokenPipeError, OutputClosed):
            _quiet_stdout()
            code = 141
        except OSError as error:
            _quiet_stdout()
            _say(f"error: cannot write output: {error.strerror or error}")
            code = 2
    sys.exit(code)


@contextlib.contextmanager
def _whole_stdout() -> Iterator[None]:
    """Standard output, for the command, whose every write is whole or raises.

    The interpreter's own passes a short write off as success (a reader that left
    mid-write, a disk that filled partway: :mod:`kernelindex_sdk.wholewrite`), which
    let ``canonicalize BIG.json | head -c 100`` exit 0 with the output cut. Through
    this one, every command's output — text, ``sys.stdout.buffer``, click's echo —
    raises instead, and :func:`main` turns that into 141 or one line and exit 2. The
    interpreter's stream is put back afterwards (``main`` may run inside a test).
    """
    original = sys.stdout
    whole = whole_text_stream(original)
    sys.stdout = whole
    try:
        yield
    finally:
        if whole is not original:
            with contextlib.suppress(OSError, ValueError):
                whole.flush()  # nothing left, or /dev/null after _quiet_stdout
            sys.stdout = original


def _freeze_at_exit() -> None:
    """Have the interpreter's exit skip its garbage collections over what lived to the
    end (``gc.freeze`` as an exit handler, once per process).

    After the exit handlers, finalization collects garbage more than once, and each
    collection traverses every object still alive: the modules, the compiled schemas,
    whatever the command built. That was 30–40 ms of a ~200 ms ``validate one.json``
    on the development machine (benchmarks/README.md). Frozen objects are still freed
    and flushed as finalization tears the modules down; only reference cycles among
    them are left to the process's end, as they would be for any object that
    outlives finalization. Registered here, in the console entry point, rather than
    at import, so a library user's process is not touched.
    """
    if not _FREEZE_REGISTERED:
        _FREEZE_REGISTERED.append(True)
        atexit.register(gc.freeze)


#: Whether :func:`_freeze_at_exit` has registered its handler in this process.
_FREEZE_REGISTERED: list[bool] = []


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    _say(str(code))
    return 1


def _say(message: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"kernelindex: {message}\n")
        sys.stderr.flush()


def _tolerant_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")


def _quiet_stdout() -> None:
    """Point standard output at /dev/null, so that the interpreter's final flush of
    what is still buffered cannot fail again (and print a traceback) at exit."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


if __name__ == "__main__":
    main()
