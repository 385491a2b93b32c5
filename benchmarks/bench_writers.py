"""``kernelindex validate`` of JSON Lines from every common writer, against the bare loop.

    python benchmarks/bench_writers.py --rev 001eb8b --rev HEAD [--tree now=.] \\
        [--lines FILE] [--count 300000] [--repeats 5] [--writers orjson,json.dumps(d)]

The writers table of ``benchmarks/README.md``'s JSON Lines target. The same records
(the first ``--count`` lines of ``--lines``, by default the JSON Lines file
``make_corpus.py`` writes, repeated as often as needed) are written once by each writer:

- ``orjson.dumps``;
- ``json.dumps(separators=(",", ":"), ensure_ascii=False)``;
- ``json.dumps(d)``, Python's default (``", "`` and ``": "``, ``\\u00b7`` escapes);
- ``json.dumps(separators=(",", ":"))``, compact and ASCII-escaped;
- ``json.dumps(d, ensure_ascii=False)``: a space after every ``:`` and ``,``;
- pandas ``DataFrame(records).to_json(orient="records", lines=True)`` (ujson: compact,
  ASCII-escaped, ``\\/``), when pandas is installed (``pip install pandas``: it is no
  dependency of kernelindex).

For each writer, every repeat runs, each as its own process and in turn,
``python -P -m kernelindex_sdk.cli.main validate --jobs 1 LINES`` of each checkout (as
``bench_ab.py`` does: a git worktree per ``--rev``, or ``--tree LABEL=PATH``) and
``bare_loop.py`` (``orjson.loads`` + jsonschema-rs on the bundled Bundle schema). The
ratio of a checkout is the median over repeats of its time ÷ the bare loop's in the same
repeat, so a change in the machine's speed between repeats falls on both. Nothing is
timed unless every command accepts every line of every writer.

The table is printed as Markdown, headed by the command line that made it (the
revisions as given and the commits they resolved to), so it can be pasted into
``benchmarks/README.md`` as it is.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
from bench_ab import HERE, _all_accept, _validate, ab_arguments, ab_checkouts, ab_parser


def _orjson(records: list[Any]) -> Iterator[bytes]:
    for record in records:
        yield orjson.dumps(record) + b"\n"


def _json(**options: Any) -> Callable[[list[Any]], Iterator[bytes]]:
    def write(records: list[Any]) -> Iterator[bytes]:
        for record in records:
            yield (json.dumps(record, **options) + "\n").encode()

    return write


def _pandas(records: list[Any]) -> Iterator[bytes]:
    import pandas  # type: ignore[import-untyped]  # optional: only for this row

    for start in range(0, len(records), 2000):
        frame = pandas.DataFrame(records[start : start + 2000])
        yield frame.to_json(orient="records", lines=True).rstrip("\n").encode() + b"\n"


WRITERS: dict[str, Callable[[list[Any]], Iterator[bytes]]] = {
    "orjson.dumps": _orjson,
    'json.dumps(separators=(",", ":"), ensure_ascii=False)': _json(
        separators=(",", ":"), ensure_ascii=False
    ),
    "json.dumps(d)": _json(),
    'json.dumps(separators=(",", ":"))': _json(separators=(",", ":")),
    "json.dumps(d, ensure_ascii=False) (spaces after : and ,)": _json(ensure_ascii=False),
    'pandas to_json(orient="records", lines=True)': _pandas,
}


def _have_pandas() -> bool:
    try:
        import pandas  # noqa: F401  # type: ignore[import-untyped]
    except ImportError:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = ab_parser(__doc__.split("\n\n")[0], count=300_000, repeats=5)
    parser.add_argument("--writers", help="names separated by ; (default: all)")
    args = ab_arguments(parser, argv)
    args.command_line = shlex.join(
        ["python", "benchmarks/bench_writers.py", *(sys.argv[1:] if argv is None else argv)]
    )
    names = list(WRITERS) if args.writers is None else args.writers.split(";")
    if args.writers is None and not _have_pandas():
        print("pandas is not installed: its row is left out (pip install pandas)\n")
        names = [n for n in names if not n.startswith("pandas")]
    unknown = [n for n in names if n not in WRITERS]
    if unknown:
        parser.error(f"unknown writers {unknown}; known: {list(WRITERS)}")
    with ab_checkouts(args, "bench-writers-") as (checkouts, scratch):
        return _measure(checkouts, names, args, scratch)


def _commit(checkout: Path) -> str:
    """The short hash of the commit checked out at ``checkout``."""
    done = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() or "?"


def _records(path: Path, count: int) -> list[Any]:
    """The first ``count`` records of ``path``, its lines repeated when it has fewer."""
    with open(path, "rb") as source:
        lines = [line for line in source if line.strip()][:count]
    return [orjson.loads(lines[i % len(lines)]) for i in range(count)]


def _measure(
    checkouts: dict[str, Path], names: list[str], args: argparse.Namespace, scratch: Path
) -> int:
    records = _records(args.lines, args.count)
    files: dict[str, Path] = {}
    for index, name in enumerate(names):
        files[name] = scratch / f"writer-{index}.jsonl"
        with open(files[name], "wb") as out:
            out.writelines(WRITERS[name](records))
    del records
    first = next(iter(checkouts.values()))
    command, env = _validate(first, "schema", "export", "--bundled", str(scratch / "schemas"))
    subprocess.run(command, env=env, check=True, capture_output=True)
    (bundle_schema,) = (scratch / "schemas").rglob("bundle.schema.json")
    for checkout in checkouts.values():
        compileall.compile_dir(str(checkout / "kernelindex_sdk"), quiet=1)
    commands: dict[str, dict[str, tuple[list[str], dict[str, str]]]] = {}
    for name, path in files.items():
        commands[name] = {
            label: _validate(checkout, "validate", "--jobs", "1", str(path))
            for label, checkout in checkouts.items()
        }
        commands[name]["bare loop"] = (
            [sys.executable, str(HERE / "bare_loop.py"), str(bundle_schema), str(path)],
            dict(os.environ),
        )
        if not _all_accept(commands[name], f"all {args.count} lines of {name}"):
            return 1
    times = {name: {label: [] for label in runs} for name, runs in commands.items()}
    for _ in range(args.repeats):
        for name, runs in commands.items():
            for label, (command, env) in runs.items():
                start = time.perf_counter()
                subprocess.run(command, env=env, stdout=subprocess.DEVNULL, check=True)
                times[name][label].append(time.perf_counter() - start)
    labels = list(checkouts)
    resolved = ", ".join(f"`{rev}` = {_commit(checkouts[rev])}" for rev in args.rev)
    print(f"`{args.command_line}`" + (f" ({resolved})" if resolved else "") + ":\n")
    print(
        f"{args.count:,} JSON Lines bundles per writer, {args.repeats} interleaved repeats; "
        "each checkout's time ÷ the bare loop's in the same repeat (median), and the bare "
        "loop's median wall time\n"
    )
    print("| writer of the JSON Lines | " + " | ".join(labels) + " | bare loop |")
    print("|---|" + "---:|" * (len(labels) + 1))
    for name, taken in times.items():
        bare = taken["bare loop"]
        ratios = [
            statistics.median(t / b for t, b in zip(taken[label], bare, strict=True))
            for label in labels
        ]
        cells = " | ".join(f"{ratio:.2f}×" for ratio in ratios)
        print(f"| `{name}` | {cells} | {statistics.median(bare):.3f} s |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
