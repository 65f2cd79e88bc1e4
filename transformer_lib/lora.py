"""LoRA: low-rank adapters for fine-tuning a frozen model (chapter 12; Hu et al. 2021, "LoRA: Low-Rank
Adaptation of Large Language Models").

A pretrained ``nn.Linear`` computes ``y = x W^T + b`` with ``W`` of shape ``(out, in)``. LoRA keeps
``W`` frozen and learns a low-rank change of it,

    ``W' = W + (alpha / r) B A``,   ``A``: ``(r, in)``,   ``B``: ``(out, r)``,   ``r << min(in, out)``,

so a layer trains ``r * (in + out)`` numbers instead of ``in * out``. ``B`` starts at zero, so the
adapted model starts as exactly the pretrained one; ``A`` starts random (here as in ``peft``'s
default: Kaiming-uniform with ``a = sqrt(5)``, ``nn.Linear``'s own initialisation, i.e. uniform in
``[-1/sqrt(in), 1/sqrt(in)]``). The scaling ``alpha / r`` (section 4.1 of the paper) keeps the size
of the update about the same when ``r`` changes, so the learning rate need not be tuned again.

After training, :meth:`LoRALinear.merge` adds ``(alpha / r) B A`` into ``W``: the merged model costs
exactly what the pretrained one does at inference (no extra matrix product). :func:`merge_lora`
does it for a whole model and removes the adapters.

* :class:`LoRALinear` wraps one ``nn.Linear``;
* :func:`add_lora` wraps the linear layers of a model whose names match, and freezes everything else;
* :func:`merge_lora` merges every adapter of a model into its weights and unwraps them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .finetune import count_trainable, freeze

__all__ = ["LoRALinear", "add_lora", "merge_lora", "DEFAULT_LORA_TARGETS"]

#: The attention projections of chapters 5-11 (``MultiHeadAttention``, ``GroupedQueryAttention``): ``W_Q, W_K,
#: W_V`` stacked in ``in_proj``, and ``W_O``. The paper adapts the attention weights only (section 4.2).
DEFAULT_LORA_TARGETS = ("in_proj", "out_proj")


class LoRALinear(nn.Module):
    """``base(x) + (alpha / r) * dropout(x) A^T B^T``: a frozen ``nn.Linear`` plus a trainable low-rank update.

    ``x``: ``(..., in_features)`` -> ``(..., out_features)``, like ``base``. ``A`` is ``(r, in_features)``,
    ``B`` is ``(out_features, r)`` (zeros at first: the layer starts equal to ``base``). ``dropout``
    applies to the adapter's input only (as ``peft``'s ``lora_dropout``). The base layer's
    parameters are frozen; ``A`` and ``B`` have its dtype and device.

    ``weight`` is the effective weight ``W + (alpha / r) B A`` (``W`` once merged) and ``bias`` the
    base's, so code that reads a linear layer's ``weight`` (e.g. ``MultiHeadAttention``'s
    cross-attention path) sees the adapted layer.
    """

    def __init__(self, base: nn.Linear, r: int = 8, alpha: float = 8.0, dropout: float = 0.0) -> None:
        super().__init__()
        if not isinstance(base, nn.Linear):
            raise TypeError(f"LoRALinear wraps an nn.Linear, got {type(base).__name__}")
        if not (isinstance(r, int) and r > 0):
            raise ValueError(f"rank r must be a positive int, got {r!r}")
        if alpha <= 0:
            raise ValueError(f"alpha must be > 0, got {alpha!r}")
        if not 0 <= dropout < 1:
            raise ValueError(f"dropout must be in [0, 1), got {dropout!r}")
        self.base = freeze(base)
        self.r, self.alpha, self.scaling = r, alpha, alpha / r
        self.in_features, self.out_features = base.in_features, base.out_features
        like = {"device": base.weight.device, "dtype": base.weight.dtype}
        self.lora_A = nn.Parameter(torch.empty(r, base.in_features, **like))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r, **like))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        self.dropout = nn.Dropout(dropout)
        self.merged = False

    def delta_weight(self) -> Tensor:
        """``(alpha / r) B A``: ``(out_features, in_features)``, the change LoRA makes to ``W``."""
        return self.scaling * (self.lora_B @ self.lora_A)

    @property
    def weight(self) -> Tensor:
        """The effective weight ``(out_features, in_features)``: ``W + (alpha / r) B A`` (``W`` once merged)."""
        return self.base.weight if self.merged else self.base.weight + self.delta_weight()

    @property
    def bias(self) -> Tensor | None:
        return self.base.bias

    def forward(self, x: Tensor) -> Tensor:
        """``(..., in_features) -> (..., out_features)``."""
        if x.size(-1) != self.in_features:
            raise ValueError(f"x must have shape (..., in_features={self.in_features}), got {tuple(x.shape)}")
        y = self.base(x)
        if self.merged:
            return y
        return y + F.linear(F.linear(self.dropout(x), self.lora_A), self.lora_B) * self.scaling

    @torch.no_grad()
    def merge(self) -> None:
        """Add ``(alpha / r) B A`` into the base weight; the forward pass is then the base layer's alone.
        Does nothing when already merged. (Train no further while merged: ``A`` and ``B`` no longer act.)"""
        if not self.merged:
            self.base.weight += self.delta_weight()
            self.merged = True

    @torch.no_grad()
    def unmerge(self) -> None:
        """Subtract ``(alpha / r) B A`` from the base weight again (exact up to rounding). Does nothing when not
        merged."""
        if self.merged:
            self.base.weight -= self.delta_weight()
            self.merged = False

    def extra_repr(self) -> str:
        return f"r={self.r}, alpha={self.alpha}, merged={self.merged}"


def _matches(name: str, targets: Sequence[str]) -> bool:
    """``name`` is one of ``targets`` or ends with ``"." + target`` (``peft``'s rule for ``target_modules``)."""
    return any(name == t or name.endswith("." + t) for t in targets)


def _tied_parameters(model: nn.Module) -> set[int]:
    """The ids of parameters that appear under more than one name (tied weights)."""
    seen: dict[int, int] = {}
    for _, p in model.named_parameters(remove_duplicate=False):
        seen[id(p)] = seen.get(id(p), 0) + 1
    return {key for key, n in seen.items() if n > 1}


def add_lora(model: nn.Module, target_names: Sequence[str] = DEFAULT_LORA_TARGETS, r: int = 8, alpha: float = 8.0,
             dropout: float = 0.0, train_also: Sequence[str] = ()) -> int:
    """Replace each ``nn.Linear`` of ``model`` whose name matches ``target_names`` by a :class:`LoRALinear`,
    in place; freeze every other parameter; return the number of trainable parameters.

    A name matches a target when it is the target or ends with ``"." + target`` (``"in_proj"`` matches
    ``blocks.layers.0.self_attention.in_proj``). ``train_also`` names submodules (same rule) whose
    parameters keep learning, e.g. ``("head",)`` for the new head of a :class:`~transformer_lib.finetune.
    GPTClassifier`. Raises ``ValueError`` when no linear layer matches (the message lists those there are),
    or when a target's weight is tied to another parameter (GPT's ``lm_head`` shares the token
    embedding: merging would change the embedding too).
    """
    if isinstance(target_names, str):
        raise TypeError(f"target_names must be a sequence of names, got the string {target_names!r}")
    linears = {name: m for name, m in model.named_modules() if isinstance(m, nn.Linear)
               and not isinstance(model.get_submodule(name.rpartition(".")[0]), LoRALinear)}
    chosen = [name for name in linears if _matches(name, target_names)]
    if not chosen:
        raise ValueError(f"no nn.Linear of the model matches target_names={list(target_names)}; "
                         f"its linear layers are {sorted(linears)}")
    tied = _tied_parameters(model)
    shared = [name for name in chosen if id(linears[name].weight) in tied]
    if shared:
        raise ValueError(f"the weights of {shared} are tied to another parameter: merging an adapter would change "
                         "both; leave them out of target_names")
    kept = [module for name, module in model.named_modules() if train_also and _matches(name, train_also)]
    if train_also and not kept:
        raise ValueError(f"no submodule of the model matches train_also={list(train_also)}")
    adapters = {name: LoRALinear(linears[name], r, alpha, dropout) for name in chosen}  # checks r, alpha, dropout
    freeze(model)
    for name, adapter in adapters.items():
        parent_name, _, child = name.rpartition(".")
        setattr(model.get_submodule(parent_name), child, adapter)
    for module in kept:
        module.requires_grad_(True)
    return count_trainable(model)


def merge_lora(model: nn.Module) -> nn.Module:
    """Merge every :class:`LoRALinear` of ``model`` into its base weight and put the plain ``nn.Linear`` back, in
    place; returns ``model``. The merged layers stay frozen (``requires_grad=False``)."""
    wrapped = [name for name, m in model.named_modules() if isinstance(m, LoRALinear)]
    if not wrapped:
        raise ValueError("the model has no LoRALinear to merge (add_lora adds them)")
    for name in wrapped:
        parent_name, _, child = name.rpartition(".")
        parent = model.get_submodule(parent_name)
        lora = getattr(parent, child)
        lora.merge()
        setattr(parent, child, lora.base)
    return model
