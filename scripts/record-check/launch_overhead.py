"""How much of a short kernel's do_bench median is the host's launch path, not the GPU.

Run by ``scripts/device-gpu-check`` on a lent GPU machine; prints one JSON object.
do_bench records a CUDA event, then the call, then another event: when the call's
host side (Python, the autograd engine's hand-off to its device thread, the launch)
takes longer than its kernels, the GPU idles between the events and the median
measures the host. Timed here with scripts/gpu-check's settings (warmup 25 ms, rep
100 ms, the L2 cache flushed before each call):

* ``empty``: a call that launches nothing;
* ``one_kernel``: one tiny elementwise kernel (``x.add_(1)`` on 1 element);
* ``tiny_backward``: ``torch.autograd.backward`` of a 1-element graph;
* ``relu_squared_backward_<provider>``: the ReLU² seed's backward (4096 x 512 bf16)
  as gpu-check times it, and ``..._cuda_graph``: the same pass captured in a CUDA
  graph and replayed, which leaves the kernels' own time.

A figure that could not be taken is written as its error, one line, and the rest go on.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import torch
from triton.testing import do_bench

WARMUP, REP = 25, 100


def median_ms(call: Callable[[], Any]) -> float:
    return float(do_bench(call, warmup=WARMUP, rep=REP, return_mode="median"))


def relu_squared(provider: str) -> Callable[[torch.Tensor], torch.Tensor]:
    if provider == "liger":
        from liger_kernel.transformers.relu_squared import LigerReLUSquared

        return LigerReLUSquared()  # type: ignore[no-any-return]
    return lambda x: torch.relu(x).square()


def backward_figures(provider: str) -> dict[str, float]:
    function = relu_squared(provider)
    generator = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(4096, 512, device="cuda", dtype=torch.bfloat16, generator=generator)
    x.requires_grad_(True)
    out = function(x)
    upstream = torch.randn(out.shape, device="cuda", generator=generator).to(out.dtype)

    def backward() -> None:
        x.grad = None
        torch.autograd.backward(out, upstream, retain_graph=True)

    figures = {f"relu_squared_backward_{provider}": median_ms(backward)}
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            backward()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    x.grad = None
    with torch.cuda.graph(graph):
        torch.autograd.backward(out, upstream, retain_graph=True)
    figures[f"relu_squared_backward_{provider}_cuda_graph"] = median_ms(graph.replay)
    return figures


def main() -> None:
    figures: dict[str, float] = {}
    errors: dict[str, str] = {}
    one = torch.zeros(1, device="cuda")
    leaf = torch.ones(1, device="cuda", requires_grad=True)
    tiny = (leaf * 2).sum()
    steps: dict[str, Callable[[], dict[str, float]]] = {
        "empty": lambda: {"empty": median_ms(lambda: None)},
        "one_kernel": lambda: {"one_kernel": median_ms(lambda: one.add_(1))},
        "tiny_backward": lambda: {
            "tiny_backward": median_ms(lambda: torch.autograd.backward(tiny, retain_graph=True))
        },
        "torch": lambda: backward_figures("torch"),
        "liger": lambda: backward_figures("liger"),
    }
    for name, step in steps.items():
        try:
            figures.update(step())
        except Exception as error:  # one figure lost must not lose the others
            errors[name] = f"{type(error).__name__}: {error}".replace("\n", " ")
    json.dump(
        {"unit": "ms", "do_bench": {"warmup": WARMUP, "rep": REP}, "median": figures}
        | ({"errors": errors} if errors else {}),
        sys.stdout,
        indent=2,
    )
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
