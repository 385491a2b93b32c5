"""One small setup function per kernel: inputs and the callable, for any provider.

A setup function takes a :class:`SetupContext` (the workload's normalized parameters
and settings, the provider, and seeded factories for tensors) and returns a
:class:`Case`: the forward callable and the tensors that receive gradients. Passes,
correctness checks and timing are generic (:mod:`~bench_adapters.liger_bench.torch_backend`),
so a new kernel is a catalog entry in ``data/kernels.json`` plus one function here,
registered in :data:`SETUPS`.

Rules every setup keeps, so that providers are compared on identical inputs:

* draw every random input *before* branching on the provider, in a fixed order (the
  context's generator is seeded the same for every provider);
* build modules through :meth:`SetupContext.module`, given a function that makes the
  module (it runs on the ``meta`` device), which fills parameters by name from the
  seed (the providers' parameter names agree);
* import torch, Liger and transformers inside the function, never at module level.
"""

from __future__ import annotations

import functools
import importlib
import math
import types
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from bench_adapters.liger_bench import references

#: Workload dtype slug -> torch dtype attribute.
TORCH_DTYPES = {"fp64": "float64", "fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}


@attrs.frozen
class Case:
    """A provider ready to run: ``forward()`` returns a tensor or a tuple of tensors."""

    forward: Callable[[], Any]
    #: (name, tensor) for every input and parameter that gets a gradient.
    leaves: Sequence[tuple[str, Any]]


class SetupError(Exception):
    """The workload lacks a parameter the kernel needs, or has an unusable value."""


@attrs.define(eq=False, kw_only=True)
class SetupContext:
    """What a setup function may use: the workload, the provider, seeded tensors."""

    torch: Any
    device: Any
    #: The workload's dtype as it names it (``bf16``); :attr:`dtype` is torch's.
    dtype_name: str = attrs.field(alias="dtype")
    parameters: Mapping[str, Any]
    settings: Mapping[str, Any]
    provider: str
    seed: int
    dtype: Any = attrs.field(init=False)
    generator: Any = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        name = TORCH_DTYPES.get(self.dtype_name)
        if name is None:
            raise SetupError(
                f"dtype {self.dtype_name!r} is not supported here"
                f" (supported: {', '.join(TORCH_DTYPES)})"
            )
        self.dtype = getattr(self.torch, name)
        self.generator = self.torch.Generator(device=self.device)
        self.generator.manual_seed(self.seed)

    def param(self, name: str, default: int | None = None) -> int:
        """A positive integer shape parameter (normalized name: batch, seq, hidden, ...)."""
        value = self.parameters.get(name, default)
        if value is None:
            known = ", ".join(sorted(self.parameters)) or "none"
            raise SetupError(f"the workload has no parameter {name!r} (it has: {known})")
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise SetupError(f"parameter {name!r} must be a positive integer, not {value!r}")
        return value

    def setting(self, name: str, default: Any) -> Any:
        """A non-shape setting (hidden_act, bias, loss weights, ...), or its default."""
        return self.settings.get(name, default)

    def randn(self, *shape: int, requires_grad: bool = False) -> Any:
        """Standard-normal tensor in the workload's dtype, from the seeded generator."""
        value = self.torch.randn(
            shape, generator=self.generator, device=self.device, dtype=self.torch.float32
        )
        return value.to(self.dtype).requires_grad_(requires_grad)

    def rand(self, *shape: int, requires_grad: bool = False) -> Any:
        """Uniform [0, 1) tensor in the workload's dtype, from the seeded generator."""
        value = self.torch.rand(
            shape, generator=self.generator, device=self.device, dtype=self.torch.float32
        )
        return value.to(self.dtype).requires_grad_(requires_grad)

    def randint(self, high: int, *shape: int) -> Any:
        """Integer tensor in [0, high), from the seeded generator."""
        return self.torch.randint(
            0, high, shape, generator=self.generator, device=self.device, dtype=self.torch.long
        )

    def module(self, build: Callable[[], Any], *, trainable: bool = True) -> Any:
        """The module ``build()`` makes, on the device in the workload's dtype, filled by name.

        ``build`` runs under ``torch.device("meta")``: no weight is allocated or
        initialised on the CPU (in fp32, single-threaded, a 4096×128256 layer costs
        seconds, only to be overwritten). The module is cast to the workload's dtype
        while still on ``meta``, moved with ``to_empty(device=...)``, then every
        parameter is drawn uniform in ±1/sqrt(fan_in) (torch.nn.Linear's default
        range) from a generator seeded by the run seed and the parameter's name, so
        providers whose parameter names agree get identical weights, whatever order
        they create them in.

        ``to_empty`` leaves buffers uninitialised and nothing here can fill them, so a
        module with buffers is built again directly on the device instead.
        """
        torch = self.torch
        with torch.device("meta"):
            module = build()
        if any(True for _ in module.buffers()):
            with torch.device(self.device):
                module = build()
            module = module.to(dtype=self.dtype)
        else:
            module = module.to(dtype=self.dtype).to_empty(device=self.device)
        with torch.no_grad():
            for name, parameter in module.named_parameters():
                generator = torch.Generator(device=self.device)
                generator.manual_seed(self.seed * 1_000_003 + zlib.crc32(name.encode()))
                fan_in = parameter.shape[-1] if parameter.dim() > 1 else parameter.shape[0]
                bound = 1.0 / math.sqrt(max(1, fan_in))
                values = torch.rand(
                    tuple(parameter.shape),
                    generator=generator,
                    device=self.device,
                    dtype=torch.float32,
                )
                parameter.copy_((values * 2 - 1) * bound)
                parameter.requires_grad_(trainable)
        return module


def _import(name: str) -> Any:
    return importlib.import_module(name)


def geglu(ctx: SetupContext) -> Case:
    """GeGLU MLP: ``x`` of shape (batch, seq, hidden) through gate/up/down projections."""
    batch, seq = ctx.param("batch"), ctx.param("seq")
    hidden, intermediate = ctx.param("hidden"), ctx.param("intermediate")
    act = str(ctx.setting("hidden_act", "gelu_pytorch_tanh"))
    x = ctx.randn(batch, seq, hidden, requires_grad=True)
    build: Callable[[], Any]
    if ctx.provider == "liger":
        geglu_module = _import("liger_kernel.transformers.geglu")
        config = types.SimpleNamespace(
            hidden_size=hidden, intermediate_size=intermediate, hidden_act=act
        )
        build = functools.partial(geglu_module.LigerGEGLUMLP, config)
    elif ctx.provider == "huggingface":
        llama_config = _import("transformers.models.llama.configuration_llama")
        llama = _import("transformers.models.llama.modeling_llama")
        # One attention head: irrelevant to the MLP, and valid for any hidden size
        # (newer transformers check hidden_size % num_attention_heads).
        config = llama_config.LlamaConfig(
            hidden_size=hidden,
            intermediate_size=intermediate,
            hidden_act=act,
            num_attention_heads=1,
            num_key_value_heads=1,
        )
        build = functools.partial(llama.LlamaMLP, config)
    else:
        build = functools.partial(references.geglu_mlp, hidden, intermediate, act)
    module = ctx.module(build)
    leaves = [("x", x), *module.named_parameters()]
    return Case(forward=lambda: module(x), leaves=leaves)


def llama4_rope(ctx: SetupContext) -> Case:
    """Llama 4 RoPE on q (batch, seq, q_heads, head_dim) and k (…, kv_heads, …)."""
    seq, hidden = ctx.param("seq"), ctx.param("hidden")
    q_heads, kv_heads = ctx.param("q_heads"), ctx.param("kv_heads")
    batch = ctx.param("batch", 1)
    if hidden % q_heads or (hidden // q_heads) % 2:
        raise SetupError(f"hidden {hidden} / q_heads {q_heads} must be an even head_dim")
    head_dim = hidden // q_heads
    theta = float(ctx.setting("rope_theta", 10000.0))
    q = ctx.randn(batch, seq, q_heads, head_dim, requires_grad=True)
    k = ctx.randn(batch, seq, kv_heads, head_dim, requires_grad=True)
    freqs_cis = references.llama4_freqs_cis(seq, head_dim, theta, ctx.device)
    apply: Callable[[Any, Any, Any], Any]
    if ctx.provider == "liger":
        apply = _import("liger_kernel.transformers.llama4_rope").liger_llama4_text_rotary_pos_emb
    elif ctx.provider == "huggingface":
        apply = _import("transformers.models.llama4.modeling_llama4").apply_rotary_emb
    else:
        apply = references.llama4_rope
    return Case(forward=lambda: apply(q, k, freqs_cis), leaves=[("q", q), ("k", k)])


def distill_cosine_loss(ctx: SetupContext) -> Case:
    """Fused linear cosine distillation loss: student (tokens, hidden/2), teacher (tokens, hidden).

    Shapes as Liger's distillation benchmarks build them: a student of half the
    teacher's hidden size, both projecting to ``vocab``; only the student gets gradients.
    """
    tokens, hidden, vocab = ctx.param("tokens"), ctx.param("hidden"), ctx.param("vocab")
    bias = bool(ctx.setting("bias", False))
    options: dict[str, Any] = {
        "weight_hard_loss": float(ctx.setting("weight_hard_loss", 0.5)),
        "weight_soft_loss": float(ctx.setting("weight_soft_loss", 0.5)),
        "beta": float(ctx.setting("beta", 0.5)),
        "ignore_index": int(ctx.setting("ignore_index", -100)),
        "temperature": float(ctx.setting("temperature", 1.0)),
    }
    student_input = ctx.rand(tokens, hidden // 2, requires_grad=True)
    teacher_input = ctx.rand(tokens, hidden)
    target = ctx.randint(vocab, tokens)
    linear = ctx.torch.nn.Linear
    student = ctx.module(functools.partial(linear, hidden // 2, vocab, bias=bias))
    teacher = ctx.module(functools.partial(linear, hidden, vocab, bias=bias), trainable=False)
    loss: Callable[..., Any]
    if ctx.provider == "liger":
        cosine = _import("liger_kernel.chunked_loss.cosine_similarity_loss")
        loss = cosine.LigerFusedLinearCosineSimilarityLoss(**options)
    else:
        loss = references.cosine_distillation_loss(**options)

    def forward() -> Any:
        return loss(
            student_input,
            student.weight,
            teacher_input,
            teacher.weight,
            target,
            student.bias,
            teacher.bias,
        )

    leaves = [("student_input", student_input), ("student_weight", student.weight)]
    if bias:
        leaves.append(("student_bias", student.bias))
    return Case(forward=forward, leaves=leaves)


def relu_squared(ctx: SetupContext) -> Case:
    """ReLU² on ``x`` of shape (rows, hidden)."""
    rows, hidden = ctx.param("rows"), ctx.param("hidden")
    x = ctx.randn(rows, hidden, requires_grad=True)
    function: Callable[[Any], Any]
    if ctx.provider == "liger":
        function = _import("liger_kernel.transformers.relu_squared").LigerReLUSquared()
    else:
        function = references.relu_squared
    return Case(forward=lambda: function(x), leaves=[("x", x)])


#: Catalog ``setup`` name -> function.
SETUPS: Mapping[str, Callable[[SetupContext], Case]] = {
    "geglu": geglu,
    "llama4_rope": llama4_rope,
    "distill_cosine_loss": distill_cosine_loss,
    "relu_squared": relu_squared,
}
