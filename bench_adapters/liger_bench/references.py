"""Plain-PyTorch formulations of the seed kernels: the ``torch`` provider.

Liger compares itself with PyTorch (ReLU², the distillation loss) or Hugging Face
(GeGLU MLP, Llama 4 RoPE). Hugging Face's code needs ``transformers``; these eager
formulations compute the same mathematics with torch alone, so the correctness gate
always has a reference where torch is installed, and ``--provider torch`` gives a
speed-up against eager PyTorch. Each follows the computation it stands for step by
step (same dtype at each step), and says which.

torch is imported inside each function, so importing this module needs no torch.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Hugging Face activation names that mean GELU with the tanh approximation.
TANH_GELU = frozenset({"gelu_pytorch_tanh", "gelu_new", "gelu_fast"})


def _torch() -> Any:
    return importlib.import_module("torch")


def geglu_mlp(hidden: int, intermediate: int, hidden_act: str) -> Any:
    """``down(act(gate(x)) * up(x))``, as Hugging Face's ``LlamaMLP`` computes it.

    Parameter names (``gate_proj``, ``up_proj``, ``down_proj``) match LigerGEGLUMLP's
    and LlamaMLP's, so all three providers get identical weights by name.
    """
    torch = _torch()
    approximate = "tanh" if hidden_act in TANH_GELU else "none"
    if hidden_act not in TANH_GELU and hidden_act != "gelu":
        raise ValueError(f"GeGLU reference: unsupported hidden_act {hidden_act!r}")

    class GeGLUMLP(torch.nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.gate_proj = torch.nn.Linear(hidden, intermediate, bias=False)
            self.up_proj = torch.nn.Linear(hidden, intermediate, bias=False)
            self.down_proj = torch.nn.Linear(intermediate, hidden, bias=False)

        def forward(self, x: Any) -> Any:
            gate = torch.nn.functional.gelu(self.gate_proj(x), approximate=approximate)
            return self.down_proj(gate * self.up_proj(x))

    return GeGLUMLP()


def llama4_freqs_cis(seq: int, head_dim: int, theta: float, device: Any) -> Any:
    """Complex rotations ``exp(i · pos · theta^(-2j/d))``, shape ``(1, seq, head_dim/2)``.

    The layout Llama4TextRotaryEmbedding returns (batch 1) and both apply functions take.
    """
    torch = _torch()
    exponents = torch.arange(0, head_dim, 2, device=device, dtype=torch.float32) / head_dim
    inverse = 1.0 / (theta**exponents)
    positions = torch.arange(seq, device=device, dtype=torch.float32)
    angles = torch.outer(positions, inverse)
    return torch.polar(torch.ones_like(angles), angles).unsqueeze(0)


def llama4_rope(xq: Any, xk: Any, freqs_cis: Any) -> tuple[Any, Any]:
    """Hugging Face's Llama 4 ``apply_rotary_emb``: complex multiply in float32, cast back."""
    torch = _torch()
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    rotation = freqs_cis[:, :, None, :]
    xq_out = torch.view_as_real(xq_ * rotation).flatten(3)
    xk_out = torch.view_as_real(xk_ * rotation).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def relu_squared(x: Any) -> Any:
    """``relu(x)²`` in eager PyTorch."""
    torch = _torch()
    return torch.square(torch.relu(x))


def cosine_distillation_loss(
    *,
    weight_hard_loss: float,
    weight_soft_loss: float,
    beta: float,
    ignore_index: int,
    temperature: float,
) -> Any:
    """The loss LigerFusedLinearCosineSimilarityLoss computes, unchunked.

    ``w_hard · CE(student logits) + w_soft · Σ beta · (1 − cos(norm(s/T), norm(t/T)))``,
    each term summed over the tokens whose target is not ``ignore_index`` and divided by
    their count; teacher logits carry no gradient; cross entropy in float32, the cosine
    term in the logits' dtype — the steps Liger's chunked implementation takes per chunk.
    """
    torch = _torch()
    functional = torch.nn.functional

    def loss(
        student_input: Any,
        student_weight: Any,
        teacher_input: Any,
        teacher_weight: Any,
        target: Any,
        student_bias: Any = None,
        teacher_bias: Any = None,
    ) -> Any:
        student = student_input @ student_weight.t()
        if student_bias is not None:
            student = student + student_bias
        with torch.no_grad():
            teacher = teacher_input @ teacher_weight.t()
            if teacher_bias is not None:
                teacher = teacher + teacher_bias
        valid = (target != ignore_index).sum().clamp_min(1)
        hard = functional.cross_entropy(
            student.float(), target, ignore_index=ignore_index, reduction="sum"
        )
        student = student / temperature
        teacher = teacher / temperature
        cosine = functional.cosine_similarity(
            functional.normalize(student, p=2, dim=-1),
            functional.normalize(teacher, p=2, dim=-1),
            dim=-1,
        )
        soft = (beta * (1 - cosine)).masked_fill(target == ignore_index, 0.0).sum()
        return weight_hard_loss * (hard / valid) + weight_soft_loss * (soft / valid)

    return loss
