"""Workload and Implementation records for :func:`~bench_adapters.recording.recorder.record`.

A workload is what was computed: built here from the call's arguments — each tensor
(anything with ``shape`` and ``dtype``) as its shape (``4096x1024``), each plain number,
string or flag as itself — and the dtype of the first tensor, spelled as the format's
dtype slugs (``bf16``, through the Liger importer's dtype table: one definition). An
implementation is who computed it: a package name and version (the installed one,
read from package metadata, when not given) and the callable measured.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bench_adapters.common.names import record_name, slug
from bench_adapters.common.records import workload_record
from bench_adapters.liger.catalog import load_catalog
from kernelindex_sdk import models as m

#: The workload dtype of a call with no tensor in it.
NO_TENSOR_DTYPE = "none"


def _is_tensor(value: Any) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype")


def dtype_slug(dtype: Any) -> str:
    """``torch.bfloat16`` → ``bf16`` (the importer's table), else its name as a slug."""
    text = str(dtype)
    known = load_catalog().dtypes
    return known.get(text) or known.get(text.lower()) or slug(text.removeprefix("torch."))


def workload_for(
    kernel: str,
    args: Sequence[Any] = (),
    kwargs: Mapping[str, Any] | None = None,
    *,
    pass_: str = "forward",
    settings: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The Workload of ``kernel`` called with ``args`` and ``kwargs``."""
    parameters: dict[str, Any] = {}
    dtype: str | None = None
    named = [(f"arg{i}", value) for i, value in enumerate(args)]
    named += list((kwargs or {}).items())
    for name, value in named:
        key = slug(name)
        if _is_tensor(value):
            parameters[key] = "x".join(str(int(n)) for n in value.shape) or "scalar"
            this = dtype_slug(value.dtype)
            if dtype is None:
                dtype = this
            elif this != dtype:
                parameters[f"{key}_dtype"] = this
        elif isinstance(value, bool | str) or (
            isinstance(value, int | float) and abs(value) <= 2**53 - 1
        ):
            parameters[key] = value
    spec = m.WorkloadSpec(
        kernel=slug(kernel),
        pass_=pass_,  # type: ignore[arg-type]  # checked by validate, as every field
        parameters=dict(sorted(parameters.items())),
        dtype=dtype or NO_TENSOR_DTYPE,
        settings=dict(settings) if settings else None,
    )
    shape = "-".join(f"{k}{v}" for k, v in spec.parameters.items())
    return workload_record(
        record_name(f"{kernel}-{pass_}-{shape}-{spec.dtype}"),
        f"{kernel} · {pass_} · {shape or 'no parameters'} · {spec.dtype}",
        spec,
    )


def entry_point_of(fn: Callable[..., Any]) -> str:
    """``package.module.function`` of a callable (its qualified name where it has one)."""
    module = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if name is None:
        name = type(fn).__qualname__
    return f"{module}.{name}" if module else str(name)


def implementation_for(
    package: str | None,
    version: str | None = None,
    *,
    provider: str | None = None,
    fn: Callable[..., Any] | None = None,
    backend: str | None = None,
    repository: str | None = None,
) -> dict[str, Any]:
    """The Implementation of ``fn`` from ``package`` (its installed version if not given).

    A package that is not installed and has no version given is recorded without a
    version: never guessed.
    """
    if package and version is None:
        try:
            version = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            version = None
    spec = m.ImplementationSpec(
        provider=slug(provider or package or "unknown"),
        backend=slug(backend) if backend else None,
        package=m.Package(package, version or None) if package else None,
        entry_point=entry_point_of(fn)[:4096] if fn is not None else None,
        source=m.SourceLocation(repository) if repository else None,
    )
    title = spec.provider + (f" · {package} {version}" if package and version else "")
    name = f"impl-{spec.provider}" + (f"-{version}" if version else "")
    if fn is not None:
        name += f"-{getattr(fn, '__name__', 'fn')}"
    metadata = m.Metadata(name=record_name(name), title=title)
    return dict(m.unstructure(m.Implementation(metadata=metadata, spec=spec)))
