"""Supervised fine-tuning (SFT, "instruction tuning") with the loss on the answer tokens only (chapter 12).

An example is a **prompt** and the **answer** the model should give to it, both token ids. The
model reads ``prompt + answer`` as one sequence and is trained on next-token prediction, as in
pretraining, except that the positions whose next token belongs to the prompt get no loss: the
model is taught to answer, not to write prompts (Ouyang et al. 2022, InstructGPT; the default of
most SFT code). ``answer_only=False`` puts the loss on every token, for comparison.

For ``prompt = [p0, p1, p2]`` and ``answer = [a0, a1]`` the sequence is ``p0 p1 p2 a0 a1`` and::

    idx     = p0    p1    p2    a0        (the sequence without its last token)
    targets = -100  -100  a0    a1        (the sequence shifted left; prompt tokens ignored)

Position 2 (``p2``) is the first to predict an answer token: it has seen the whole prompt. Rows of
a batch are right-padded with ``pad_id`` in ``idx`` and ``IGNORE_INDEX`` (-100, what
``F.cross_entropy`` ignores) in ``targets``. The batches ``{"idx", "targets"}`` are those of
:class:`~transformer_lib.objectives.LMObjective`, which trains on them as they are; :func:`sft_loss`
is the same cross-entropy, checked.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor

__all__ = ["IGNORE_INDEX", "sft_example", "sft_batch", "sft_loss"]

#: The target id that ``F.cross_entropy`` (and this module) leaves out of the loss.
IGNORE_INDEX = -100


def sft_example(prompt: Sequence[int], answer: Sequence[int], answer_only: bool = True) -> tuple[list[int], list[int]]:
    """``(idx, targets)``, two lists of ``len(prompt) + len(answer) - 1`` ids (see the module's docstring).

    ``targets[t]`` is the token after ``idx[t]``, or ``IGNORE_INDEX`` where that token is part of the
    prompt (``answer_only=True``). Raises ``ValueError`` for an empty prompt (nothing would predict
    the answer's first token) or an empty answer.
    """
    prompt, answer = list(prompt), list(answer)
    if not prompt:
        raise ValueError("prompt must hold at least one token (the first answer token is predicted from the "
                         "prompt's last one), got an empty prompt")
    if not answer:
        raise ValueError("answer must hold at least one token, got an empty answer")
    sequence = prompt + answer
    targets = sequence[1:]
    if answer_only:
        targets[: len(prompt) - 1] = [IGNORE_INDEX] * (len(prompt) - 1)
    return sequence[:-1], targets


def sft_batch(prompts: Sequence[Sequence[int]], answers: Sequence[Sequence[int]], pad_id: int = 0,
              answer_only: bool = True) -> dict[str, Tensor]:
    """A right-padded batch ``{"idx": (B, T), "targets": (B, T)}`` of (prompt, answer) pairs, ``T`` the longest row.

    ``idx`` is padded with ``pad_id``, ``targets`` with ``IGNORE_INDEX``, so padding never carries
    loss. ``answer_only=False`` puts the loss on the prompt's tokens too (every real token but the first).
    """
    if len(prompts) != len(answers):
        raise ValueError(f"prompts and answers must pair up: got {len(prompts)} prompts and {len(answers)} answers")
    if not prompts:
        raise ValueError("expected at least one (prompt, answer) pair, got none")
    rows = [sft_example(p, a, answer_only) for p, a in zip(prompts, answers)]
    T = max(len(idx) for idx, _ in rows)
    idx = torch.full((len(rows), T), pad_id, dtype=torch.long)
    targets = torch.full((len(rows), T), IGNORE_INDEX, dtype=torch.long)
    for b, (x, y) in enumerate(rows):
        idx[b, : len(x)] = torch.tensor(x)
        targets[b, : len(y)] = torch.tensor(y)
    return {"idx": idx, "targets": targets}


def sft_loss(logits: Tensor, targets: Tensor) -> Tensor:
    """Mean cross-entropy of ``logits`` ``(B, T, n_vocab)`` over the targets ``(B, T)`` that are not ``IGNORE_INDEX``.

    Every counted token weighs the same (a long answer counts more than a short one, as in
    ``LMObjective``). Raises ``ValueError`` on mismatched shapes, or when no target is counted (the
    mean would be NaN).
    """
    if logits.dim() != 3 or logits.shape[:2] != targets.shape:
        raise ValueError(f"expected logits (B, T, n_vocab) and targets (B, T) with the same B, T; "
                         f"got logits {tuple(logits.shape)} and targets {tuple(targets.shape)}")
    if not (targets != IGNORE_INDEX).any():
        raise ValueError(f"every target is IGNORE_INDEX ({IGNORE_INDEX}): no token to put a loss on")
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE_INDEX)
