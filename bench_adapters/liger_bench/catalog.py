"""The bench catalog: which Liger kernels can be run, against what, at which workloads.

A kernel is *data* here (``data/kernels.json``) plus one small setup function
(:mod:`bench_adapters.liger_bench.setups`) — never a new code path. The data says which
providers exist for the kernel and what callable each measures, which providers are
the ground truth of the correctness gate, Liger's own sweep (x name, x values and the
fixed config, spelled exactly as Liger's CSV spells them, so that a workload measured
here has the same digest as the one imported from the CSV), and tolerances.

What the importer's catalog already knows — kernel titles, parameter normalization,
GPU names, provider families — is *not* repeated: it is read through
:func:`bench_adapters.liger.catalog.load_catalog`. Loading checks every entry against
it, so a kernel or provider unknown to the importer fails at load time rather than
producing records the importer would write differently.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from importlib import resources
from typing import Any

import attrs

from bench_adapters.liger.catalog import Catalog, load_catalog

DATA_PACKAGE = "bench_adapters.liger_bench"
DATA_FILE = "kernels.json"
PASSES = ("forward", "backward", "full")
#: How a pass's timed callable calls the backward (``forward``: no backward at all).
CALLS = ("forward", "backward", "autograd_grad")
#: Where the upstream gradient of a timed backward comes from.
UPSTREAM_GRADIENTS = ("fixed", "fresh", "implicit")


class BenchCatalogError(Exception):
    """``data/kernels.json`` is malformed or disagrees with the importer's catalog (a bug)."""


@attrs.frozen
class Tolerance:
    """Correctness bound: ``|a - r| <= atol * rms(r) + rtol * |r|`` elementwise."""

    atol: float
    rtol: float


@attrs.frozen
class ProviderEntry:
    """A provider of one kernel: the callable measured and the modules it imports."""

    entry_point: str
    requires: tuple[str, ...]
    #: Its first call compiles (``torch.compile``): seconds to minutes before any timing.
    compiles_on_first_call: bool = False


@attrs.frozen
class Sweep:
    """Liger's sweep for a kernel, in Liger's own terms (as its CSV records them)."""

    x_name: str
    values: tuple[int, ...]
    #: The x and pass of the published seed record, if the kernel has one.
    seed_x: int | None
    seed_pass: str | None
    config: Mapping[str, Any]


@attrs.frozen
class CallSpec:
    """What one pass's timed callable does, as a harness's script spells it.

    ``call``: ``forward`` (the forward only), ``backward`` (``outputs.backward(upstream)``
    for a pass with a backward) or ``autograd_grad`` (``torch.autograd.grad(outputs,
    leaves, upstream, allow_unused=True)``: nothing is accumulated into ``.grad``).
    ``upstream``: ``fixed`` (drawn once from the seed), ``fresh`` (``torch.randn_like``
    inside each timed call) or ``implicit`` (a scalar loss's own ones). ``grad_to_none``:
    the leaves whose ``.grad`` do_bench resets before each call, by name; None means
    every leaf; the others accumulate.
    """

    call: str
    retain_graph: bool = False
    upstream: str = "fixed"
    grad_to_none: tuple[str, ...] | None = None


@attrs.frozen
class UpstreamHarness:
    """Liger-Kernel's own benchmark script for a kernel, at the seed's commit."""

    script: str
    commit: str
    warmup_ms: float
    rep_ms: float
    passes: Mapping[str, CallSpec]


@attrs.frozen
class BenchKernel:
    """One runnable kernel."""

    name: str
    title: str
    setup: str
    providers: Mapping[str, ProviderEntry]
    default_providers: tuple[str, ...]
    references: tuple[str, ...]
    sweep: Sweep
    tolerances: Mapping[str, Tolerance]
    #: Liger's own script for the kernel at the seed's commit, when known.
    upstream: UpstreamHarness | None = None

    def tolerance(self, dtype: str) -> Tolerance:
        """The gate's bound for ``dtype`` (the strictest known one for an unknown dtype)."""
        found = self.tolerances.get(dtype)
        if found is not None:
            return found
        return min(self.tolerances.values(), key=lambda t: (t.atol, t.rtol))

    @property
    def compiles_on_first_call(self) -> bool:
        """Whether a provider of this kernel compiles on its first call (run such kernels last)."""
        return any(entry.compiles_on_first_call for entry in self.providers.values())

    def gated(self, provider: str) -> bool:
        """Whether ``provider``'s results are checked against a reference before timing."""
        return provider not in self.references


@attrs.frozen
class BenchCatalog:
    """All runnable kernels, plus the importer's catalog they are described by."""

    kernels: Mapping[str, BenchKernel]
    liger: Catalog


def _fail(where: str, what: str) -> BenchCatalogError:
    return BenchCatalogError(f"bench catalog {DATA_FILE}{where}: {what}")


def _obj(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(where, "expected an object")
    return {k: v for k, v in value.items() if not k.startswith("$")}


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise _fail(where, f"expected a non-empty string, got {value!r}")
    return value


def _strs(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise _fail(where, "expected an array")
    return tuple(_str(item, where) for item in value)


def _int(value: Any, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise _fail(where, f"expected a positive integer, got {value!r}")
    return value


def _tolerances(value: Any, where: str) -> dict[str, Tolerance]:
    table = {}
    for dtype, entry in _obj(value, where).items():
        entry = _obj(entry, f"{where}/{dtype}")
        bounds = []
        for key in ("atol", "rtol"):
            number = entry.get(key)
            if not isinstance(number, (int, float)) or isinstance(number, bool) or number < 0:
                raise _fail(f"{where}/{dtype}/{key}", f"expected a number >= 0, got {number!r}")
            bounds.append(float(number))
        table[dtype] = Tolerance(*bounds)
    return table


def _number(value: Any, where: str) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
        raise _fail(where, f"expected a number >= 0, got {value!r}")
    return float(value)


def _call_spec(value: Any, where: str) -> CallSpec:
    entry = _obj(value, where)
    call = _str(entry.get("call"), f"{where}/call")
    upstream = entry.get("upstream", "fixed")
    retain = entry.get("retainGraph", False)
    if call not in CALLS:
        raise _fail(f"{where}/call", f"not one of {', '.join(CALLS)}: {call!r}")
    if upstream not in UPSTREAM_GRADIENTS:
        raise _fail(f"{where}/upstream", f"not one of {', '.join(UPSTREAM_GRADIENTS)}")
    if not isinstance(retain, bool):
        raise _fail(f"{where}/retainGraph", f"expected a boolean, got {retain!r}")
    resets = entry.get("gradToNone")
    return CallSpec(
        call=call,
        retain_graph=retain,
        upstream=upstream,
        grad_to_none=None if resets is None else _strs(resets, f"{where}/gradToNone"),
    )


def _upstream(value: Any, where: str) -> UpstreamHarness | None:
    if value is None:
        return None
    entry = _obj(value, where)
    passes = {
        pass_: _call_spec(spec, f"{where}/passes/{pass_}")
        for pass_, spec in _obj(entry.get("passes"), f"{where}/passes").items()
    }
    if set(passes) != set(PASSES):
        raise _fail(f"{where}/passes", f"needs exactly the passes {', '.join(PASSES)}")
    return UpstreamHarness(
        script=_str(entry.get("script"), f"{where}/script"),
        commit=_str(entry.get("commit"), f"{where}/commit"),
        warmup_ms=_number(entry.get("warmupMs"), f"{where}/warmupMs"),
        rep_ms=_number(entry.get("repMs"), f"{where}/repMs"),
        passes=passes,
    )


def parse_catalog(data: Mapping[str, Any], liger: Catalog) -> BenchCatalog:
    """Check and type the bench catalog ``data`` against the importer's catalog."""
    defaults = _tolerances(data.get("tolerances"), "/tolerances")
    if not defaults:
        raise _fail("/tolerances", "no dtype has a tolerance")
    kernels = {}
    for name, entry in _obj(data.get("kernels"), "/kernels").items():
        where = f"/kernels/{name}"
        entry = _obj(entry, where)
        info = liger.kernels.get(name)
        if info is None:
            raise _fail(where, "kernel unknown to the importer's catalog (kernels.json there)")
        providers = {}
        for provider, spec in _obj(entry.get("providers"), f"{where}/providers").items():
            here = f"{where}/providers/{provider}"
            if provider not in liger.providers:
                raise _fail(here, "provider unknown to the importer's catalog (providers.json)")
            spec = _obj(spec, here)
            compiles = spec.get("compilesOnFirstCall", False)
            if not isinstance(compiles, bool):
                raise _fail(f"{here}/compilesOnFirstCall", f"expected a boolean, got {compiles!r}")
            providers[provider] = ProviderEntry(
                entry_point=_str(spec.get("entryPoint"), f"{here}/entryPoint"),
                requires=_strs(spec.get("requires", []), f"{here}/requires"),
                compiles_on_first_call=compiles,
            )
        defaults_for = _strs(entry.get("defaultProviders"), f"{where}/defaultProviders")
        references = _strs(entry.get("references"), f"{where}/references")
        for provider in (*defaults_for, *references):
            if provider not in providers:
                raise _fail(where, f"provider {provider!r} is named but not listed in providers")
        if not references:
            raise _fail(f"{where}/references", "a kernel needs a reference to check against")
        sweep = _obj(entry.get("sweep"), f"{where}/sweep")
        values = tuple(_int(v, f"{where}/sweep/values") for v in sweep.get("values", []))
        seed_x = sweep.get("seedX")
        seed_pass = sweep.get("seedPass")
        if (seed_x is None) != (seed_pass is None):
            raise _fail(f"{where}/sweep", "seedX and seedPass go together")
        if not values:
            raise _fail(f"{where}/sweep/values", "no x values")
        if seed_x is not None and _int(seed_x, f"{where}/sweep/seedX") not in values:
            raise _fail(f"{where}/sweep/seedX", "must be one of the sweep's values")
        if seed_pass is not None and seed_pass not in PASSES:
            raise _fail(f"{where}/sweep/seedPass", f"not a pass: {seed_pass!r}")
        kernels[name] = BenchKernel(
            name=name,
            title=info.title,
            setup=_str(entry.get("setup"), f"{where}/setup"),
            providers=providers,
            default_providers=defaults_for,
            references=references,
            sweep=Sweep(
                x_name=_str(sweep.get("x"), f"{where}/sweep/x"),
                values=values,
                seed_x=seed_x,
                seed_pass=seed_pass,
                config=_obj(sweep.get("config"), f"{where}/sweep/config"),
            ),
            tolerances={**defaults, **_tolerances(entry.get("tolerances", {}), where)},
            upstream=_upstream(entry.get("upstream"), f"{where}/upstream"),
        )
    return BenchCatalog(kernels=kernels, liger=liger)


@functools.cache
def load_bench_catalog() -> BenchCatalog:
    """The packaged bench catalog (read once per process)."""
    try:
        text = resources.files(DATA_PACKAGE).joinpath("data").joinpath(DATA_FILE).read_text("utf-8")
        data = json.loads(text)
    except (OSError, ValueError) as error:
        raise BenchCatalogError(f"bench catalog {DATA_FILE}: {error}") from error
    return parse_catalog(_obj(data, ""), load_catalog())
