"""GPU names, as drivers report them, read into ExecutionEnvironment hardware.

``torch.cuda.get_device_name()`` and ``cudaGetDeviceProperties`` give strings like
``NVIDIA A100-SXM4-80GB``, ``NVIDIA H100 80GB HBM3`` or ``Quadro GV100``: a vendor
word, a model, and often a form factor. One catalog (``data/gpus.json``) lists the
models for every importer, so that an H100 imported from Liger's CSV, from KernelBench
and from nvbench is the same product with the same form factor. A name no model
matches still becomes hardware — the vendor if a vendor word or product-line word
names it, else ``unknown``, and the full name as the product — but never with a
guessed form factor or architecture (the caller warns).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Protocol

import attrs

from bench_adapters.common import catalogdata
from bench_adapters.common.catalogdata import CatalogError

_MODEL_ENDS = frozenset(" -_/(")
_FORM_FACTOR_TRIM = " -_/"


@attrs.frozen
class Product:
    """One catalog GPU product: the model strings that name it and what they map to."""

    vendor: str
    product: str
    models: tuple[str, ...]
    architecture: str | None


@attrs.frozen
class Vendor:
    """A GPU vendor, the words that name it, and product-line words that imply it."""

    vendor: str
    names: tuple[str, ...]
    families: tuple[str, ...]


class GpuTables(Protocol):
    """What :func:`resolve_gpu` reads: the Liger catalog and :class:`GpuCatalog` alike."""

    @property
    def vendors(self) -> tuple[Vendor, ...]: ...

    @property
    def models(self) -> tuple[tuple[str, Product], ...]: ...


@attrs.frozen
class GpuCatalog:
    """The GPU catalog: vendors, and every (model, product) pair, longest model first."""

    vendors: tuple[Vendor, ...]
    models: tuple[tuple[str, Product], ...]


@attrs.frozen
class Hardware:
    """What a GPU name resolves to."""

    #: The ``spec.hardware`` object, in the seeds' member order.
    spec: dict[str, Any]
    #: The name without its vendor word (``A100-SXM4-80GB``), for titles.
    short_name: str
    #: False when no catalog model matched (the caller warns).
    known: bool
    #: How the vendor was found: ``name`` (a vendor word), ``family`` (a product-line
    #: word such as ``Tesla``), ``catalog`` (the model alone) or None (unknown).
    vendor_from: str | None = None


@functools.cache
def load_gpus() -> GpuCatalog:
    """The packaged GPU catalog (read once per process)."""
    data = catalogdata.load_data("bench_adapters.common", "gpus.json")
    vendors = []
    for index, entry in enumerate(data.get("vendors", [])):
        where = f"gpus.json/vendors/{index}"
        entry = catalogdata.expect_object(entry, where)
        vendors.append(
            Vendor(
                vendor=catalogdata.expect_str(entry.get("vendor"), f"{where}/vendor"),
                names=catalogdata.str_list(entry.get("names", []), f"{where}/names"),
                families=catalogdata.str_list(entry.get("families", []), f"{where}/families"),
            )
        )
    models: list[tuple[str, Product]] = []
    for index, entry in enumerate(data.get("products", [])):
        where = f"gpus.json/products/{index}"
        entry = catalogdata.expect_object(entry, where)
        product = Product(
            vendor=catalogdata.expect_str(entry.get("vendor"), f"{where}/vendor"),
            product=catalogdata.expect_str(entry.get("product"), f"{where}/product"),
            models=catalogdata.str_list(entry.get("models"), f"{where}/models"),
            architecture=catalogdata.optional_str(
                entry.get("architecture"), f"{where}/architecture"
            ),
        )
        models.extend((model, product) for model in product.models)
    seen: dict[str, str] = {}
    for model, product in models:
        key = model.casefold()
        if key in seen and seen[key] != product.product:
            raise CatalogError(f"catalog gpus.json: model {model!r} names two products")
        seen[key] = product.product
    # Longest model first, so "A100" never shadows "A100X" and "L40" never "L40S".
    models.sort(key=lambda pair: (-len(pair[0]), pair[0]))
    return GpuCatalog(vendors=tuple(vendors), models=tuple(models))


def resolve_gpu(name: str, catalog: GpuTables | None = None) -> Hardware:
    """Split ``name`` into vendor, product, form factor and architecture."""
    tables: GpuTables = catalog if catalog is not None else load_gpus()
    vendor, rest, vendor_from = _vendor_of(name, tables)
    folded = rest.casefold()
    for model, product in tables.models:
        if vendor is not None and product.vendor != vendor:
            continue
        key = model.casefold()
        if folded == key or (folded.startswith(key) and folded[len(key)] in _MODEL_ENDS):
            hardware: dict[str, Any] = {"vendor": product.vendor, "product": product.product}
            form_factor = rest[len(model) :].strip(_FORM_FACTOR_TRIM)
            if form_factor:
                hardware["formFactor"] = form_factor
            if product.architecture:
                hardware["architecture"] = product.architecture
            return Hardware(
                spec=hardware, short_name=rest, known=True, vendor_from=vendor_from or "catalog"
            )
    return Hardware(
        spec={"vendor": vendor or "unknown", "product": name},
        short_name=rest,
        known=False,
        vendor_from=vendor_from,
    )


def resolve_gpu_warning(
    name: str,
    warn: Callable[[str, tuple[str, ...]], None],
    where: str = "",
    lacks: str = "form factor",
) -> Hardware:
    """:func:`resolve_gpu` of ``name``, with a warning (``warn(message, key)``, once per
    GPU) when the catalog does not know it: the record then holds the name as the
    product, and not what the catalog would have added (``lacks``). ``where`` starts
    the message (a file and a pointer, ``path: /pointer: ``)."""
    resolved = resolve_gpu(name)
    if not resolved.known:
        warn(
            f"{where}GPU {name!r} is not in the GPU catalog: its environment records the name"
            f" as the product, with no {lacks}",
            ("gpu", name),
        )
    return resolved


def _vendor_of(name: str, tables: GpuTables) -> tuple[str | None, str, str | None]:
    """The vendor a name states, the name without the vendor word, and how it was found."""
    folded = name.casefold()
    for vendor in tables.vendors:
        for word in vendor.names:
            prefix = word.casefold() + " "
            if folded.startswith(prefix) and len(name) > len(prefix):
                return vendor.vendor, name[len(prefix) :].lstrip(), "name"
    for vendor in tables.vendors:
        for word in vendor.families:
            if folded.startswith(word.casefold() + " "):
                return vendor.vendor, name, "family"
    return None, name, None
