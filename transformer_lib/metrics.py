"""Metrics for sequence tasks: token accuracy, exact match, corpus BLEU.

Predictions and targets are batches of token ids, ``(B, T)``, padded with ``pad_id``.
A decoded batch and its reference batch may have different widths; both are padded
to the wider one before comparing, so a prediction that runs on past the reference
counts as wrong.

BLEU is computed by ``sacrebleu`` (Post, 2018), the reference implementation, never
by hand: small differences in tokenisation and smoothing make hand-written BLEU
scores incomparable.
"""

from __future__ import annotations

import sacrebleu
import torch
import torch.nn.functional as F

__all__ = ["token_accuracy", "exact_match", "corpus_bleu"]


def _check_ids(name: str, ids: torch.Tensor) -> None:
    if not isinstance(ids, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor of token ids, got {type(ids).__name__}")
    if ids.dim() != 2:
        raise ValueError(f"{name} must have shape (B, T), got {tuple(ids.shape)}")


def _align(pred: torch.Tensor, target: torch.Tensor, pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Pad ``pred`` and ``target`` (both ``(B, *)``) on the right to the same width."""
    _check_ids("pred", pred)
    _check_ids("target", target)
    if pred.shape[0] != target.shape[0]:
        raise ValueError(
            f"pred and target must have the same batch size B, got {pred.shape[0]} and {target.shape[0]}"
        )
    width = max(pred.shape[1], target.shape[1])
    pred = F.pad(pred, (0, width - pred.shape[1]), value=pad_id)
    target = F.pad(target.to(pred.device), (0, width - target.shape[1]), value=pad_id)
    return pred, target


def token_accuracy(pred: torch.Tensor, target: torch.Tensor, pad_id: int = 0) -> float:
    """Fraction of non-padding target positions where ``pred`` has the target token.

    Args:
        pred: predicted ids ``(B, T_pred)``.
        target: reference ids ``(B, T)``; positions equal to ``pad_id`` are ignored.
    """
    pred, target = _align(pred, target, pad_id)
    real = target != pad_id
    if not real.any():
        raise ValueError("target holds only padding: token accuracy is undefined")
    return ((pred == target) & real).sum().item() / real.sum().item()


def exact_match(pred: torch.Tensor, target: torch.Tensor, pad_id: int = 0) -> float:
    """Fraction of rows where ``pred`` equals ``target`` once both are padded alike.

    Args:
        pred: predicted ids ``(B, T_pred)``.
        target: reference ids ``(B, T)``.
    """
    pred, target = _align(pred, target, pad_id)
    return (pred == target).all(dim=1).float().mean().item()


def corpus_bleu(hypotheses: list[str], references: list[str]) -> float:
    """Corpus BLEU (0-100) of detokenised ``hypotheses`` against one reference each.

    Computed by ``sacrebleu.corpus_bleu`` with its default settings (13a tokeniser).
    """
    if len(hypotheses) != len(references):
        raise ValueError(
            f"need one reference per hypothesis, got {len(hypotheses)} hypotheses "
            f"and {len(references)} references"
        )
    if not hypotheses:
        raise ValueError("corpus_bleu needs at least one sentence, got 0")
    return sacrebleu.corpus_bleu(list(hypotheses), [list(references)]).score
