"""The GPU time alone, beside a latency that includes the host, and when a run is host-bound.

``triton.testing.do_bench`` puts its CUDA events around the whole call: Python, the
autograd engine, the launches. For a kernel of a few microseconds the GPU idles while
the host runs, and the figure times the host — a figure another machine's host
changes. So beside each latency a run also records the GPU's time alone, the same
callable captured in a CUDA graph and replayed (``do_bench_cudagraph``: no host work
between the kernels, no L2 flush); a run whose median is more than
:data:`HOST_BOUND_FACTOR` times its GPU-only median carries the quality flag
:data:`HOST_BOUND`. Where the graph could not be captured the run carries
:data:`GPU_ONLY_UNMEASURED` instead: nothing is known either way.
"""

from __future__ import annotations

from typing import Final

from bench_adapters.recording.timing import TimerSettings
from kernelindex_sdk.base import recordformat

#: The quality flag of a run whose figure is mostly the host's time.
HOST_BOUND: Final = recordformat.HOST_BOUND_FLAG
#: The quality flag of a run whose GPU-only time could not be measured.
GPU_ONLY_UNMEASURED: Final = "gpu-only-unmeasured"
#: A median over this many times the GPU-only median is host-bound.
HOST_BOUND_FACTOR: Final = 2.0
#: ``sourceNative.metrics`` names of the GPU-only figure: ms per quantile, and samples.
GPU_ONLY_PREFIX: Final = "gpu_only_ms_"
GPU_ONLY_SAMPLES: Final = "gpu_only_samples"


def is_host_bound(median: float, gpu_only_median: float) -> bool:
    """Whether a run's ``median`` is more than :data:`HOST_BOUND_FACTOR` times the GPU's
    own time (both in one unit); a GPU-only time of 0 makes any positive median host-bound."""
    return median > HOST_BOUND_FACTOR * gpu_only_median


def graph_settings(rep_ms: float = 100.0) -> TimerSettings:
    """The GPU-only timer's settings: a CUDA graph replayed for ``rep_ms``, no flush."""
    return TimerSettings(rep_ms=rep_ms, flush_l2=False, cuda_graph=True)
