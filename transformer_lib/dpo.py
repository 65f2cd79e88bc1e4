"""Direct Preference Optimisation (chapter 12; Rafailov et al. 2023, "Direct Preference Optimization: Your
Language Model is Secretly a Reward Model").

A preference example is a prompt ``x`` and two answers to it, one **chosen** ``y_c`` (preferred by
a person, or by a rule) and one **rejected** ``y_r``. DPO trains a policy ``pi`` (the model, usually
after SFT) against a frozen copy of where it started, the reference ``pi_ref``:

    ``loss = -log sigmoid(beta * ((log pi(y_c|x) - log pi_ref(y_c|x)) - (log pi(y_r|x) - log pi_ref(y_r|x))))``

(the paper's equation 7, averaged over a batch). ``log pi(y|x)`` is the log-probability of the whole
answer: the sum over the answer's tokens of each token's log-probability given everything before
it, the prompt's tokens getting none (the masking of :mod:`transformer_lib.sft`).
``beta * (log pi(y|x) - log pi_ref(y|x))`` is the **implicit reward** of an answer (section 5);
the loss is the logistic loss of the Bradley-Terry model on the difference of the two rewards,
so it falls as the policy raises the chosen answer relative to the rejected one, measured against
the reference. ``beta`` is the strength of the pull back to the reference (the KL penalty of
RLHF, which DPO optimises without a reward model or sampling).

* :func:`preference_batch` builds one batch of the chosen and the rejected answers (one forward pass);
* :func:`sequence_logprobs` sums the answers' token log-probabilities;
* :func:`dpo_loss` is the loss, with the implicit rewards and the preference accuracy;
* :class:`DPOObjective` trains with :class:`~transformer_lib.trainer.Trainer`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.utils.data import DataLoader

from .finetune import freeze
from .runtime import to_device
from .sft import IGNORE_INDEX, sft_batch

__all__ = ["preference_batch", "sequence_logprobs", "answer_logprobs", "DPOOutput", "dpo_loss", "DPOObjective"]


def preference_batch(prompts: Sequence[Sequence[int]], chosen: Sequence[Sequence[int]],
                     rejected: Sequence[Sequence[int]], pad_id: int = 0) -> dict[str, Tensor]:
    """``{"idx": (2B, T), "targets": (2B, T)}``: rows ``0..B-1`` hold ``prompt + chosen``, rows ``B..2B-1``
    ``prompt + rejected``, right-padded, targets on the answer tokens only (:func:`~transformer_lib.sft.sft_batch`)."""
    if not len(prompts) == len(chosen) == len(rejected):
        raise ValueError(f"prompts, chosen and rejected must pair up: got {len(prompts)} prompts, {len(chosen)} "
                         f"chosen and {len(rejected)} rejected answers")
    return sft_batch([*prompts, *prompts], [*chosen, *rejected], pad_id=pad_id)


def sequence_logprobs(logits: Tensor, targets: Tensor) -> Tensor:
    """``(B, T, n_vocab)`` logits, ``(B, T)`` targets -> ``(B,)``: each row's summed log-probability of its targets.

    Positions whose target is ``IGNORE_INDEX`` (prompt, padding) add nothing. Computed in the logits'
    dtype (use float32 or float64: the sum of many small numbers).
    """
    if logits.dim() != 3 or logits.shape[:2] != targets.shape:
        raise ValueError(f"expected logits (B, T, n_vocab) and targets (B, T) with the same B, T; "
                         f"got logits {tuple(logits.shape)} and targets {tuple(targets.shape)}")
    counted = targets != IGNORE_INDEX  # (B, T)
    token_logprobs = logits.log_softmax(-1).gather(-1, targets.clamp(min=0)[..., None])[..., 0]  # (B, T)
    return (token_logprobs * counted).sum(1)


def answer_logprobs(model: nn.Module, batch: dict[str, Tensor]) -> tuple[Tensor, Tensor]:
    """``log pi(y_c|x)``, ``log pi(y_r|x)``, each ``(B,)``, for a :func:`preference_batch` under ``model``
    (``(2B, T)`` ids -> ``(2B, T, n_vocab)`` logits), in one forward pass."""
    logits = model(batch["idx"])
    if logits.dtype in (torch.float16, torch.bfloat16):  # mixed precision: sum the log-probabilities in float32
        logits = logits.float()
    return sequence_logprobs(logits, batch["targets"]).chunk(2)  # (2B,) -> (B,), (B,)


@dataclass
class DPOOutput:
    """What :func:`dpo_loss` returns. ``loss`` is a scalar with gradient; the rest are detached.

    ``chosen_rewards``, ``rejected_rewards``: ``(B,)`` implicit rewards ``beta * (log pi - log pi_ref)``;
    ``accuracy``: the fraction of pairs whose chosen reward is the higher; ``margin``: the mean of
    ``chosen_rewards - rejected_rewards``.
    """

    loss: Tensor
    chosen_rewards: Tensor
    rejected_rewards: Tensor
    accuracy: float
    margin: float


def dpo_loss(policy_chosen: Tensor, policy_rejected: Tensor, reference_chosen: Tensor, reference_rejected: Tensor,
             beta: float = 0.1) -> DPOOutput:
    """DPO's loss (Rafailov et al. 2023, equation 7) from answers' log-probabilities, each ``(B,)``.

    ``mean(-log sigmoid(beta * ((policy_chosen - reference_chosen) - (policy_rejected - reference_rejected))))``,
    with ``F.logsigmoid`` (no overflow for large margins). ``beta > 0``.
    """
    if beta <= 0:
        raise ValueError(f"beta must be > 0, got {beta!r}")
    tensors = {"policy_chosen": policy_chosen, "policy_rejected": policy_rejected,
               "reference_chosen": reference_chosen, "reference_rejected": reference_rejected}
    shapes = {name: tuple(t.shape) for name, t in tensors.items()}
    if len(set(shapes.values())) != 1 or policy_chosen.dim() != 1:
        raise ValueError(f"expected four log-probability tensors of the same shape (B,), got {shapes}")
    chosen_logratio = policy_chosen - reference_chosen
    rejected_logratio = policy_rejected - reference_rejected
    loss = -F.logsigmoid(beta * (chosen_logratio - rejected_logratio)).mean()
    chosen_rewards, rejected_rewards = beta * chosen_logratio.detach(), beta * rejected_logratio.detach()
    return DPOOutput(loss, chosen_rewards, rejected_rewards,
                     accuracy=(chosen_rewards > rejected_rewards).float().mean().item(),
                     margin=(chosen_rewards - rejected_rewards).mean().item())


@dataclass
class DPOObjective:
    """DPO for :class:`~transformer_lib.trainer.Trainer`: batches from :func:`preference_batch`.

    ``reference`` is the frozen starting point (e.g. ``copy.deepcopy(model)`` before training); it is
    frozen and put in eval mode here. Evaluation reports the mean loss, the preference accuracy and
    the mean implicit rewards and margin.
    """

    reference: nn.Module
    beta: float = 0.1

    def __post_init__(self) -> None:
        freeze(self.reference).eval()
        if self.beta <= 0:
            raise ValueError(f"beta must be > 0, got {self.beta!r}")

    def _output(self, model: nn.Module, batch: dict[str, Tensor]) -> DPOOutput:
        policy_chosen, policy_rejected = answer_logprobs(model, batch)
        with torch.no_grad():
            reference_chosen, reference_rejected = answer_logprobs(self.reference, batch)
        return dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected, self.beta)

    def loss(self, model: nn.Module, batch: dict[str, Tensor]) -> Tensor:
        return self._output(model, batch).loss

    @torch.no_grad()
    def evaluate(self, model: nn.Module, loader: DataLoader, device: torch.device) -> dict[str, float]:
        total = {"valid_loss": 0.0, "preference_accuracy": 0.0, "chosen_reward": 0.0, "rejected_reward": 0.0,
                 "reward_margin": 0.0}
        n = 0
        for batch in loader:
            out = self._output(model, to_device(batch, device))
            pairs = len(out.chosen_rewards)
            for name, value in (("valid_loss", out.loss.item()), ("preference_accuracy", out.accuracy),
                                ("chosen_reward", out.chosen_rewards.mean().item()),
                                ("rejected_reward", out.rejected_rewards.mean().item()),
                                ("reward_margin", out.margin)):
                total[name] += pairs * value
            n += pairs
        return {name: value / n for name, value in total.items()}
