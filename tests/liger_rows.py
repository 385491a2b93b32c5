"""Liger CSV rows for the import and export tests: one good row, and files built from it.

The row is an ``rms_norm`` speed row as Liger's harness writes it; :func:`row` changes
any cells by name, :func:`csv_text` puts rows under Liger's header the way Liger's
``csv.DictWriter`` does (``\\r\\n``, minimal quoting).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path

from bench_adapters.liger import LIGER_HEADER

HEADER = ",".join(LIGER_HEADER)
CELLS = {
    "kernel_name": "rms_norm",
    "kernel_provider": "liger",
    "kernel_operation_mode": "forward",
    "metric_name": "speed",
    "metric_unit": "ms",
    "x_name": "H",
    "x_label": "hidden size",
    "x_value": "4096",
    "y_value_50": "0.05",
    "y_value_20": "0.049",
    "y_value_80": "0.051",
    "extra_benchmark_config_str": '{"M": 2048, "dtype": "torch.bfloat16"}',
    "gpu_name": "NVIDIA H100 80GB HBM3",
    "timestamp": "2025-01-10 08:00:00",
    "liger_version": "0.5.2",
}


def encode(cells: Sequence[str], quoting: int = csv.QUOTE_MINIMAL) -> str:
    """One record as Python's csv module writes it, without a line ending."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n", quoting=quoting).writerow(cells)
    return buffer.getvalue()[:-2]


def row(**changes: str) -> str:
    """The good row with some cells changed, as a CSV line (no line ending)."""
    cells = {**CELLS, **changes}
    return encode([cells[name] for name in LIGER_HEADER])


def good_rows(count: int) -> list[str]:
    """``count`` distinct good rows (x = 1024, 2048, ...)."""
    return [row(x_value=str(1024 * (i + 1))) for i in range(count)]


def csv_text(rows: Sequence[str], ending: str = "\r\n") -> str:
    """Liger's header and ``rows``, each line ended with ``ending``."""
    return "".join(line + ending for line in [HEADER, *rows])


def write_csv(path: Path, rows: Sequence[str], ending: str = "\r\n") -> Path:
    path.write_bytes(csv_text(rows, ending).encode("utf-8"))
    return path
