"""What a row computed: kernel shape parameters, dtype and settings, and the workload slug.

A Liger row states its shape in two places: the swept x (``x_name``/``x_value``) and
the fixed ``extra_benchmark_config_str``. Each script names the same dimension its
own way (``bsz``, ``B``, ``batch_size``), so names are normalized through the catalog
(``data/parameters.json``, with per-kernel overrides in ``data/kernels.json``); the
seeds fix the result, e.g. geglu's ``bsz``, ``hidden_size``, ``intermediate_size``
and x ``T`` become ``batch8-hidden4096-intermediate11008-seq4096-bf16``.

Rules, in order, for each config key (sorted, so the outcome never depends on the
order a script wrote them in):

* a dtype key sets the dtype (normalized through ``data/dtypes.json``);
* the key the x sweeps is the x: the x value wins; a different non-null config
  value (Liger's newer sweeps record the sweep's upper bound there) is kept as a
  setting under its own name;
* a known shape name with a scalar value becomes a parameter; if another key already
  gave that parameter a different value (``seq_len`` beside x ``T``), it is kept as
  a setting instead — nothing is dropped;
* a known setting name goes to settings under its raw name;
* anything else is unknown: an integer becomes a shape parameter under its own
  lower-cased name, anything else a setting, each with a warning naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from bench_adapters.liger.catalog import Catalog
from bench_adapters.liger.names import slug, value_slug

Scalar = int | float | str | bool
_MAX_SAFE_INTEGER = 2**53 - 1
#: ``warn(key, message)``: the key dedupes, so each unknown thing is named once.
Warn = Callable[[tuple[str, ...], str], None]


@attrs.frozen
class WorkloadShape:
    """A row's workload, before it is wrapped into a record."""

    parameters: dict[str, Scalar]
    settings: dict[str, Any]
    dtype: str
    #: ``batch8-hidden4096-intermediate11008-seq4096-bf16``
    slug: str


def describe_workload(
    kernel: str,
    x_name: str,
    x_value: Scalar,
    config: Mapping[str, Any],
    catalog: Catalog,
    warn: Warn,
) -> WorkloadShape:
    """Normalize a row's x and config into parameters, settings, dtype and slug."""
    info = catalog.kernels.get(kernel)
    overrides = info.parameters if info is not None else {}

    def shape_name(raw: str) -> str | None:
        return overrides.get(raw) or catalog.shape_names.get(raw)

    parameters: dict[str, Scalar] = {}
    settings: dict[str, Any] = {}
    dtype_value: Any = None
    has_dtype = False

    x_param = shape_name(x_name)
    if x_param is None:
        x_param = slug(x_name)
        warn(
            ("parameter", x_name),
            f"unknown parameter {x_name!r} (the x of kernel {kernel!r}): "
            f"kept as shape parameter {x_param!r}",
        )
    parameters[x_param] = x_value

    for key in sorted(config):
        value = config[key]
        if key in catalog.dtype_keys:
            dtype_value, has_dtype = value, True
            continue
        if key == x_name:
            if value is not None and value != x_value:
                settings[key] = value
            continue
        name = shape_name(key)
        if name is not None:
            if _is_scalar(value) and _claim(parameters, name, value):
                continue
            settings[key] = value
            continue
        if key in catalog.setting_names:
            settings[key] = value
            continue
        if isinstance(value, int) and not isinstance(value, bool):
            name = slug(key)
            if _claim(parameters, name, value):
                warn(
                    ("parameter", key),
                    f"unknown parameter {key!r} (kernel {kernel!r}): kept as shape parameter "
                    f"{name!r}",
                )
                continue
        settings[key] = value
        warn(
            ("parameter", key),
            f"unknown parameter {key!r} (kernel {kernel!r}): kept as a setting",
        )

    dtype = _dtype(kernel, dtype_value, has_dtype, catalog, warn)
    ordered = {name: parameters[name] for name in sorted(parameters)}
    parts = [name + _slug_value(ordered[name]) for name in ordered]
    parts.append(dtype)
    return WorkloadShape(
        parameters=ordered,
        settings={key: settings[key] for key in sorted(settings)},
        dtype=dtype,
        slug="-".join(parts),
    )


def _is_scalar(value: Any) -> bool:
    return isinstance(value, (int, float, str, bool))


def _claim(parameters: dict[str, Scalar], name: str, value: Scalar) -> bool:
    """Set ``parameters[name]`` unless it holds another value; True if it now holds ``value``."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= _MAX_SAFE_INTEGER:
        value = int(value)  # 4096.0 is the shape 4096; 1e16 stays a number the schema refuses
    if name in parameters:
        held = parameters[name]
        return held == value and type(held) is type(value)
    parameters[name] = value
    return True


def _slug_value(value: Scalar) -> str:
    """How a value follows its name in the slug: numbers directly (``seq4096``)."""
    if isinstance(value, bool):
        return "=true" if value else "=false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    return "=" + value_slug(value)


def _dtype(kernel: str, value: Any, present: bool, catalog: Catalog, warn: Warn) -> str:
    if not present or value is None:
        info = catalog.kernels.get(kernel)
        if info is not None and info.default_dtype:
            return info.default_dtype
        fallback = catalog.unspecified_dtype
        warn(
            ("dtype-missing", kernel),
            f"kernel {kernel!r}: no dtype in the config and no default in the catalog: "
            f"workload dtype {fallback!r}",
        )
        return fallback
    text = value if isinstance(value, str) else str(value)
    known = catalog.dtypes.get(text) or catalog.dtypes.get(text.strip().lower())
    if known is not None:
        return known
    derived = slug(text.strip().removeprefix("torch."))
    warn(("dtype", text), f"unknown dtype {text!r}: kept as {derived!r}")
    return derived
