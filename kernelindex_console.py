"""The ``kernelindex`` command's entry point: a module outside the package, on purpose.

Importing :mod:`kernelindex_sdk.cli.main` takes 30–40 ms of every start (the package,
``typing``, the error types). A Ctrl-C in those milliseconds raised ``KeyboardInterrupt``
before any code of the package could catch it, so the user saw a traceback; a
``timeout -s INT`` or a cancelled CI job sends one at any moment. Imported from here,
where nothing of the package has run yet, it ends as every other interruption does
(:func:`kernelindex_sdk.cli.main.main`): one line, exit 130. What remains is the
interpreter's own start, before this module runs.

This module imports nothing but :mod:`sys` (already loaded by the interpreter), so it
adds nothing to the start-up it guards.
"""

import sys


def main() -> None:
    """Import the command line and run it; an interruption during the import is one line."""
    try:
        from kernelindex_sdk.cli.main import main as run
    except KeyboardInterrupt:
        # The line and status kernelindex_sdk.cli.main.main writes for an interruption
        # (tests/test_validate_plain.py holds the two alike).
        try:
            sys.stderr.write("kernelindex: interrupted\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        sys.exit(130)
    run()
