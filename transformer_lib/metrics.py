"""Metrics for sequence tasks: token accuracy, exact match, corpus BLEU, phoneme and word error rates.

Predictions and targets are batches of token ids, ``(B, T)``, padded with ``pad_id``.
A decoded batch and its reference batch may have different widths; both are padded
to the wider one before comparing, so a prediction that runs on past the reference
counts as wrong.

BLEU is computed by ``sacrebleu`` (Post, 2018), the reference implementation, never
by hand: small differences in tokenisation and smoothing make hand-written BLEU
scores incomparable.

The error rates of pronunciation (grapheme-to-phoneme) work on token lists, not ids, and accept
several correct answers per word, as the g2p toolkits count them (a word of CMUdict may have
more than one pronunciation): a prediction is scored against the reference it is closest to.

:func:`mcnemar_exact` compares two systems scored on the same items (right or wrong each).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import sacrebleu
import torch
import torch.nn.functional as F

__all__ = ["token_accuracy", "exact_match", "corpus_bleu", "edit_distance", "phoneme_error_rate", "word_error_rate",
           "mcnemar_exact"]


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


def edit_distance(hypothesis: Sequence[str], reference: Sequence[str]) -> int:
    """Levenshtein distance: the fewest insertions, deletions and substitutions turning one into the other.

    Dynamic programming over prefixes, one row at a time: ``row[j]`` is the distance between
    the hypothesis prefix read so far and ``reference[:j]``.
    """
    row = list(range(len(reference) + 1))
    for i, token in enumerate(hypothesis, start=1):
        diagonal, row[0] = row[0], i
        for j, wanted in enumerate(reference, start=1):
            diagonal, row[j] = row[j], min(row[j] + 1,  # delete ``token``
                                           row[j - 1] + 1,  # insert ``wanted``
                                           diagonal + (token != wanted))  # keep or substitute
    return row[-1]


def _check_references(hypotheses: Sequence[Sequence[str]], references: Sequence[Sequence[Sequence[str]]]) -> None:
    if len(hypotheses) != len(references):
        raise ValueError(f"need one list of references per hypothesis, got {len(hypotheses)} hypotheses "
                         f"and {len(references)} reference lists")
    if not hypotheses:
        raise ValueError("error rates need at least one word, got 0")
    for i, options in enumerate(references):
        if isinstance(options, str) or not options or any(isinstance(r, str) or not r for r in options):
            raise ValueError(f"references[{i}] must be a non-empty list of non-empty token lists "
                             f"(the word's correct pronunciations), got {options!r}")


def phoneme_error_rate(hypotheses: Sequence[Sequence[str]], references: Sequence[Sequence[Sequence[str]]]) -> float:
    """Edit operations per reference token, each word against its closest reference.

    Args:
        hypotheses: one predicted token list per word, e.g. ``[["K", "AE", "T"], ...]``.
        references: per word, the list of its correct token lists (at least one).

    For each word the reference with the fewest edits is chosen (the first of them on a tie);
    the rate is the sum of those edits over the sum of the chosen references' lengths, so
    long words weigh more than short ones. It can exceed 1 when predictions run on.
    """
    _check_references(hypotheses, references)
    edits = length = 0
    for hypothesis, options in zip(hypotheses, references):
        distance, best = min((edit_distance(hypothesis, r), i) for i, r in enumerate(options))
        edits += distance
        length += len(options[best])
    return edits / length


def word_error_rate(hypotheses: Sequence[Sequence[str]], references: Sequence[Sequence[Sequence[str]]]) -> float:
    """Fraction of words whose prediction equals none of their references (any token wrong: the word is wrong).

    Args as :func:`phoneme_error_rate`.
    """
    _check_references(hypotheses, references)
    wrong = sum(list(h) not in [list(r) for r in options] for h, options in zip(hypotheses, references))
    return wrong / len(hypotheses)


def mcnemar_exact(only_first: int, only_second: int) -> float:
    """Two-sided p-value of McNemar's exact test for two systems scored on the same items.

    Args:
        only_first: items the first system gets right and the second wrong.
        only_second: items the second system gets right and the first wrong.

    Items both get right, or both wrong, say nothing about which is better and are not needed. If
    the two systems were equally good, each of the ``n = only_first + only_second`` discordant
    items would fall on either side with probability 1/2; the p-value is the probability, under
    that binomial(n, 1/2), of a split at least as uneven as the one observed (both tails, at most 1).
    """
    for name, count in (("only_first", only_first), ("only_second", only_second)):
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise ValueError(f"{name} must be a count (an int >= 0), got {count!r}")
    n, k = only_first + only_second, min(only_first, only_second)
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n  # P(X <= k), X ~ binomial(n, 1/2)
    return min(1.0, 2 * tail)
