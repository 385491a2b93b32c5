"""The ``kernel_bench`` pytest fixture: pytest-benchmark's habit, do_bench's timing,
kernelindex records out (registered through the ``pytest11`` entry point).

::

    def test_add(kernel_bench):
        x = torch.randn(4096, 4096, device="cuda")
        out = kernel_bench(add, x, x)                       # like benchmark(fn, *args)
        kernel_bench.measure(add, x, x, reference=torch.add)  # checked first, then timed

``pytest --kernelindex-out DIR`` writes one bundle per measured call under DIR,
checked as ``validate --strict-refs`` checks it before it is written, written
atomically. A run whose output differs from its reference, or that runs out of
memory, is written all the same and fails the test. Without CUDA the test is skipped
with the reason.

The seam: the ``kernel_bench_timer`` fixture (None: do_bench) — override it in a
conftest with a :class:`~bench_adapters.recording.timing.FakeTimer` and the fixture
runs on a CPU, with no skip; ``kernel_bench_environment`` (None: this machine,
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
    from bench_adapters.recording.timing import Timer, TimerSettings

_ENVIRONMENT = pytest.StashKey[dict[str, Any]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kernelindex", "kernelindex records of kernel_bench measurements")
    group.addoption(
        "--kernelindex-out",
        metavar="DIR",
        default=None,
        help="write one kernelindex bundle per kernel_bench measurement under DIR",
    )


@pytest.fixture
def kernel_bench_timer() -> Timer | None:
    """The timer ``kernel_bench`` uses; None is do_bench. Override it to inject one."""
    return None


@pytest.fixture
def kernel_bench_environment() -> Mapping[str, Any] | None:
    """The ExecutionEnvironment record runs link to; None probes this machine once."""
    return None


class KernelBench:
    """What the ``kernel_bench`` fixture gives a test."""

    def __init__(
        self,
        config: pytest.Config,
        node_id: str,
        timer: Timer | None,
        environment: Mapping[str, Any] | None,
    ) -> None:
        self._config = config
        self._node_id = node_id
        self._timer = timer
        self._environment = environment
        #: Every recording of this test, in order.
        self.recordings: list[Recording] = []
        #: The files written (with ``--kernelindex-out``).
        self.written: list[Path] = []

    def __call__(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Time ``fn(*args, **kwargs)`` and return what it returned (pytest-benchmark's way)."""
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
        protocol: TimerSettings | None = None,
        reference: Any = None,
        grad_to_none: Sequence[Any] = (),
    ) -> Recording:
        """Check (with ``reference``), time and record ``fn``; write it with --kernelindex-out.

        ``workload`` defaults to the call's tensor shapes and dtypes under ``kernel``
        (default: ``fn``'s name); ``implementation`` to ``fn``'s top-level package at its
        installed version.
        """
        from bench_adapters.recording.describe import implementation_for, workload_for
        from bench_adapters.recording.environment import environment_record, gpu_available, probe
        from bench_adapters.recording.recorder import record
        from bench_adapters.recording.timing import DoBenchTimer, TimerSettings

        timer = self._timer
        if timer is None:
            available, why = gpu_available()
            if not available:
                pytest.skip(f"kernel_bench needs a CUDA device: {why}")
            timer = DoBenchTimer(protocol or TimerSettings())
        elif protocol is not None and protocol != timer.settings:
            raise ValueError("protocol differs from the injected kernel_bench_timer's settings")
        environment = self._environment
        if environment is None:
            environment = self._config.stash.get(_ENVIRONMENT, None)
            if environment is None:
                environment = environment_record(probe())
                self._config.stash[_ENVIRONMENT] = dict(environment)
        name = kernel or getattr(fn, "__name__", None) or "kernel"
        if workload is None:
            workload = workload_for(name, args, kwargs, pass_=pass_)
        if implementation is None:
            package = (getattr(fn, "__module__", None) or "").partition(".")[0] or None
            implementation = implementation_for(package, fn=fn)
        recording = record(
            fn,
            *args,
            kwargs=kwargs,
            workload=workload,
            implementation=implementation,
            reference=reference,
            timer=timer,
            environment=environment,
            grad_to_none=grad_to_none,
        )
        self.recordings.append(recording)
        out = self._config.getoption("kernelindex_out")
        if out:
            from bench_adapters.common.writer import OutputError
            from bench_adapters.recording.bundles import InvalidBundle, write_bundle

            problem = None
            try:
                self.written.append(write_bundle(out, recording.bundle))
            except InvalidBundle as error:
                problem = f"kernel_bench: the record would not validate: {error}"
            except OutputError as error:
                problem = f"kernel_bench: --kernelindex-out: {error}"
            if problem is not None:  # failed outside the except: one line, no chained error
                pytest.fail(problem, pytrace=False)
        if recording.status != "passed":
            pytest.fail(f"kernel_bench: {recording.status}: {recording.reason}", pytrace=False)
        return recording


@pytest.fixture
def kernel_bench(
    request: pytest.FixtureRequest,
    kernel_bench_timer: Timer | None,
    kernel_bench_environment: Mapping[str, Any] | None,
) -> Iterator[KernelBench]:
    """Measure a callable with do_bench and record it (see the module doc)."""
    yield KernelBench(
        request.config, request.node.nodeid, kernel_bench_timer, kernel_bench_environment
    )
