"""GPU names, as the driver reports them, read into ExecutionEnvironment hardware.

``torch.cuda.get_device_name()`` gives strings like ``NVIDIA A100-SXM4-80GB`` or
``AMD Instinct MI300X``: a vendor word, a model, and often a form factor. The
catalog (``data/gpus.json``) lists the models; this module splits a name against it.
A name no model matches still becomes hardware — the vendor if a vendor word or
product-line word names it, else ``unknown``, and the full name as the product — but
never with a guessed form factor or architecture, and with a warning.
"""

from __future__ import annotations

from typing import Any

import attrs

from bench_adapters.liger.catalog import Catalog

_MODEL_ENDS = frozenset(" -_/(")
_FORM_FACTOR_TRIM = " -_/"


@attrs.frozen
class Hardware:
    """What a GPU name resolves to."""

    #: The ``spec.hardware`` object, in the seeds' member order.
    spec: dict[str, Any]
    #: The name without its vendor word (``A100-SXM4-80GB``), for titles.
    short_name: str
    #: False when no catalog model matched (the caller warns).
    known: bool


def resolve_gpu(name: str, catalog: Catalog) -> Hardware:
    """Split ``name`` into vendor, product, form factor and architecture."""
    vendor, rest = _vendor_of(name, catalog)
    folded = rest.casefold()
    for model, product in catalog.models:
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
            return Hardware(spec=hardware, short_name=rest, known=True)
    return Hardware(
        spec={"vendor": vendor or "unknown", "product": name},
        short_name=rest,
        known=False,
    )


def _vendor_of(name: str, catalog: Catalog) -> tuple[str | None, str]:
    """The vendor a name states, and the name without the vendor word."""
    folded = name.casefold()
    for vendor in catalog.vendors:
        for word in vendor.names:
            prefix = word.casefold() + " "
            if folded.startswith(prefix) and len(name) > len(prefix):
                return vendor.vendor, name[len(prefix) :].lstrip()
    for vendor in catalog.vendors:
        for word in vendor.families:
            if folded.startswith(word.casefold() + " "):
                return vendor.vendor, name
    return None, name
