"""What the models of the course are trained for and judged by: one objective per kind of model.

An objective gives the training loop (:mod:`transformer_lib.trainer`) a loss for a batch and
metrics for a validation loader:

* :class:`Seq2SeqObjective` - batches ``{"src" (B, S), "tgt" (B, T + 1)}``; teacher forcing
  (``tgt[:, :-1]`` in, ``tgt[:, 1:]`` predicted); evaluation decodes greedily and reports
  token accuracy and exact match;
* :class:`LMObjective` - batches ``{"idx" (B, T), "targets" (B, T)}``; next-token loss;
* :class:`ClassifierObjective` - batches ``{"src" (B, S), "label" (B,)}``; accuracy.

:func:`translation_scores` scores a trained encoder-decoder on a split of a task, greedily or
with beam search, and adds corpus BLEU.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader

from transformer_lib.data import PAD_ID
from transformer_lib.decoding import beam_search, greedy_decode
from transformer_lib.metrics import corpus_bleu, exact_match, token_accuracy
from transformer_lib.runtime import to_device
from transformer_lib.tasks import Seq2SeqTask
from transformer_lib.trainer import MeanLossEvaluation

__all__ = ["Seq2SeqObjective", "LMObjective", "ClassifierObjective", "translation_scores"]


def _cross_entropy(logits: torch.Tensor, targets: torch.Tensor, label_smoothing: float,
                   ignore_index: int) -> torch.Tensor:
    """Mean token cross-entropy of logits ``(B, T, vocab_size)`` against ids ``(B, T)``.

    Label smoothing (Vaswani et al. 2017, section 5.4, after Szegedy et al. 2016) spreads
    ``label_smoothing`` of the target's probability over the whole vocabulary.
    """
    return F.cross_entropy(logits.flatten(0, 1).float(), targets.flatten(), ignore_index=ignore_index,
                           label_smoothing=label_smoothing)


@dataclass
class LabelSmoothed:
    """The label smoothing of an objective's cross-entropy, checked: in ``[0, 1)``."""

    label_smoothing: float = 0.0

    def __post_init__(self) -> None:
        if not 0 <= self.label_smoothing < 1:
            raise ValueError(f"label_smoothing must be in [0, 1), got {self.label_smoothing!r}")


@dataclass
class Seq2SeqObjective(LabelSmoothed):
    """Encoder-decoder training with teacher forcing; evaluation by greedy decoding.

    ``model(src (B, S), tgt_in (B, T)) -> logits (B, T, vocab_size)``; for evaluation the model keeps
    the encoder-decoder protocol (``encode``/``decode``, see :mod:`transformer_lib.decoding`).
    """

    pad_id: int = PAD_ID

    def loss(self, model: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        tgt = batch["tgt"]
        logits = model(batch["src"], tgt[:, :-1])
        return _cross_entropy(logits, tgt[:, 1:], self.label_smoothing, self.pad_id)

    def evaluate(self, model: nn.Module, loader: DataLoader, device: torch.device) -> dict[str, float]:
        total = {"valid_loss": 0.0, "token_accuracy": 0.0, "exact_match": 0.0}
        n = 0
        for batch in loader:
            batch = to_device(batch, device)
            reference = batch["tgt"][:, 1:]
            predicted = greedy_decode(model, batch["src"], max_len=reference.shape[1] + 2)
            rows = len(reference)
            total["valid_loss"] += rows * self.loss(model, batch).item()
            total["token_accuracy"] += rows * token_accuracy(predicted, reference, self.pad_id)
            total["exact_match"] += rows * exact_match(predicted, reference, self.pad_id)
            n += rows
        return {name: value / n for name, value in total.items()}


@dataclass
class LMObjective(MeanLossEvaluation, LabelSmoothed):
    """Next-token prediction: ``model(idx (B, T)) -> logits (B, T, vocab_size)``."""

    def loss(self, model: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return _cross_entropy(model(batch["idx"]), batch["targets"], self.label_smoothing, -100)


@dataclass
class ClassifierObjective(LabelSmoothed):
    """Sequence classification: ``model(src (B, S)) -> logits (B, n_classes)``; reports accuracy."""

    def loss(self, model: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return F.cross_entropy(model(batch["src"]).float(), batch["label"], label_smoothing=self.label_smoothing)

    def evaluate(self, model: nn.Module, loader: DataLoader, device: torch.device) -> dict[str, float]:
        correct = loss = n = 0
        for batch in loader:
            batch = to_device(batch, device)
            logits = model(batch["src"])
            loss += F.cross_entropy(logits.float(), batch["label"], reduction="sum").item()
            correct += (logits.argmax(-1) == batch["label"]).sum().item()
            n += len(batch["label"])
        return {"valid_loss": loss / n, "accuracy": correct / n}


@torch.no_grad()
def translation_scores(model: nn.Module, task: Seq2SeqTask, split: str = "test", device: torch.device | None = None,
                       batch_size: int = 250, beam_size: int = 1, alpha: float = 0.6) -> dict[str, float]:
    """Exact match, token accuracy and corpus BLEU of decoded outputs on one split of ``task``.

    ``beam_size=1`` decodes greedily; ``beam_size > 1`` runs beam search with length penalty
    ``alpha`` (:func:`~transformer_lib.decoding.beam_search`). BLEU is computed on tokens separated
    by spaces, so it is a character BLEU for the character-level tasks.
    """
    device = device or next(model.parameters()).device
    model.eval()
    loader = task.loader(split, min(batch_size, len(task.split(split))), shuffle=False)
    hypotheses, references = [], []
    scores = {"exact_match": 0.0, "token_accuracy": 0.0}
    for batch in loader:
        src, reference = batch["src"].to(device), batch["tgt"][:, 1:].to(device)
        max_len = reference.shape[1] + 2
        if beam_size == 1:
            predicted = greedy_decode(model, src, max_len)
        else:
            predicted = beam_search(model, src, max_len, beam_size=beam_size, alpha=alpha)
        scores["exact_match"] += len(src) * exact_match(predicted, reference)
        scores["token_accuracy"] += len(src) * token_accuracy(predicted, reference)
        hypotheses += [" ".join(task.tokens(row)) for row in predicted.cpu()]
        references += [" ".join(task.tokens(row)) for row in reference.cpu()]
    result = {name: total / len(hypotheses) for name, total in scores.items()}
    return {**result, "bleu": corpus_bleu(hypotheses, references)}
