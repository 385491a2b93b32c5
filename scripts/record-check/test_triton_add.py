"""A plain Triton kernel through the ``kernel_bench`` fixture: the recorder's GPU check.

Run by ``scripts/device-gpu-check`` (never by the project's own test suite, which
collects only ``tests/``)::

    python -m pytest -o addopts= -p bench_adapters.recording.pytest_plugin \\
        scripts/record-check/test_triton_add.py --kernelindex-out DIR

Without torch, triton or CUDA the tests skip with the reason. A kernel that fails
Triton's compile is recorded by the fixture as a failed run, with the compiler's
reason.
"""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch", reason="the Triton check needs torch")
triton = pytest.importorskip("triton", reason="the Triton check needs triton")
tl = pytest.importorskip("triton.language")

SIZE = 1 << 24  # 16 Mi elements: 64 MiB per fp32 tensor, well past the L2 cache
BLOCK = 1024


# No annotations but tl.constexpr: Triton reads a @jit function's annotations as names
# of globals, and `Any` is not one it may use (a CompilationError).
@triton.jit  # type: ignore[misc]
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):  # type: ignore[no-untyped-def]
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def triton_add(x: Any, y: Any) -> Any:
    """``x + y`` by the Triton kernel above."""
    out = torch.empty_like(x)
    n = out.numel()
    _add_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK_SIZE=BLOCK)
    return out


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_triton_add_matches_torch_and_is_recorded(kernel_bench: Any, dtype: str) -> None:
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    generator = torch.Generator(device="cuda").manual_seed(0)
    kind = getattr(torch, dtype)
    x = torch.randn(SIZE, device="cuda", generator=generator).to(kind)
    y = torch.randn(SIZE, device="cuda", generator=generator).to(kind)
    recording = kernel_bench.measure(triton_add, x, y, kernel="vector_add", reference=torch.add)
    assert recording.status == "passed"


def test_torch_add_beside_it(kernel_bench: Any) -> None:
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    x = torch.randn(SIZE, device="cuda")
    kernel_bench.measure(torch.add, x, x, kernel="vector_add")
