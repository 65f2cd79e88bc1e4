"""A classification head on a pretrained decoder (chapter 12): linear probe or full fine-tuning.

A language model pretrained on text (chapter 8's ``GPT``) already computes, at every position, a
vector that summarises the tokens before it. :class:`GPTClassifier` reads the vector of the
**last real token** of each sequence, the only position of a causal model that has seen the whole
input, and maps it to class scores with one new ``nn.Linear`` (Radford et al. 2018, section 3.2,
the classification set-up of GPT; ``transformers``' ``GPT2ForSequenceClassification`` pools the
same way).

Two ways to train it:

* **linear probe** (``freeze_body=True``): the pretrained body is frozen, only the head
  (``d_model * n_classes + n_classes`` numbers) learns; the probe measures what the body
  already knows;
* **full fine-tuning** (``freeze_body=False``): every weight learns, the body starting from
  its pretrained values.

Chapter 12's LoRA (:mod:`transformer_lib.lora`) is the middle way: a few trainable numbers inside
the frozen body. :func:`freeze` and :func:`count_trainable` serve all three.

Sequences are **right-padded** (real tokens first, then ``pad_id``): with a causal mask a real
token never attends to the padding after it, so padding changes nothing. Left padding would let
real tokens attend to pad tokens (the GPT has no padding mask) and is refused.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .models import GPT

__all__ = ["GPTClassifier", "freeze", "count_trainable", "last_token_index"]


def freeze(module: nn.Module) -> nn.Module:
    """Stop every parameter of ``module`` from learning (``requires_grad=False``); returns ``module``."""
    for p in module.parameters():
        p.requires_grad_(False)
    return module


def count_trainable(module: nn.Module) -> int:
    """The number of numbers an optimiser would change: parameters with ``requires_grad``, shared ones once."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


def last_token_index(idx: Tensor, pad_id: int) -> Tensor:
    """``(B, T)`` right-padded ids -> ``(B,)``: the position of each row's last real (non-pad) token.

    Raises ``ValueError`` for a row with no real token, or with a real token after a pad (left padding).
    """
    if idx.dim() != 2:
        raise ValueError(f"idx must have shape (B, T), got {tuple(idx.shape)}")
    real = idx != pad_id  # (B, T)
    lengths = real.sum(1)  # (B,)
    if (lengths == 0).any():
        rows = (lengths == 0).nonzero().flatten().tolist()
        raise ValueError(f"rows {rows} hold only padding (pad_id={pad_id}): expected at least one real token")
    # right padding: the real tokens are exactly the first `lengths` positions of their row
    positions = torch.arange(idx.size(1), device=idx.device)  # (T,)
    if not (real == (positions[None] < lengths[:, None])).all():
        raise ValueError(f"expected right-padded rows (real tokens, then pad_id={pad_id}); "
                         "got a real token after a pad (left padding?)")
    return lengths - 1


class GPTClassifier(nn.Module):
    """A pretrained ``GPT`` body and a new linear head: ``(B, T)`` ids -> ``(B, num_classes)`` logits.

    ``pooling="last"`` (the default) reads the hidden state of each row's last real token;
    ``"mean"`` averages the hidden states of the real tokens (each of which has seen only its
    prefix). ``freeze_body=True`` makes a linear probe. The body's ``lm_head`` is not used.
    Works with :class:`~transformer_lib.objectives.ClassifierObjective` (batches ``{"src", "label"}``).
    """

    def __init__(self, body: GPT, num_classes: int, pad_id: int = 0, pooling: str = "last",
                 freeze_body: bool = False) -> None:
        super().__init__()
        if not isinstance(body, GPT):
            raise TypeError(f"body must be a transformer_lib GPT, got {type(body).__name__}")
        if pooling not in ("last", "mean"):
            raise ValueError(f'pooling must be "last" or "mean", got {pooling!r}')
        if num_classes < 2:
            raise ValueError(f"num_classes must be >= 2, got {num_classes}")
        self.body, self.pad_id, self.pooling = body, pad_id, pooling
        weight = body.embedding.token.weight
        self.head = nn.Linear(weight.size(1), num_classes, device=weight.device, dtype=weight.dtype)
        if freeze_body:
            freeze(body)

    def forward(self, idx: Tensor) -> Tensor:
        """``(B, T)`` right-padded ids -> ``(B, num_classes)`` logits."""
        last = last_token_index(idx, self.pad_id)  # (B,)
        h = self.body.hidden(idx)  # (B, T, d_model)
        if self.pooling == "last":
            pooled = h[range(len(idx)), last]  # (B, d_model)
        else:
            real = (idx != self.pad_id)[..., None]  # (B, T, 1)
            pooled = (h * real).sum(1) / real.sum(1)
        return self.head(pooled)
