"""The same-machine cross-check: Liger's own scripts and ``bench liger``, side by side.

``scripts/device-fidelity`` runs, for each seed kernel at its seed's shape and pass,
Liger-Kernel's own benchmark script (the commit that produced the seed, from
``../shared/liger-upstream``) and ``bench liger`` (the ``upstream`` call style),
interleaved round by round in **one process per kernel** (who goes first alternates),
and writes as it goes:

* ``OUT/kernelindex/``: ``bench liger``'s bundle of every round;
* ``OUT/upstream.csv``: Liger's own figures, one row per round, in its CSV format,
  then imported with ``kernelindex import liger`` into ``OUT/upstream/``;
* ``OUT/rounds.jsonl``: every round of both sides (median, p20, p80, GPU-only time);
* ``OUT/agreement.md`` and ``agreement.json``: the two medians per kernel and whether
  they agree (:func:`agreement`), and the log;

and packs everything into one archive whatever happens (:func:`pack`).

**The acceptance rule.** A GPU-bound kernel agrees when the two medians (each side's
median of its round medians) differ by at most max(3 %, half the range of the
noisier side's round medians); a host-bound one (either side's median over twice its
GPU-only time) is judged by the GPU-only figures instead, within max(10 %, 1 µs).
The upstream script's own GPU-only figure is taken from the very callable it hands
``triton.testing.do_bench`` (caught on its way there), replayed as a CUDA graph.

``--dry-run`` lists what would run and runs nothing; ``--fake`` runs the whole loop —
processes, files, import, table, archive — with stand-ins for both harnesses, so all
of it but the GPU is tested on a CPU.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import importlib
import json
import os
import statistics
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TextIO

import attrs

from bench_adapters.liger.source import LIGER_HEADER
from bench_adapters.liger_bench.bench import UsageParser
from bench_adapters.liger_bench.plan import PlannedItem, seed_request
from kernelindex_sdk.base.escaping import markdown_cell, one_line

#: Kernel -> (folder under the upstream directory, module, speed function). RoPE runs
#: the seed's timing code without the two config arguments transformers 5 refuses.
SCRIPTS: Mapping[str, tuple[str, str, str]] = {
    "geglu": ("geglu", "benchmark_geglu", "bench_speed_geglu"),
    "llama4_rope": ("llama4_rope", "benchmark_llama4_rope", "bench_speed_llama4_rope"),
    "distill_cosine_loss": (
        "distill_cosine_loss",
        "benchmark_distill_cosine_loss",
        "bench_speed_cosine_similarity_loss",
    ),
    "relu_squared": ("relu_squared", "benchmark_relu_squared", "bench_speed_relu_squared"),
}
#: The rule's bounds: relative and absolute (ms) for each basis.
MEDIAN_TOLERANCE = 0.03
GPU_ONLY_TOLERANCE = 0.10
GPU_ONLY_FLOOR_MS = 0.001
UPSTREAM, OURS = "upstream", "kernelindex"
ROUNDS_FILE, CSV_FILE, TABLE_FILE, JSON_FILE = (
    "rounds.jsonl",
    "upstream.csv",
    "agreement.md",
    "agreement.json",
)


@attrs.frozen
class Figure:
    """One round of one side, in ms: the quantiles and the GPU's own time (if taken)."""

    median: float
    p20: float
    p80: float
    gpu_only: float | None = None

    @property
    def host_bound(self) -> bool:
        return self.gpu_only is not None and self.median > 2 * self.gpu_only


@attrs.frozen
class Agreement:
    """The two sides of one kernel and pass, and the rule's verdict."""

    kernel: str
    pass_: str
    #: ``median`` (GPU-bound) or ``gpu-only`` (host-bound): what is compared.
    basis: str
    ours: float | None
    theirs: float | None
    rounds: tuple[int, int]
    #: |ours − theirs| and what the rule allows, in ms (None: a figure is missing).
    difference: float | None
    allowed: float | None
    #: True agree, False disagree, None undecided (a side has no figure to compare).
    agree: bool | None


def half_range(values: Sequence[float]) -> float:
    """Half the range of ``values`` (0 for fewer than two)."""
    return (max(values) - min(values)) / 2 if len(values) > 1 else 0.0


def agreement(
    kernel: str,
    pass_: str,
    ours: Sequence[Figure],
    theirs: Sequence[Figure],
    wanted: int | None = None,
) -> Agreement:
    """The acceptance rule (the module doc) over each side's rounds; with fewer than
    ``wanted`` rounds on a side (a stopped process) the medians are shown, the verdict
    is left undecided."""
    found = _agreement(kernel, pass_, ours, theirs)
    if wanted is not None and min(found.rounds) < wanted:
        return attrs.evolve(found, agree=None)
    return found


def _agreement(
    kernel: str, pass_: str, ours: Sequence[Figure], theirs: Sequence[Figure]
) -> Agreement:
    rounds = (len(ours), len(theirs))
    if not ours or not theirs:
        return Agreement(kernel, pass_, "median", None, None, rounds, None, None, None)
    host_bound = any(f.host_bound for f in (*ours, *theirs))
    if not host_bound:
        mine = statistics.median(f.median for f in ours)
        other = statistics.median(f.median for f in theirs)
        noise = max(half_range([f.median for f in ours]), half_range([f.median for f in theirs]))
        allowed = max(MEDIAN_TOLERANCE * other, noise)
        return _verdict(kernel, pass_, "median", mine, other, rounds, allowed)
    gpu_ours = [f.gpu_only for f in ours if f.gpu_only is not None]
    gpu_theirs = [f.gpu_only for f in theirs if f.gpu_only is not None]
    if not gpu_ours or not gpu_theirs:
        return Agreement(kernel, pass_, "gpu-only", None, None, rounds, None, None, None)
    mine, other = statistics.median(gpu_ours), statistics.median(gpu_theirs)
    allowed = max(GPU_ONLY_TOLERANCE * other, GPU_ONLY_FLOOR_MS)
    return _verdict(kernel, pass_, "gpu-only", mine, other, rounds, allowed)


def _verdict(
    kernel: str,
    pass_: str,
    basis: str,
    mine: float,
    other: float,
    rounds: tuple[int, int],
    allowed: float,
) -> Agreement:
    difference = abs(mine - other)
    return Agreement(
        kernel, pass_, basis, mine, other, rounds, difference, allowed, difference <= allowed
    )


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.5g} ms"


def agreement_table(rows: Sequence[Agreement]) -> str:
    """Markdown: per kernel and pass, the two medians, what is compared, the verdict."""
    lines = [
        "| kernel | pass | compared | Liger's script | bench liger | difference | allowed "
        "| rounds (script/ours) | verdict |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        verdict = {True: "agree", False: "DISAGREE", None: "undecided"}[row.agree]
        cells = [
            row.kernel,
            row.pass_,
            row.basis,
            _ms(row.theirs),
            _ms(row.ours),
            _ms(row.difference),
            _ms(row.allowed),
            f"{row.rounds[1]}/{row.rounds[0]}",
            verdict,
        ]
        lines.append("| " + " | ".join(markdown_cell(cell) for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def pack(folder: Path, archive: Path) -> Path:
    """``folder`` as a gzipped tar at ``archive`` (written beside, then renamed: a
    half-written archive never takes its name). Files that vanish are skipped."""
    part = archive.with_name(archive.name + ".part")
    with tarfile.open(part, "w:gz") as tar:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path != part and path != archive:
                with contextlib.suppress(FileNotFoundError):
                    tar.add(path, arcname=str(Path(folder.name) / path.relative_to(folder)))
    os.replace(part, archive)
    return archive


def csv_row(item: PlannedItem, figure: Figure, gpu_name: str, liger_version: str) -> list[str]:
    """One row of Liger's CSV for an upstream round of ``item`` (speed, ms, provider liger)."""
    workload = item.workload
    kernel = workload.kernel
    config = json.dumps(dict(workload.config))
    return [
        kernel.name,
        "liger",
        workload.pass_,
        "speed",
        "ms",
        kernel.sweep.x_name,
        _X_LABELS.get(kernel.sweep.x_name, kernel.sweep.x_name),
        str(workload.x_value),
        repr(figure.median),
        repr(figure.p20),
        repr(figure.p80),
        config,
        gpu_name,
        time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
        liger_version,
    ]


_X_LABELS = {"T": "sequence length", "BT": "B x T", "N": "hidden size"}


def seed_items(kernels: Sequence[str] = ()) -> list[PlannedItem]:
    """The seeds' workloads (speed, Liger only), in the gpu-check order; ``kernels``
    narrows them."""
    from bench_adapters.liger_bench.catalog import load_bench_catalog

    items = [
        attrs.evolve(item, providers=("liger",)) for item in seed_request(load_bench_catalog())
    ]
    return [i for i in items if not kernels or i.workload.kernel.name in kernels]


# --------------------------------------------------------------------------- the two sides


class Side(Protocol):
    """One harness at one workload: each call is one round."""

    def round(self) -> Figure:
        """Measure once more; raises when the harness fails."""


def interleave(
    ours: Side, theirs: Side, rounds: int, on_round: Callable[[int, str, Figure], None]
) -> None:
    """``rounds`` rounds of both sides, who goes first alternating, each reported as it ends."""
    for number in range(rounds):
        order = [(UPSTREAM, theirs), (OURS, ours)]
        for side, harness in order if number % 2 == 0 else reversed(order):
            on_round(number, side, harness.round())


@attrs.define
class FakeSide:
    """A stand-in harness: ``median`` ms, jittered by round, and a GPU-only time."""

    median: float
    gpu_only: float | None
    jitter: float = 0.01
    count: int = 0

    def round(self) -> Figure:
        self.count += 1
        m = self.median * (1 + self.jitter * ((self.count % 3) - 1))
        return Figure(m, m * 0.98, m * 1.02, self.gpu_only)


class OurSide:
    """``bench liger`` (its runner and records) at one item: a bundle per round."""

    def __init__(self, item: PlannedItem, tools: Any, out: Path) -> None:
        from bench_adapters.liger.catalog import load_catalog
        from bench_adapters.liger_bench.assemble import Assembler
        from bench_adapters.liger_bench.runner import Runner
        from bench_adapters.recording.recorder import harness_version

        self.item, self.out = item, out
        self.runner = Runner(tools)
        info = tools.device.describe()
        self.assembler = Assembler(
            load_catalog(), info, tools.timer.settings, tools.memory.repetitions, harness_version()
        )

    def round(self) -> Figure:
        from bench_adapters.recording.bundles import write_bundle

        outcome = self.runner.run_one(self.item, "liger")
        write_bundle(self.out, self.assembler.bundle(outcome))
        if outcome.status != "passed":
            raise RuntimeError(f"bench liger: {outcome.status}: {outcome.reason}")
        native = outcome.native
        return Figure(
            native["ms_50"], native["ms_20"], native["ms_80"], native.get("gpu_only_ms_50")
        )


class UpstreamSide:
    """Liger's own script for one kernel, imported from ``directory`` and called as its
    ``run_benchmarks`` calls it, at one x and mode; the callable it hands do_bench is
    caught on its way there and replayed as a CUDA graph for the GPU-only figure."""

    def __init__(self, item: PlannedItem, directory: Path) -> None:
        folder, module_name, function = SCRIPTS[item.workload.kernel.name]
        self.module = _import_script(directory / folder, module_name)
        self.function = getattr(self.module, function)
        utils = sys.modules["utils"]
        torch = importlib.import_module("torch")
        config = {
            key: getattr(torch, value[len("torch.") :]) if key == "dtype" else value
            for key, value in item.workload.config.items()
        }
        self.input = utils.SingleBenchmarkRunInput(
            x=item.workload.x_value,
            kernel_provider="liger",
            kernel_operation_mode=item.workload.pass_,
            extra_benchmark_config=config,
        )

    def round(self) -> Figure:
        from bench_adapters.recording.hostbound import graph_settings
        from bench_adapters.recording.timing import DoBenchTimer

        testing = importlib.import_module("triton.testing")
        real, caught = getattr(testing, "do_bench"), []  # noqa: B009

        def spy(fn: Callable[[], object], *args: Any, **options: Any) -> Any:
            caught.append((fn, options.get("grad_to_none")))
            return real(fn, *args, **options)

        setattr(testing, "do_bench", spy)  # noqa: B010 (a module triton types)
        try:
            result = self.function(self.input)
        finally:
            setattr(testing, "do_bench", real)  # noqa: B010
        gpu: float | None = None
        if caught:
            fn, grads = caught[-1]
            with contextlib.suppress(Exception):  # a graph that cannot be captured
                gpu = DoBenchTimer(graph_settings()).time(fn, list(grads or []))[0]
        return Figure(float(result.y_50), float(result.y_20), float(result.y_80), gpu)


def _import_script(folder: Path, name: str) -> Any:
    """The script ``name`` of ``folder``, with that folder's own ``utils`` (each commit's
    differs). The distillation script builds its torch reference from Liger's test
    suite, which the wheel lacks: a stand-in module lets it load (only the liger
    provider is run)."""
    for stale in ("utils", name):
        sys.modules.pop(stale, None)
    sys.path.insert(0, str(folder))
    if "test.chunked_loss.test_cosine_loss" not in sys.modules:
        stub = type(sys)("test.chunked_loss.test_cosine_loss")

        class HFCosineLoss:  # the torch provider's loss: never called here
            def __init__(self, **options: Any) -> None:
                pass

            def get_batch_loss_metrics(self, *args: Any) -> Any:
                raise NotImplementedError("Liger's test suite is not installed")

        stub.HFCosineLoss = HFCosineLoss  # type: ignore[attr-defined]
        for package in ("test", "test.chunked_loss"):
            sys.modules.setdefault(package, type(sys)(package))
        sys.modules[stub.__name__] = stub
    return importlib.import_module(name)


# --------------------------------------------------------------------------- stand-ins (--fake)


class _FakeDevice:
    """A device that is always there, describes itself as an H200, never runs out."""

    def require(self) -> None:
        pass

    def describe(self) -> Any:
        from bench_adapters.liger_bench.probes import DeviceInfo

        software = {"liger-kernel": "0.8.5", "torch": "2.11.0", "triton": "3.6.0"}
        return DeviceInfo("NVIDIA H200", (9, 0), 150754820096, software)

    def is_out_of_memory(self, error: BaseException) -> bool:
        return False

    def release(self) -> None:
        pass


class _FakePrepared:
    def results(self) -> list[tuple[str, Any]]:
        return [("output", 1.0)]

    def timed(self, call: Any = None) -> tuple[Callable[[], object], list[Any]]:
        return (lambda: None), []


class _FakeBackend:
    def missing(self, kernel: Any, provider: str) -> None:
        return None

    def prepare(self, workload: Any, provider: str, seed: int) -> _FakePrepared:
        return _FakePrepared()

    def compare(self, actual: Any, expected: Any, tolerance: Any) -> None:
        return None

    def worst(self, actual: Any, expected: Any, tolerance: Any) -> tuple[float, float]:
        return 0.0, 0.0


def fake_tools(median_ms: float, gpu_ms: float) -> Any:
    """``bench liger``'s tools with every machine-facing part stood in for."""
    from bench_adapters.liger_bench.runner import Tools
    from bench_adapters.recording.hostbound import graph_settings
    from bench_adapters.recording.timing import FakeTimer

    spread = [median_ms, median_ms * 0.98, median_ms * 1.02]
    return Tools(
        device=_FakeDevice(),
        backend=_FakeBackend(),
        timer=FakeTimer(spread, calls=1),
        memory=_memory_stand_in(),
        gpu_timer=FakeTimer([gpu_ms, gpu_ms, gpu_ms], graph_settings(), calls=1),
    )


def _memory_stand_in() -> Any:
    """A memory probe stand-in (never used for speed)."""

    class _Memory:
        repetitions = 1

        def peaks(self, fn: Callable[[], object]) -> list[int]:
            return [0]

    return _Memory()


#: --fake's figures per kernel: (script's median, ours, GPU-only), in ms. ReLU² is
#: host-bound as on the H200 (0.117 ms, 0.0085 ms as a graph replay).
FAKE_FIGURES: Mapping[str, tuple[float, float, float]] = {
    "geglu": (27.2, 27.4, 27.0),
    "llama4_rope": (0.35, 0.36, 0.33),
    "distill_cosine_loss": (9.4, 9.5, 9.2),
    "relu_squared": (0.09, 0.117, 0.0085),
}


# --------------------------------------------------------------------------- the processes


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = UsageParser(
        prog="device-fidelity",
        description="Run Liger's own benchmark scripts and bench liger on the seed kernels, "
        "interleaved round by round, one process per kernel; write both record sets and "
        "the two medians per kernel, and pack them into one archive.",
    )
    parser.add_argument("--out", required=True, help="directory to write into")
    parser.add_argument("--kernel", action="append", default=[], help="only these kernels")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per kernel (default 5)")
    parser.add_argument(
        "--upstream",
        default="../shared/liger-upstream",
        help="Liger's scripts (default %(default)s)",
    )
    parser.add_argument(
        "--kernel-timeout", type=float, default=120.0, help="seconds per kernel's process"
    )
    parser.add_argument("--archive", help="the archive to pack (default OUT.tgz)")
    parser.add_argument("--dry-run", action="store_true", help="list what would run; run nothing")
    parser.add_argument("--fake", action="store_true", help="stand-ins for both harnesses")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a kernel's process
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    known = set(SCRIPTS)
    for kernel in args.kernel:
        if kernel not in known:
            parser.error(f"--kernel {kernel!r}: known kernels are {', '.join(sorted(known))}")
    return args


def run_kernel(args: argparse.Namespace, item: PlannedItem, stdout: TextIO) -> int:
    """One kernel's process: both harnesses, interleaved, every round written as it ends."""
    out = Path(args.out)
    kernel = item.workload.kernel.name
    if args.fake:
        theirs_ms, ours_ms, gpu_ms = FAKE_FIGURES[kernel]
        theirs: Side = FakeSide(theirs_ms, gpu_ms)
        tools = fake_tools(ours_ms, gpu_ms)
    else:
        from bench_adapters.liger_bench.bench import BenchSettings, cuda_tools

        theirs = UpstreamSide(item, Path(args.upstream))
        tools = cuda_tools(BenchSettings())
    ours = OurSide(item, tools, out / "kernelindex")
    gpu_name = tools.device.describe().name
    version = tools.device.describe().software.get("liger-kernel", "unknown")

    def on_round(number: int, side: str, figure: Figure) -> None:
        line = {"kernel": kernel, "pass": item.workload.pass_, "side": side, "round": number}
        with (out / ROUNDS_FILE).open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({**line, **attrs.asdict(figure)}) + "\n")
        if side == UPSTREAM:
            with (out / CSV_FILE).open("a", encoding="utf-8", newline="") as handle:
                csv.writer(handle).writerow(csv_row(item, figure, gpu_name, version))
        gpu = "" if figure.gpu_only is None else f", GPU-only {figure.gpu_only:.5g} ms"
        stdout.write(
            one_line(f"{kernel} round {number + 1} {side}: median {figure.median:.5g} ms{gpu}")
            + "\n"
        )
        stdout.flush()

    interleave(ours, theirs, args.rounds, on_round)
    return 0


def _kernel_process(args: argparse.Namespace, item: PlannedItem, stdout: TextIO) -> int:
    """Run one kernel in its own process, its lines passed on as they come; its exit
    status (124 when it ran past ``--kernel-timeout`` and was stopped)."""
    kernel = item.workload.kernel.name
    argv = [sys.executable, "-m", "bench_adapters.liger_bench.fidelity", "--one"]
    argv += ["--out", args.out, "--kernel", kernel, "--rounds", str(args.rounds)]
    argv += ["--upstream", args.upstream] + (["--fake"] if args.fake else [])
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    child = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    deadline = time.monotonic() + args.kernel_timeout
    assert child.stdout is not None
    for line in _lines_until(child, deadline):
        stdout.write(line)
        stdout.flush()
    if child.poll() is None:
        # Killed before its pipe is closed: closing waits for a read in progress.
        child.kill()
        child.wait()
        child.stdout.close()
        stdout.write(f"device-fidelity: {kernel} ran past {args.kernel_timeout:g} s; stopped\n")
        return 124
    child.stdout.close()
    if child.returncode:
        stdout.write(f"device-fidelity: {kernel}'s process exited {child.returncode}\n")
    return child.returncode


def _lines_until(child: subprocess.Popen[str], deadline: float) -> Iterator[str]:
    """The child's output lines until it ends or ``deadline`` passes (then it is killed
    by the caller): a reader thread, so a silent child cannot outlive its deadline."""
    import queue
    import threading

    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            return
        if line is None:
            child.wait()
            return
        yield line


def _import_upstream(out: Path, stdout: TextIO) -> int:
    """``kernelindex import liger`` of the script's rows into ``OUT/upstream``."""
    argv = [sys.executable, "-m", "kernelindex_sdk.cli.main", "import", "liger"]
    argv += [str(out / CSV_FILE), "--out", str(out / "upstream"), "--quality-flags"]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    stdout.write(done.stdout + done.stderr)
    stdout.write(f"device-fidelity: import liger exit {done.returncode}\n")
    return done.returncode


def read_rounds(path: Path) -> dict[tuple[str, str], dict[str, list[Figure]]]:
    """``rounds.jsonl`` by (kernel, pass) and side; a torn last line (a stop) is left out."""
    found: dict[tuple[str, str], dict[str, list[Figure]]] = {}
    if not path.is_file():
        return found
    for text in path.read_text(encoding="utf-8").splitlines():
        try:
            line = json.loads(text)
            figure = Figure(line["median"], line["p20"], line["p80"], line.get("gpu_only"))
        except (ValueError, KeyError, TypeError):
            continue
        sides = found.setdefault((line["kernel"], line["pass"]), {UPSTREAM: [], OURS: []})
        sides.setdefault(line["side"], []).append(figure)
    return found


def write_agreement(
    out: Path, items: Sequence[PlannedItem], stdout: TextIO, wanted: int | None = None
) -> list[Agreement]:
    """The table and its JSON, from every round written so far (``wanted`` rounds a side)."""
    rounds = read_rounds(out / ROUNDS_FILE)
    rows = []
    for item in items:
        key = (item.workload.kernel.name, item.workload.pass_)
        sides = rounds.get(key, {})
        rows.append(agreement(*key, sides.get(OURS, []), sides.get(UPSTREAM, []), wanted))
    table = agreement_table(rows)
    (out / TABLE_FILE).write_text(table, encoding="utf-8")
    data = [attrs.asdict(row) for row in rows]
    (out / JSON_FILE).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    stdout.write("\n" + table)
    return rows


def _plan(args: argparse.Namespace, items: Sequence[PlannedItem], stdout: TextIO) -> int:
    upstream = Path(args.upstream)
    for item in items:
        folder, module, function = SCRIPTS[item.workload.kernel.name]
        script = upstream / folder / f"{module}.py"
        where = "found" if script.is_file() else "MISSING"
        stdout.write(
            one_line(
                f"{item.workload.label}: {args.rounds} rounds of {script}:{function} ({where}) "
                "and bench liger --call-style upstream, in one process"
            )
            + "\n"
        )
    stdout.write(f"then: import liger {CSV_FILE}, {TABLE_FILE}, one archive; nothing was run\n")
    return 0


def main(argv: Sequence[str] | None = None, stdout: TextIO | None = None) -> int:
    """The cross-check (the module doc); exit 0 every kernel agrees, 1 otherwise, 2 usage."""
    out_stream = stdout or sys.stdout
    args = parse_args(argv)
    items = seed_items(args.kernel)
    if args.one:
        return run_kernel(args, items[0], out_stream)
    if args.dry_run:
        return _plan(args, items, out_stream)
    out = Path(args.out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        sys.stderr.write(one_line(f"device-fidelity: --out {out}: exists and is not empty") + "\n")
        return 2
    out.mkdir(parents=True, exist_ok=True)
    (out / CSV_FILE).write_text(",".join(LIGER_HEADER) + "\n", encoding="utf-8")
    archive = Path(args.archive) if args.archive else out.with_name(out.name + ".tgz")
    status = 0
    try:
        for item in items:
            status = _kernel_process(args, item, out_stream) or status
        _import_upstream(out, out_stream)
        rows = write_agreement(out, items, out_stream, args.rounds)
        if any(row.agree is not True for row in rows):
            status = status or 1
    finally:
        pack(out, archive)
        out_stream.write(f"device-fidelity: packed {archive}; exit {status}\n")
        out_stream.flush()
    return status


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.stderr.write("device-fidelity: interrupted\n")
        sys.exit(130)
