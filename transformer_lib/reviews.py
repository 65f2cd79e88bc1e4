"""Chapter 12's language: short reviews, their sentiment, and the text a GPT is pretrained on.

A review is one or two clauses "the NOUN was [not] [really] ADJ", joined by "but"; "not" flips the
adjective, and the clause after "but" decides whether the review is positive. The pretraining text
adds, after some reviews, the word a writer would go on to say ("recommended" after a positive
review, "avoid" after a negative one), so that predicting the text well requires the sentiment.

The chapter's small GPT (:func:`review_gpt`) is pretrained on that text by :func:`pretrain`, the
run that ``benchmarks/pretrain_reviews.py`` commits and the page checks.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch

from .models import GPT
from .objectives import LMObjective
from .run_state import History
from .runtime import seed_everything
from .sft import IGNORE_INDEX
from .trainer import fit

NOUNS = ["food", "service", "film", "plot", "music", "room", "staff", "view"]
POSITIVE = ["good", "great", "nice", "fine"]
NEGATIVE = ["bad", "awful", "poor", "dull"]
WORDS = ["<pad>", "the", "was", "not", "really", "but", ".", "=>", "recommended", "avoid"] + NOUNS + POSITIVE + NEGATIVE
WORD_ID = {word: i for i, word in enumerate(WORDS)}
PAD, END, ASK = WORD_ID["<pad>"], WORD_ID["."], WORD_ID["=>"]
MAX_LEN = 24  # longest sequence any model reads: 13 words, "=>", an answer of 3 tokens

Review = tuple[list[str], int, list[str]]  # (words, label, verdicts)


def review_clause(rng: random.Random, positive: bool) -> list[str]:
    """One clause with the given sentiment: the adjective's polarity, flipped by "not"."""
    negated = rng.random() < 0.5
    adjective = rng.choice(POSITIVE if positive != negated else NEGATIVE)
    return ["the", rng.choice(NOUNS), "was"] + ["not"] * negated + ["really"] * (rng.random() < 0.3) + [adjective]


def review(rng: random.Random) -> Review:
    """(words, label, verdicts): the clause after "but" decides the label (1 = positive);
    the verdicts are "good" or "bad" for each clause in order (the answers of the SFT section)."""
    positive = rng.random() < 0.5
    words, verdicts = review_clause(rng, positive), ["good" if positive else "bad"]
    if rng.random() < 0.6:
        positive = rng.random() < 0.5
        words = words + ["but"] + review_clause(rng, positive)
        verdicts.append("good" if positive else "bad")
    return words, int(positive), verdicts


def reviews(n: int, seed: int) -> list[Review]:
    """``n`` reviews drawn from ``seed``."""
    rng = random.Random(seed)
    return [review(rng) for _ in range(n)]


def ids(words: list[str]) -> list[int]:
    """Words -> their ids in :data:`WORDS`."""
    return [WORD_ID[w] for w in words]


def padded(rows: list[list[int]]) -> torch.Tensor:
    """Lists of ids -> ``(B, T)`` right-padded with PAD."""
    out = torch.full((len(rows), max(map(len, rows))), PAD, dtype=torch.long)
    for b, row in enumerate(rows):
        out[b, :len(row)] = torch.tensor(row)
    return out


@dataclass
class ReviewSplits:
    """The chapter's reviews: pretraining text, the pool that may be labelled, validation and test.

    Validation and test hold only sentences that occur nowhere else (neither in the pretraining
    text nor in the pool, nor in each other).
    """

    unlabelled: list[Review]  # 20,000: the text of pretraining, never labelled
    pool: list[Review]  # 4,000: the reviews that may be labelled, prompts of SFT and DPO
    valid: list[Review]  # 1,000: for choosing the pretraining rate
    test: list[Review]  # 1,000: for every score


def review_splits() -> ReviewSplits:
    """The chapter's splits, always the same (fixed seeds)."""
    unlabelled, pool = reviews(20000, seed=1), reviews(4000, seed=2)
    seen = {tuple(r[0]) for r in unlabelled + pool}
    test = [r for r in reviews(6000, seed=3) if tuple(r[0]) not in seen][:1000]
    seen |= {tuple(r[0]) for r in test}
    valid = [r for r in reviews(6000, seed=4) if tuple(r[0]) not in seen][:1000]
    if len(test) < 1000 or len(valid) < 1000:
        raise RuntimeError(f"too few new sentences: {len(test)} test, {len(valid)} validation reviews")
    return ReviewSplits(unlabelled, pool, valid, test)


def lm_rows(data: list[Review], closing_share: float, seed: int = 0) -> list[list[int]]:
    """Each review, then ".", then, in ``closing_share`` of them (at random), its closing word."""
    rng = random.Random(seed)
    return [ids(w) + [END] + ([WORD_ID["recommended" if label else "avoid"]] if rng.random() < closing_share else [])
            for w, label, _ in data]


def lm_batches(data: list[Review], closing_share: float, batch_size: int = 64, seed: int = 0) -> list[dict]:
    """Batches ``{"idx", "targets"}`` ``(B, T)``: next-word prediction on the rows of :func:`lm_rows`."""
    rows, batches = lm_rows(data, closing_share, seed), []
    for start in range(0, len(rows) - batch_size + 1, batch_size):
        x = padded(rows[start:start + batch_size])                     # (B, T + 1)
        targets = x[:, 1:].masked_fill(x[:, 1:] == PAD, IGNORE_INDEX)  # padding carries no loss
        batches.append({"idx": x[:, :-1], "targets": targets})
    return batches


def review_gpt(seed: int) -> GPT:
    """The chapter's GPT (chapter 8's layout, GPT-2's initialisation), its weights drawn from ``seed``."""
    seed_everything(seed)
    return GPT(len(WORDS), d_model=32, num_heads=4, num_layers=2, d_ff=64, max_len=MAX_LEN)


def pretrain(splits: ReviewSplits, closing_share: float, lr: float, steps: int, eval_every: int = 0,
             seed: int = 0) -> tuple[GPT, History]:
    """Pretrain :func:`review_gpt` on next-word prediction of the unlabelled reviews.

    ``closing_share`` of them end with their closing word. AdamW, 30 steps of warm-up, then a cosine
    to zero at ``steps``; batches of 64 reviews, in order, again and again; validation loss every
    ``eval_every`` steps (0: at the end only). Returns the model and its history.
    """
    model = review_gpt(seed)
    history = fit(model, LMObjective(), lm_batches(splits.unlabelled, closing_share, seed=seed),
                  lm_batches(splits.valid, closing_share, batch_size=500, seed=1), max_steps=steps, lr=lr,
                  warmup_steps=30, eval_every=eval_every, seed=seed, progress=False)
    return model, history
