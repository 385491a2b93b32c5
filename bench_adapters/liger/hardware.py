"""GPU names, as the driver reports them, read into ExecutionEnvironment hardware.

The GPU catalog and the rule that splits a name against it are shared by every
importer (:mod:`bench_adapters.common.gpus`): an H100 from Liger's CSV is the same
hardware as one from KernelBench's timings. This module keeps the names the Liger
importer and runner have always used.
"""

from __future__ import annotations

from bench_adapters.common.gpus import Hardware, resolve_gpu

__all__ = ["Hardware", "resolve_gpu"]
