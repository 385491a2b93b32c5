"""``kernelindex``: validate, digest, canonicalize, schema — and adapter commands.

Click parses options into plain objects that the command functions take, so each
command is testable without click (check-jsonschema's pattern); the click group is
:mod:`kernelindex_sdk.cli.app`. ``validate`` with plainly spelled options is parsed
without click (:func:`~kernelindex_sdk.cli.validate_cmd.parse_plain`, from the same
description of its options), so that validating a file does not wait for click to be
imported; everything else, ``--help`` and every usage error included, is click's.
This module imports no click itself.

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
from typing import TYPE_CHECKING, NoReturn

from kernelindex_sdk.base.escaping import one_line
from kernelindex_sdk.base.writes import whole_text_stream
from kernelindex_sdk.errors import SchemaDirectoryError

if TYPE_CHECKING:
    from kernelindex_sdk.cli.validate_cmd import ValidateOptions


def main(argv: list[str] | None = None) -> NoReturn:
    """Run a command and exit with its status, whatever happens: what the ``kernelindex``
    script runs, through ``kernelindex_console`` (which catches a Ctrl-C while this
    module is still being imported).

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
            # Inside the try: parsing imports the command's modules (tens of ms), and a
            # Ctrl-C then is an interruption like any other, never a traceback.
            code = _run(sys.argv[1:] if argv is None else argv)
            sys.stdout.flush()
        except KeyboardInterrupt:
            _quiet_stdout()
            _say("interrupted")
            code = 130
        except SchemaDirectoryError as error:
            # The installed schemas themselves are broken (overwritten by an export,
            # edited): every command needs them, so one line, not a traceback each.
            _say(one_line(f"error: the installed schemas cannot be loaded: {error}"))
            code = 2
        except BrokenPipeError:
            _quiet_stdout()
            code = 141
        except OSError as error:
            _quiet_stdout()
            _say(f"error: cannot write output: {error.strerror or error}")
            code = 2
    sys.exit(code)


def _run(args: list[str]) -> int:
    """Run the command line ``args``: a server URL among a reader's PATHs fetched
    first (:mod:`kernelindex_sdk.cli.remote`; one that fails is one line, exit 2)."""
    if any(arg.startswith(("http://", "https://")) for arg in args):
        from kernelindex_sdk.cli.remote import RemoteError, fetched

        try:
            with fetched(args) as local:
                return _run_local(local)
        except RemoteError as error:
            _say(one_line(str(error)))
            return 2
    return _run_local(args)


def _run_local(args: list[str]) -> int:
    plain = _plain_validate(args)
    if plain is not None:
        return _run_plain(plain)
    from kernelindex_sdk.cli.app import run_click

    return _exit_code(run_click(args))


def _plain_validate(args: list[str]) -> ValidateOptions | None:
    """``validate``'s options when ``parse_plain`` takes ``args``, else None (click's)."""
    if not args or args[0] != "validate":
        return None  # not even the validate module is imported for other commands
    from kernelindex_sdk.cli.validate_cmd import parse_plain

    return parse_plain(args)


def _run_plain(options: ValidateOptions) -> int:
    """Run ``validate`` as click would have, from options parsed without it. An
    interruption ends as under click: a blank line on stderr (closing the terminal's
    ``^C``), then ``interrupted``; ``EOFError`` counts as one, as click counts it."""
    from kernelindex_sdk.cli.validate_cmd import run_validate

    try:
        return run_validate(options)
    except (EOFError, KeyboardInterrupt) as error:
        sys.stderr.write("\n")
        sys.stderr.flush()
        raise KeyboardInterrupt from error


@contextlib.contextmanager
def _whole_stdout() -> Iterator[None]:
    """Standard output, for the command, whose every write is whole or raises.

    The interpreter's own passes a short write off as success (a reader that left
    mid-write, a disk that filled partway: :mod:`kernelindex_sdk.base.writes`), which
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
    whatever the command built: a sizeable share of a short command's time
    (benchmarks/README.md). Frozen objects are still freed
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
