"""Chapter 12's adaptation runs on the reviews: classifiers from few labels, LoRA, SFT and DPO.

Every run starts from a body pretrained by :func:`~transformer_lib.reviews.pretrain` (the two that
``benchmarks/pretrain_reviews.py`` commits) and is a function of its seed alone, so that
``benchmarks/adapt_reviews.py`` can run ten seeds of each and the page can train one of them again
and compare:

* :func:`classify`: a :class:`~transformer_lib.finetune.GPTClassifier` from scratch, as a linear
  probe, fully fine-tuned, or with LoRA, trained on ``per_class`` labelled reviews of each class;
* :func:`sft_exact_match`: supervised fine-tuning on demonstrations ("=>", then each clause's
  verdict), scored by exact match of the greedy answer;
* :func:`dpo_reference`, :func:`preference_pairs`, :func:`dpo_policy` and :func:`dpo_scores`: DPO
  from an early SFT model, on pairs a rule labels.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass

import torch
from torch import nn

from .dpo import DPOObjective, answer_logprobs, preference_batch, sequence_logprobs
from .finetune import GPTClassifier, count_trainable
from .lora import add_lora
from .models import GPT
from .objectives import ClassifierObjective, LMObjective
from .reviews import ASK, END, PAD, WORD_ID, Review, ReviewSplits, ids, padded, review_gpt
from .sft import IGNORE_INDEX, sft_batch
from .trainer import fit

LABELS_PER_CLASS = (4, 16, 64)
FT_STEPS = 80  # every classifier: all its labelled reviews in one batch, this many steps
LR = {"scratch": 1e-3, "probe": 1e-2, "full": 1e-3, "lora": 3e-3}  # set once, by hand
LORA_ALPHA = 8.0
SFT_STEPS, SFT_LR, DEMONSTRATIONS = 600, 3e-3, 2000
REFERENCE_STEPS = 150  # the early SFT model DPO starts from
DPO_STEPS, DPO_LR, DPO_BATCH, DPO_PAIRS = 150, 1e-3, 32, 512


# --- classifiers from few labels ---------------------------------------------------------------------


def review_batch(data: list[Review]) -> dict[str, torch.Tensor]:
    """``{"src": (B, T), "label": (B,)}``: each review and its full stop, right-padded, and its label."""
    return {"src": padded([ids(w) + [END] for w, _, _ in data]), "label": torch.tensor([r[1] for r in data])}


def labelled(pool: list[Review], per_class: int, seed: int) -> list[Review]:
    """``per_class`` positive then ``per_class`` negative reviews of the pool, drawn by ``seed``."""
    rng = random.Random(seed)
    return rng.sample([r for r in pool if r[1] == 1], per_class) + rng.sample([r for r in pool if r[1] == 0], per_class)


def classify(splits: ReviewSplits, bodies: dict[str, GPT], method: str, per_class: int, seed: int,
             body: str = "closings", rank: int | None = None) -> tuple[float, int]:
    """Train one classifier; returns (test accuracy, trainable parameters).

    ``method``: ``"scratch"`` (a fresh :func:`~transformer_lib.reviews.review_gpt`, weights from
    ``100 + seed``), ``"probe"`` (``bodies[body]`` frozen, the head alone learns), ``"full"`` (every
    weight) or ``"lora"`` (adapters of ``rank`` on the attention projections, and the head).
    ``seed`` draws the labelled reviews and the head.
    """
    if method not in LR:
        raise ValueError(f"method must be one of {sorted(LR)}, got {method!r}")
    gpt = review_gpt(100 + seed) if method == "scratch" else copy.deepcopy(bodies[body])
    torch.manual_seed(seed)
    model = GPTClassifier(gpt, num_classes=2, pad_id=PAD, freeze_body=method == "probe")
    if method == "lora":
        add_lora(model, r=rank, alpha=LORA_ALPHA, train_also=("head",))  # in_proj and out_proj, and the head
    history = fit(model, ClassifierObjective(), [review_batch(labelled(splits.pool, per_class, seed))],
                  [review_batch(splits.test)], max_steps=FT_STEPS, lr=LR[method], warmup_steps=0,
                  schedule="constant", eval_every=0, seed=seed, progress=False)
    return history.last("accuracy"), count_trainable(model)


# --- supervised fine-tuning ------------------------------------------------------------------------------


def prompt_of(words: list[str]) -> list[int]:
    """A review's words, then "=>": the prompt."""
    return ids(words) + [ASK]


def answer_of(verdicts: list[str]) -> list[int]:
    """Each clause's verdict, then ".": the answer wanted."""
    return ids(verdicts) + [END]


@torch.no_grad()
def respond(model: nn.Module, prompts: list[list[int]], temperature: float = 0.0,
            generator: torch.Generator | None = None, max_new: int = 4) -> list[list[int]]:
    """Answers to prompts, up to and including the first "." (at most ``max_new`` tokens): greedy, or sampled at
    temperature (``generator`` draws the samples)."""
    model.eval()
    lengths = torch.tensor([len(p) for p in prompts])                       # (B,)
    sequences = torch.full((len(prompts), int(lengths.max()) + max_new), PAD, dtype=torch.long)
    for b, p in enumerate(prompts):
        sequences[b, :len(p)] = torch.tensor(p)
    rows = torch.arange(len(prompts))
    for step in range(max_new):
        position = lengths + step                                           # (B,) where each row writes
        logits = model(sequences[:, :int(position.max())])[rows, position - 1]  # (B, n_vocab)
        if temperature == 0:
            token = logits.argmax(-1)
        else:
            token = torch.multinomial((logits / temperature).softmax(-1), 1, generator=generator)[:, 0]
        sequences[rows, position] = token  # later pads are never read by earlier positions (causal)
    answers = [sequences[b, lengths[b]:lengths[b] + max_new].tolist() for b in range(len(prompts))]
    return [a[:a.index(END) + 1] if END in a else a for a in answers]


def exact_match(model: nn.Module, data: list[Review]) -> float:
    """The share of ``data`` whose greedy answer is exactly the right one."""
    answers = respond(model, [prompt_of(w) for w, _, _ in data])
    return sum(g == answer_of(v) for g, (_, _, v) in zip(answers, data)) / len(data)


def sft_batches(data: list[Review], answer_only: bool, batch_size: int = 32) -> list[dict]:
    """Demonstrations in batches ``{"idx", "targets"}`` (:func:`~transformer_lib.sft.sft_batch`), in order."""
    return [sft_batch([prompt_of(w) for w, _, _ in data[i:i + batch_size]],
                      [answer_of(v) for _, _, v in data[i:i + batch_size]], pad_id=PAD, answer_only=answer_only)
            for i in range(0, len(data), batch_size)]


def sft_model(body: GPT, demonstrations: list[Review], answer_only: bool, seed: int, steps: int = SFT_STEPS) -> GPT:
    """A copy of ``body`` after SFT: the demonstrations in the order ``seed`` shuffles, ``steps`` steps."""
    model = copy.deepcopy(body)
    shuffled = random.Random(seed).sample(demonstrations, len(demonstrations))
    fit(model, LMObjective(), sft_batches(shuffled, answer_only), None, max_steps=steps, lr=SFT_LR,
        warmup_steps=10, seed=seed, progress=False)
    return model


def sft_exact_match(splits: ReviewSplits, body: GPT, answer_only: bool, seed: int) -> float:
    """Exact match on the first 500 test reviews after SFT on the pool's first 2000 (:func:`sft_model`)."""
    return exact_match(sft_model(body, splits.pool[:DEMONSTRATIONS], answer_only, seed), splits.test[:500])


# --- preference optimisation -----------------------------------------------------------------------------


def dpo_reference(splits: ReviewSplits, body: GPT) -> GPT:
    """DPO's starting point and reference: SFT (answer only) stopped early, so that it still makes mistakes."""
    model = copy.deepcopy(body)
    fit(model, LMObjective(), sft_batches(splits.pool[:DEMONSTRATIONS], answer_only=True), None,
        max_steps=REFERENCE_STEPS, lr=SFT_LR, warmup_steps=10, seed=0, progress=False)
    return model


@dataclass
class PreferencePairs:
    """Prompts with a chosen and a rejected answer each; ``own``: how many rejected answers were the model's samples."""

    prompts: list[list[int]]
    chosen: list[list[int]]
    rejected: list[list[int]]
    own: int

    def batch(self, order: list[int] | None = None) -> dict[str, torch.Tensor]:
        """The pairs (those of ``order``, in that order) as one :func:`~transformer_lib.dpo.preference_batch`."""
        order = range(len(self.prompts)) if order is None else order
        return preference_batch(*([column[j] for j in order] for column in (self.prompts, self.chosen, self.rejected)),
                                pad_id=PAD)


def preference_pairs(reference: nn.Module, data: list[Review], seed: int) -> PreferencePairs:
    """A rule labels the reference's samples (temperature 1): the chosen answer is the right one; the rejected
    one is the sample when it is wrong, otherwise the right answer with one verdict flipped."""
    generator, rng = torch.Generator().manual_seed(seed), random.Random(seed)
    prompts, chosen = [prompt_of(w) for w, _, _ in data], [answer_of(v) for _, _, v in data]
    samples = respond(reference, prompts, temperature=1.0, generator=generator)
    rejected = []
    for right, sample in zip(chosen, samples):
        if sample != right:
            rejected.append(sample)
        else:  # the sample was right: flip one verdict
            flipped = list(right)
            i = rng.randrange(len(right) - 1)
            flipped[i] = WORD_ID["bad"] if right[i] == WORD_ID["good"] else WORD_ID["good"]
            rejected.append(flipped)
    return PreferencePairs(prompts, chosen, rejected, own=sum(s != r for s, r in zip(samples, chosen)))


def training_pairs(splits: ReviewSplits, reference: nn.Module) -> PreferencePairs:
    """The pairs DPO trains on: the pool's last 512 prompts (never demonstrations)."""
    return preference_pairs(reference, splits.pool[-DPO_PAIRS:], seed=1)


def held_out_pairs(splits: ReviewSplits, reference: nn.Module) -> PreferencePairs:
    """Pairs to score on: the test reviews 500 onwards (the first 500 are SFT's test prompts)."""
    return preference_pairs(reference, splits.test[500:], seed=2)


def dpo_policy(reference: GPT, pairs: PreferencePairs, beta: float, seed: int) -> GPT:
    """A copy of ``reference`` after DPO at ``beta``: batches of 32 pairs in the order ``seed`` shuffles."""
    order = random.Random(seed).sample(range(len(pairs.prompts)), len(pairs.prompts))
    batches = [pairs.batch(order[i:i + DPO_BATCH]) for i in range(0, len(order), DPO_BATCH)]
    policy = copy.deepcopy(reference)
    fit(policy, DPOObjective(copy.deepcopy(reference), beta), batches, None, max_steps=DPO_STEPS, lr=DPO_LR,
        warmup_steps=10, seed=seed, progress=False)
    return policy


@torch.no_grad()
def drift(policy: nn.Module, reference: nn.Module, prompts: list[list[int]], seed: int = 3) -> float:
    """Mean over the answer tokens of log pi - log pi_ref, on the policy's own samples (temperature 1) of
    ``prompts``: an estimate of the per-token KL divergence from the reference."""
    samples = respond(policy, prompts, temperature=1.0, generator=torch.Generator().manual_seed(seed))
    batch = sft_batch(prompts, [s or [END] for s in samples], pad_id=PAD)
    log_ratio = sequence_logprobs(policy(batch["idx"]), batch["targets"]) - sequence_logprobs(
        reference(batch["idx"]), batch["targets"])                          # (B,) per answer
    return (log_ratio.sum() / (batch["targets"] != IGNORE_INDEX).sum()).item()


@torch.no_grad()
def dpo_scores(policy: nn.Module, reference: nn.Module, held_out: PreferencePairs, test: list[Review],
               beta: float) -> dict[str, float]:
    """How a policy does: held-out pairs ranked right by the implicit reward (``reward``) and by its
    probability alone (``ranked``), greedy exact match on ``test`` (``exact``), and its :func:`drift`."""
    batch = held_out.batch()
    metrics = DPOObjective(copy.deepcopy(reference), beta).evaluate(policy, [batch], torch.device("cpu"))
    policy_chosen, policy_rejected = answer_logprobs(policy, batch)   # (B,), (B,)
    return {"reward": metrics["preference_accuracy"], "ranked": (policy_chosen > policy_rejected).float().mean().item(),
            "exact": exact_match(policy, test), "drift": drift(policy, reference, [prompt_of(w) for w, _, _ in test])}
