"""The ``kernel_bench`` pytest fixture: pytest-benchmark's habit, an honest clock,
kernelindex records out (registered through the ``pytest11`` entry point).

::

    def test_add(kernel_bench):
        x = torch.randn(4096, 4096, device="cuda")
        out = kernel_bench(add, x, x)                       # like benchmark(fn, *args)
        kernel_bench.measure(add, x, x, reference=torch.add)  # checked first, then timed

    def test_parse(kernel_bench):
        kernel_bench.measure(json.loads, TEXT, timer="cpu")   # the CPU clock

The clock: with CUDA, ``triton.testing.do_bench`` (CUDA events); without CUDA, or
with ``timer="cpu"`` (``--kernelindex-timer cpu`` for the session), the CPU clock
(:class:`~bench_adapters.recording.timing.WallClockTimer`, protocol ``wall_clock``).
``timer="gpu"`` insists on CUDA and skips, with the reason, where there is none.

``pytest --kernelindex-out DIR`` writes one bundle per measured call under DIR,
checked as ``validate --strict-refs`` checks it before it is written, written
atomically. A run whose output differs from its reference, or that runs out of
memory, is written all the same and fails the test. At the end of the session a table
lists every measurement (:mod:`~bench_adapters.recording.session`);
``--kernelindex-compare REF`` judges the session's runs against earlier records with
``compare --against``'s verdicts, prints its table, and fails the session on a
``--kernelindex-fail-on`` verdict (default ``slower``).

The seam: the ``kernel_bench_timer`` fixture (None: the clock above) — override it in
a conftest with a :class:`~bench_adapters.recording.timing.FakeTimer` and the fixture
runs with no clock at all; every record it makes is flagged ``injected_timer`` and its
protocol says ``timer: unknown``. ``kernel_bench_environment`` (None: this machine,
probed once per session) may give an ExecutionEnvironment record instead.

This module imports neither torch nor triton nor the recorder at import time: it is
loaded by every pytest run in an environment where kernelindex is installed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from bench_adapters.recording.recorder import Recording
    from bench_adapters.recording.session import Entry, Judged
    from bench_adapters.recording.timing import Settings, Timer, WallClockSettings

_ENVIRONMENT = pytest.StashKey[dict[str, Any]]()
_ENTRIES: pytest.StashKey[list[Entry]] = pytest.StashKey()
_JUDGED: pytest.StashKey[Judged] = pytest.StashKey()
_CPU: pytest.StashKey[WallClockSettings] = pytest.StashKey()
#: The gate's settings, once checked: (reference, threshold, verdicts that fail).
_GATE = pytest.StashKey[tuple[str, float, tuple[str, ...]]]()

#: ``--kernelindex-timer``'s choices: CUDA where there is CUDA, else the CPU clock;
#: always the CPU clock; always CUDA (skipped without it).
TIMERS = ("auto", "cpu", "gpu")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kernelindex", "kernelindex records of kernel_bench measurements")
    group.addoption(
        "--kernelindex-out",
        metavar="DIR",
        default=None,
        help="write one kernelindex bundle per kernel_bench measurement under DIR",
    )
    _clock_options(group)
    _gate_options(group)


def _clock_options(group: pytest.OptionGroup) -> None:
    group.addoption(
        "--kernelindex-timer",
        choices=TIMERS,
        default="auto",
        help="the clock: auto (CUDA's do_bench where CUDA is, else the CPU clock), cpu, "
        "or gpu (tests skip without CUDA); default auto",
    )
    group.addoption(
        "--kernelindex-samples",
        metavar="N",
        type=int,
        default=None,
        help="the CPU clock's samples per measurement (default 21)",
    )
    group.addoption(
        "--kernelindex-min-sample-ms",
        metavar="MS",
        type=float,
        default=None,
        help="the CPU clock's shortest sample: calls per sample are calibrated to it "
        "(default 1 ms)",
    )
    group.addoption(
        "--kernelindex-warmup-ms",
        metavar="MS",
        type=float,
        default=None,
        help="the CPU clock's warm-up before calibrating (default 10 ms)",
    )
    group.addoption(
        "--kernelindex-disable-gc",
        action="store_true",
        default=False,
        help="switch the garbage collector off while the CPU clock samples",
    )


def _gate_options(group: pytest.OptionGroup) -> None:
    group.addoption(
        "--kernelindex-compare",
        metavar="REF",
        default=None,
        help="judge each measurement against the earlier records in REF (a folder, a "
        "store, JSON Lines) as kernelindex compare --against does, and print the verdicts",
    )
    group.addoption(
        "--kernelindex-fail-on",
        metavar="VERDICTS",
        default="slower",
        help="with --kernelindex-compare, the verdicts that fail the session, comma-"
        "separated (slower, unsure, faster, same); default slower",
    )
    group.addoption(
        "--kernelindex-threshold",
        metavar="T",
        default="5%",
        help="with --kernelindex-compare, a change smaller than this is same (5%% or 0.05); "
        "default 5%%",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Check the clock's and the gate's options once (a usage error is one line), and
    open the session's list of measurements."""
    config.stash[_ENTRIES] = []
    config.stash[_CPU] = _cpu_settings(config)
    reference = config.getoption("kernelindex_compare", None)
    if reference is None:
        return
    if not Path(reference).exists():
        raise pytest.UsageError(f"--kernelindex-compare {reference!r}: no such file or folder")
    if getattr(config.option, "numprocesses", None) or hasattr(config, "workerinput"):
        raise pytest.UsageError(
            "--kernelindex-compare judges the measurements of one process: add -n 0 "
            "(pytest-xdist runs the tests in others)"
        )
    from kernelindex_sdk.compare.beforeafter import VERDICTS

    verdicts = tuple(
        v.strip() for v in str(config.getoption("kernelindex_fail_on")).split(",") if v.strip()
    )
    unknown = [v for v in verdicts if v not in VERDICTS]
    if unknown or not verdicts:
        raise pytest.UsageError(
            f"--kernelindex-fail-on {','.join(unknown)!r}: not a verdict "
            f"(choose from {', '.join(VERDICTS)})"
        )
    threshold = _threshold(str(config.getoption("kernelindex_threshold")))
    config.stash[_GATE] = (str(reference), threshold, tuple(dict.fromkeys(verdicts)))


def _cpu_settings(config: pytest.Config) -> WallClockSettings:
    """The session's CPU clock settings, from its options (defaults where not given)."""
    from bench_adapters.recording.timing import WallClockSettings

    given = {
        "samples": config.getoption("kernelindex_samples", None),
        "min_sample_ms": config.getoption("kernelindex_min_sample_ms", None),
        "warmup_ms": config.getoption("kernelindex_warmup_ms", None),
    }
    chosen: dict[str, Any] = {key: value for key, value in given.items() if value is not None}
    chosen["disable_gc"] = bool(config.getoption("kernelindex_disable_gc", False))
    try:
        return WallClockSettings(**chosen)
    except ValueError as error:
        raise pytest.UsageError(f"kernelindex: {error}") from None


def _threshold(text: str) -> float:
    """``5%`` or ``0.05`` → 0.05; anything else a usage error."""
    body = text.strip()
    try:
        value = float(body.removesuffix("%"))
    except ValueError:
        value = -1.0
    if body.endswith("%"):
        value /= 100
    if not 0 <= value < 1:
        raise pytest.UsageError(
            f"--kernelindex-threshold {text!r}: give a fraction below 1 or a percentage (5%)"
        )
    return value


@pytest.fixture
def kernel_bench_timer() -> Timer | None:
    """The timer ``kernel_bench`` uses; None is the clock (module doc). Override it to
    inject one (its records are flagged ``injected_timer``)."""
    return None


@pytest.fixture
def kernel_bench_environment() -> Mapping[str, Any] | None:
    """The ExecutionEnvironment record runs link to; None probes this machine once."""
    return None


def _clock(choice: str, protocol: Settings | None, cpu: WallClockSettings) -> Timer:
    """The measuring timer for ``choice`` (:data:`TIMERS`) and ``protocol`` (``cpu``:
    the session's CPU clock settings); skips the test where CUDA is needed and missing."""
    from bench_adapters.recording.environment import gpu_available
    from bench_adapters.recording.timing import (
        DoBenchTimer,
        TimerSettings,
        WallClockSettings,
        WallClockTimer,
    )

    if choice not in TIMERS:
        raise ValueError(f"timer={choice!r}: choose from {', '.join(TIMERS)}")
    if isinstance(protocol, WallClockSettings):
        if choice == "gpu":
            raise ValueError('timer="gpu" with WallClockSettings: give TimerSettings')
        return WallClockTimer(protocol)
    if choice == "cpu":
        if protocol is not None:
            raise ValueError('timer="cpu" with TimerSettings: give WallClockSettings')
        return WallClockTimer(cpu)
    available, why = gpu_available()
    if available:
        return DoBenchTimer(protocol or TimerSettings())
    if choice == "gpu" or protocol is not None:
        pytest.skip(f"kernel_bench needs a CUDA device for do_bench: {why}")
    return WallClockTimer(cpu)


class KernelBench:
    """What the ``kernel_bench`` fixture gives a test."""

    def __init__(
        self,
        config: pytest.Config,
        node_id: str,
        timer: Timer | None,
        environment: Mapping[str, Any] | None,
        name: str | None = None,
    ) -> None:
        self._config = config
        self._node_id = node_id
        self._name = name or node_id
        self._timer = timer
        self._environment = environment
        #: Every recording of this test, in order.
        self.recordings: list[Recording] = []
        #: The files written (with ``--kernelindex-out``).
        self.written: list[Path] = []

    def __call__(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Time ``fn(*args, **kwargs)`` and return what it returned (pytest-benchmark's
        way; every keyword is ``fn``'s: choose the clock with :meth:`measure`)."""
        return self.measure(fn, *args, kwargs=kwargs).output

    def measure(
        self,
        fn: Callable[..., Any],
        *args: Any,
        kwargs: Mapping[str, Any] | None = None,
        kernel: str | None = None,
        pass_: str = "forward",
        workload: Mapping[str, Any] | None = None,
        implementation: Mapping[str, Any] | None = None,
        protocol: Settings | None = None,
        reference: Any = None,
        grad_to_none: Sequence[Any] = (),
        timer: str | None = None,
    ) -> Recording:
        """Check (with ``reference``), time and record ``fn``; write it with --kernelindex-out.

        ``timer``: ``auto``, ``cpu`` or ``gpu`` (default: ``--kernelindex-timer``);
        ``protocol``: the clock's settings (``TimerSettings`` for do_bench,
        ``WallClockSettings`` for the CPU clock). ``workload`` defaults to the call's
        tensor shapes and dtypes under ``kernel`` (default: ``fn``'s name);
        ``implementation`` to ``fn`` named after itself (module, qualified name, the
        distribution providing it and its version, its git commit).
        """
        from bench_adapters.recording.describe import implementation_of, workload_for
        from bench_adapters.recording.recorder import record
        from bench_adapters.recording.session import Entry

        measuring = self._timer
        if measuring is None:
            choice = timer or self._config.getoption("kernelindex_timer")
            measuring = _clock(choice, protocol, self._config.stash[_CPU])
        elif timer is not None:
            raise ValueError("timer= given while a kernel_bench_timer is injected")
        elif protocol is not None and protocol != measuring.settings:
            raise ValueError("protocol differs from the injected kernel_bench_timer's settings")
        name = kernel or getattr(fn, "__name__", None) or "kernel"
        if workload is None:
            workload = workload_for(name, args, kwargs, pass_=pass_)
        if implementation is None:
            implementation = implementation_of(fn)
        recording = record(
            fn,
            *args,
            kwargs=kwargs,
            workload=workload,
            implementation=implementation,
            reference=reference,
            timer=measuring,
            environment=self._environment_record(),
            grad_to_none=grad_to_none,
        )
        self.recordings.append(recording)
        shown = self._name if len(self.recordings) == 1 else f"{self._name} #{len(self.recordings)}"
        entries = self._config.stash.setdefault(_ENTRIES, [])
        entries.append(Entry(shown, recording))  # in the table even if it cannot be written
        path = self._write(recording)
        if path is not None:
            entries[-1] = Entry(shown, recording, path)
        if recording.status != "passed":
            pytest.fail(f"kernel_bench: {recording.status}: {recording.reason}", pytrace=False)
        return recording

    def _environment_record(self) -> Mapping[str, Any]:
        from bench_adapters.recording.environment import environment_record, probe

        environment = self._environment
        if environment is None:
            environment = self._config.stash.get(_ENVIRONMENT, None)
            if environment is None:
                environment = environment_record(probe())
                self._config.stash[_ENVIRONMENT] = dict(environment)
        return environment

    def _write(self, recording: Recording) -> Path | None:
        """Write the bundle under --kernelindex-out, if given (its path); a failure
        fails the test."""
        out = self._config.getoption("kernelindex_out")
        if not out:
            return None
        from bench_adapters.common.writer import OutputError
        from bench_adapters.recording.bundles import InvalidBundle, write_bundle

        problem = None
        try:
            self.written.append(write_bundle(out, recording.bundle))
            return self.written[-1]
        except InvalidBundle as error:
            problem = f"kernel_bench: the record would not validate: {error}"
        except OutputError as error:
            problem = f"kernel_bench: --kernelindex-out: {error}"
        pytest.fail(problem, pytrace=False)  # outside the except: one line, no chained error


@pytest.fixture
def kernel_bench(
    request: pytest.FixtureRequest,
    kernel_bench_timer: Timer | None,
    kernel_bench_environment: Mapping[str, Any] | None,
) -> Iterator[KernelBench]:
    """Measure a callable with do_bench or the CPU clock and record it (the module doc)."""
    yield KernelBench(
        request.config,
        request.node.nodeid,
        kernel_bench_timer,
        kernel_bench_environment,
        name=request.node.name,
    )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """With --kernelindex-compare: judge the session's measurements; a failing verdict
    (or a run that is no measurement) fails the session."""
    config = session.config
    gate = config.stash.get(_GATE, None)
    if gate is None or config.option.collectonly:
        return
    from bench_adapters.recording.session import Judged, judge_session

    reference, threshold, fail_on = gate
    entries = config.stash.get(_ENTRIES, [])
    if not entries:
        judged = Judged(1, "no measurement in this session: nothing was compared", [])
    else:
        judged = judge_session(entries, reference, threshold=threshold, fail_on=fail_on)
    config.stash[_JUDGED] = judged
    if judged.status != 0 and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """The results table, then the gate's verdicts and outcome."""
    entries = config.stash.get(_ENTRIES, [])
    if entries:
        from bench_adapters.recording.session import results_table

        count = len(entries)
        terminalreporter.write_sep("-", f"kernelindex: {count} measurement{'s' * (count != 1)}")
        for line in results_table(entries):
            terminalreporter.write_line(line)
    judged = config.stash.get(_JUDGED, None)
    if judged is not None:
        reference = config.stash[_GATE][0]
        terminalreporter.write_sep("-", "kernelindex: against " + _one_line(reference))
        for line in judged.lines:
            terminalreporter.write_line(line)
        outcome = "passed" if judged.status == 0 else "FAILED"
        terminalreporter.write_line(_one_line(f"kernelindex gate {outcome}: {judged.reason}"))


def _one_line(text: str) -> str:
    from kernelindex_sdk.base.escaping import one_line

    return one_line(text)
