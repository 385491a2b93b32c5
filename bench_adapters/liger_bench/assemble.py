"""Turning a sweep's outcomes into kernelindex records, in the importer's shapes.

Workloads, implementations, environments and passed runs are built by the Liger
importer's own builders (:mod:`bench_adapters.liger.records`, with its catalog, GPU
resolution and naming rules), so a workload measured here has the same digest as the
one imported from Liger's CSV for the same x and config, and every record has the
shape the importer writes. What this adapter adds is what the CSV lacks:

* a **protocol** of its own per (metric, pass, call timed) —
  ``kernelindex-bench-liger-upstream-<kernel>-do-bench-<pass>`` for Liger's own script's
  call, ``kernelindex-bench-liger-do-bench-<pass>`` for the ``kernelindex`` call style,
  ``…-memory-<pass>`` for peak memory — stating the real settings (warm-up and
  repetition time, quantiles, L2 flushing) and the call (``harnessSettings``: what is
  called, which gradients are reset and which accumulate), so runs that time different
  work never share a protocol digest, and are never confused with imported ones;
* an **environment** that records the device as the driver names it, its compute
  capability, memory, and the driver, CUDA, torch, triton, liger-kernel, transformers
  and Python versions;
* **implementations** with the callable measured (``entryPoint``) and the installed
  package version;
* runs that did not pass (``failed``, ``oom``, ``skipped``) with their reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from bench_adapters.common.records import protocol_record as protocol_envelope
from bench_adapters.liger import records
from bench_adapters.liger.catalog import Catalog, ProviderInfo
from bench_adapters.liger.names import gpu_slug, record_name
from bench_adapters.liger_bench.calls import KERNELINDEX, KERNELINDEX_CALLS, TimedCall
from bench_adapters.liger_bench.catalog import BenchKernel
from bench_adapters.liger_bench.plan import Workload
from bench_adapters.liger_bench.probes import LIGER_PACKAGES, DeviceInfo, TimerSettings
from bench_adapters.liger_bench.runner import Outcome
from bench_adapters.recording.environment import GPU_FIELDS, SOFTWARE_FIELDS, Probed
from bench_adapters.recording.environment import environment_record as build_environment
from bench_adapters.recording.recorder import link, unfinished_run
from bench_adapters.recording.timing import injected_measurement, injected_notes
from kernelindex_sdk import models as m
from kernelindex_sdk.base import recordformat

#: sourceNative.source of every run this adapter measures (the importer's is liger-kernel-bench).
SOURCE = "kernelindex-bench-liger"
#: comparability.family of this adapter's protocols.
FAMILY = "kernelindex_bench_liger"
HARNESS_NAME = "kernelindex bench liger"

_TIMED = {
    "forward": "the forward call only, with autograd recording (inputs and parameters "
    "require grad), as Liger's harness times it",
    "backward": "the backward pass only: torch.autograd.backward of the outputs of one "
    "earlier forward call, with a seeded random upstream gradient (ones for a scalar "
    "loss) and retain_graph=True",
    "full": "one forward call plus torch.autograd.backward of its outputs with a seeded "
    "random upstream gradient (ones for a scalar loss)",
}


#: What every protocol's notes say of the correctness check before measuring.
_GATE = (
    "Before measuring, the provider's outputs (and, for a pass with a backward, the "
    "gradients of every input and parameter) were checked against the reference "
    "provider on the same seeded inputs; a run that did not match is recorded as "
    "failed, never measured. That check is the provider's first call at the "
    "workload, so it absorbs Triton's JIT and any torch.compile: its wall time "
    "(device synchronized around it) is sourceNative.metrics.first_call_ms, apart "
    "from the measurement."
)


def protocol_record(
    metric: str,
    pass_: str,
    timer: TimerSettings,
    memory_repetitions: int,
    version: str,
    call: TimedCall | None = None,
    kernel: str | None = None,
    injected: str | None = None,
) -> dict[str, Any]:
    """The protocol a run was measured under, with its real settings and the call it
    timed (``call``; None: the ``kernelindex`` style's, the same for every kernel);
    ``injected``: the class of a timer injected through the seam, which measured nothing
    (said so)."""
    if call is None:
        call = TimedCall(KERNELINDEX, pass_, KERNELINDEX_CALLS[pass_])
    timed = _TIMED[pass_] if call.style == KERNELINDEX else _upstream_timed(call)
    if metric == "speed" and injected is not None:
        measurement, notes = _injected(injected, timer, call)
        name, title = f"injected-timer-{pass_}", f"injected timer · {pass_} pass"
    elif metric == "speed":
        measurement, notes = _speed(timer, call, timed)
        name, title = f"do-bench-{pass_}", f"do_bench · {pass_} pass"
    else:
        measurement, notes = _memory(timer, call, timed, memory_repetitions)
        name, title = f"memory-{pass_}", f"peak memory · {pass_} pass"
    if call.style == KERNELINDEX:
        name = f"kernelindex-bench-liger-{name}"
    else:
        name = f"kernelindex-bench-liger-{call.style}-{kernel or 'kernel'}-{name}"
        title = f"{kernel or 'kernel'} · {title} · {call.style} call"
    return protocol_envelope(
        m.Metadata(name=record_name(name), title=f"kernelindex bench liger · {title}"),
        m.Harness(name=HARNESS_NAME, version=version),
        measurement,
        m.Comparability(notes=notes, family=FAMILY),
    )


def _speed(timer: TimerSettings, call: TimedCall, timed: str) -> tuple[dict[str, Any], str]:
    """A latency protocol's measurement (the timer's own statement, plus the call) and notes."""
    resets = call.resets()
    grads = resets != "none"
    measurement: dict[str, Any] = {
        **timer.measurement(),
        recordformat.GRAD_TO_NONE_KEY: grads,
        recordformat.HARNESS_SETTINGS_KEY: call.harness_settings(),
    }
    reset = f", and .grad of {_resets_text(resets)} set to None before each call"
    notes = (
        f"Timed: {timed}, by {timer.described()}"
        + (reset if grads else "")
        + "; the number of calls follows from the estimated time per call. The median "
        "is the result, p20 and p80 the spread. "
        + _GATE
        + " Comparable within one kernel, workload, timed pass and environment; beside "
        "Liger's own CSV figures (family liger_kernel_bench) only with the difference "
        "of harness settings in mind."
    )
    return measurement, notes


def _memory(
    timer: TimerSettings, call: TimedCall, timed: str, repetitions: int
) -> tuple[dict[str, Any], str]:
    """A peak-memory protocol's measurement and notes."""
    quantiles = "/".join(f"{q:g}" for q in timer.quantiles)
    measurement = {
        recordformat.MEMORY_PROBE_KEY: "torch_cuda_max_memory_allocated",
        recordformat.PRIMARY_STATISTIC_KEY: "median",
        recordformat.QUANTILES_KEY: list(timer.quantiles),
        recordformat.REPETITIONS_KEY: repetitions,
        recordformat.HARNESS_SETTINGS_KEY: call.harness_settings(),
    }
    notes = (
        f"Measured: peak device memory allocated by PyTorch during {timed}, read with "
        "torch.cuda.max_memory_allocated() after torch.cuda.reset_peak_memory_stats() "
        f"before each of {repetitions} calls (as Liger's harness does); the "
        f"quantiles {quantiles} of those peaks (linear interpolation, as torch.quantile) "
        "are reported in bytes. The peak includes tensors already live when the call "
        "starts (inputs, weights, a retained graph). "
        + _GATE
        + " Comparable within one kernel, workload, measured pass and environment."
    )
    return measurement, notes


def _resets_text(resets: str) -> str:
    return "every input and parameter" if resets == "every leaf" else resets


def _upstream_timed(call: TimedCall) -> str:
    """What ``call`` times, for a protocol's notes: Liger's script's call, in its words."""
    others = call.harness_settings()["otherGradients"]
    return (
        f"{call.statement()} as Liger-Kernel's own benchmark script {call.script} times "
        f"the {call.pass_} pass (warm-up and rep as that script sets them unless stated "
        f"otherwise below; gradients not reset: {others})"
    )


def _injected(origin: str, timer: TimerSettings, call: TimedCall) -> tuple[dict[str, Any], str]:
    """The measurement and notes of a speed protocol whose timer was injected through the
    seam: nothing it timed reads as do_bench's."""
    measurement = injected_measurement(timer, origin)
    measurement[recordformat.GRAD_TO_NONE_KEY] = call.resets() != "none"
    measurement[recordformat.HARNESS_SETTINGS_KEY] = {
        **call.harness_settings(),
        **measurement[recordformat.HARNESS_SETTINGS_KEY],
    }
    return measurement, injected_notes(origin, timer) + " " + _GATE


def probed_of(info: DeviceInfo) -> Probed:
    """The probe's answers for ``info``: its own when a real device was probed; else
    (a stand-in device, in tests) what ``info`` states, said to come from the device."""
    if info.probed is not None:
        return info.probed
    found = Probed()
    where = "probed: the device description (torch and package metadata)"
    found.put(("hardware", "deviceName"), info.name, where)
    found.put(("hardware", "computeCapability"), "{}.{}".format(*info.capability), where)
    found.put(("hardware", "memoryBytes"), info.memory_bytes, where)
    for component, version in info.software.items():
        found.put(("software", component), version, where)
    for component in SOFTWARE_FIELDS:
        found.lack(("software", component), "the device description does not say")
    for field in GPU_FIELDS:
        found.lack(("hardware", field), "the device description does not say")
    return found


def environment_record(info: DeviceInfo, catalog: Catalog) -> dict[str, Any]:
    """The measured machine, as ``kernelindex env`` describes it (the same probe and
    builder: every field with its provenance), plus the Liger packages' versions.

    ``catalog`` is the Liger importer's; the GPU catalog the builder resolves the
    device name with is the one every importer shares.
    """
    found = probed_of(info)
    extra = {
        name: (info.software[name], "probed: package metadata")
        for name in LIGER_PACKAGES
        if name in info.software
    }
    return build_environment(found, extra_software=extra, name_prefix="kernelindex-bench")


def implementation_record(
    kernel: BenchKernel, provider: str, info: ProviderInfo, software: Mapping[str, str]
) -> dict[str, Any]:
    """The importer's implementation, plus the callable measured and its installed version."""
    version = software.get(info.package, "") if info.package else ""
    base = records.implementation_record(provider, info, version if info.versioned else "")
    record = m.structure(base, m.Implementation)
    spec, metadata = record.spec, record.metadata
    if info.package and version and (spec.package is None or spec.package.version is None):
        spec = attrs.evolve(spec, package=m.Package(info.package, version))
        metadata = attrs.evolve(
            metadata,
            name=record_name(f"{metadata.name}-{version}"),
            title=f"{metadata.title} · {info.package} {version}",
        )
    spec = attrs.evolve(spec, entry_point=kernel.providers[provider].entry_point)
    metadata = attrs.evolve(metadata, name=record_name(f"bench-{metadata.name}-{kernel.name}"))
    return dict(m.unstructure(attrs.evolve(record, metadata=metadata, spec=spec)))


def workload_record(workload: Workload) -> dict[str, Any]:
    """Exactly the importer's workload for the same kernel, pass, x and config."""
    return records.workload_record(
        workload.kernel.name, workload.kernel.title, workload.pass_, workload.shape
    )


@attrs.define(eq=False)
class Assembler:
    """Builds each outcome's bundle; referenced records are built once and reused."""

    catalog: Catalog
    device: DeviceInfo
    timer: TimerSettings
    memory_repetitions: int
    harness_version: str
    #: The class of a timer injected through the seam (its speed runs are flagged).
    injected: str | None = None
    environment: dict[str, Any] = attrs.field(init=False)
    _protocols: dict[tuple[Any, ...], dict[str, Any]] = attrs.field(init=False, factory=dict)
    _implementations: dict[tuple[str, str], dict[str, Any]] = attrs.field(init=False, factory=dict)

    @environment.default
    def _environment(self) -> dict[str, Any]:
        return environment_record(self.device, self.catalog)

    def protocol(
        self,
        metric: str,
        pass_: str,
        call: TimedCall | None = None,
        timer: TimerSettings | None = None,
        kernel: str | None = None,
    ) -> dict[str, Any]:
        """The protocol of (metric, pass) with the call timed and the timer's settings
        for it (the sweep's when not given); built once per distinct protocol."""
        settings = timer or self.timer
        kernel_key = kernel if call is not None and call.style != KERNELINDEX else None
        key = (metric, pass_, call, settings, kernel_key)
        if key not in self._protocols:
            self._protocols[key] = protocol_record(
                metric,
                pass_,
                settings,
                self.memory_repetitions,
                self.harness_version,
                call,
                kernel_key,
                self.injected,
            )
        return self._protocols[key]

    def implementation(self, kernel: BenchKernel, provider: str) -> dict[str, Any]:
        key = (kernel.name, provider)
        if key not in self._implementations:
            info = self.catalog.providers[provider]
            self._implementations[key] = implementation_record(
                kernel, provider, info, self.device.software
            )
        return self._implementations[key]

    def bundle(self, outcome: Outcome) -> dict[str, Any]:
        """``{run, protocol, workload, environment, implementation}`` for one outcome,
        linked as the recorder links its own (:func:`~bench_adapters.recording.recorder.link`)."""
        workload = outcome.item.workload
        return link(
            lambda refs: self.run_record(outcome, refs),
            protocol=self.protocol(
                outcome.item.metric,
                workload.pass_,
                outcome.call,
                outcome.timer,
                workload.kernel.name,
            ),
            workload=workload_record(workload),
            environment=self.environment,
            implementation=self.implementation(workload.kernel, outcome.provider),
        )

    def run_record(self, outcome: Outcome, refs: tuple[str, str, str, str]) -> dict[str, Any]:
        workload = outcome.item.workload
        metric = self.catalog.metrics[outcome.item.metric]
        label = f"/{metric.label}" if metric.label else ""
        benchmark = f"{workload.kernel.name}/{workload.pass_}{label}"
        time_slug = outcome.observed_at.replace("T", "-").replace(":", "-").rstrip("Z")
        time_slug = time_slug.replace(".", "-")
        external_id = (
            f"{benchmark}/{outcome.provider}/{gpu_slug(self.device.name)}/"
            f"{workload.shape.slug}/{time_slug}"
        )
        title = f"{workload.kernel.title} · {outcome.provider} · {workload.pass_}"
        if metric.label:
            title += f" · {metric.label}"
        labels = {}
        liger_version = self.device.software.get("liger-kernel")
        if liger_version:
            labels["liger_version"] = liger_version
        if outcome.checked_against:
            labels["checked_against"] = outcome.checked_against
        name = record_name(f"bench-liger-{external_id}")
        if outcome.status == "passed" and outcome.values is not None:
            p20, median, p80 = outcome.values
            flags = [records.COLLAPSED_QUANTILES] if p20 == median == p80 else []
            flags += [flag for flag in outcome.flags if flag not in flags]
            flags += self._injected_flag(outcome)
            record = records.run_record(
                name=name,
                title=title,
                labels=labels,
                observed_at=outcome.observed_at,
                metric=metric,
                values=outcome.values,
                native_metrics=dict(outcome.native),
                source=SOURCE,
                benchmark=benchmark,
                external_id=external_id,
                digests=refs,
                quality_flags=flags,
            )
            if outcome.samples:
                record["spec"][metric.result][recordformat.SAMPLES_KEY] = outcome.samples
            return record
        run = unfinished_run(
            outcome.status,
            outcome.reason,
            outcome.observed_at,
            m.SourceNative(SOURCE, benchmark, external_id),
            outcome.native,  # first_call_ms of a run that failed after its first call
            name=name,
            title=title,
            labels=labels,
            refs=refs,
        )
        if self._injected_flag(outcome):
            run[recordformat.SPEC_KEY][recordformat.QUALITY_FLAGS_KEY] = self._injected_flag(
                outcome
            )
        return run

    def _injected_flag(self, outcome: Outcome) -> list[str]:
        """``[injected_timer]`` for a speed run an injected timer timed, else nothing."""
        if self.injected is None or outcome.item.metric != "speed":
            return []
        return [recordformat.INJECTED_TIMER]
