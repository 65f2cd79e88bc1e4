"""Results of the training side, measured on this machine's CPU (not a timed test).

    .venv/bin/python benchmarks/bench_training.py            # full budgets (about 10 minutes)
    .venv/bin/python benchmarks/bench_training.py --quick    # small budgets, a smoke run
    .venv/bin/python benchmarks/bench_training.py --only reverse dates

Prints one table: each experiment with its goal, its result, wall time and seed.

1. reverse (length 16, 10 symbols): held-out exact match, goal 100% within 60 s;
2. date translation: held-out exact match, goal >= 99% within 5 minutes;
3. the toy translation task: Transformer vs AttentionSeq2SeqRNN vs Seq2SeqRNN at an equal
   parameter budget and an equal time budget (BLEU and exact match on the test split, and the
   first step at which validation exact match reached 99%);
4. a GPT's validation loss on the Python standard library's source text after a fixed budget;
5. training throughput (target tokens/s) of our Transformer against a same-size model
   built from ``torch.nn.Transformer`` in the same run; goal: ratio >= 1.0.

English pronunciation (CMUdict) has a script of its own: ``benchmarks/bench_g2p.py``.
"""

from __future__ import annotations

import argparse
import math
import time
from typing import NamedTuple

import torch
from torch import nn

from transformer_lib.models import GPT, Transformer
from transformer_lib.objectives import LMObjective, Seq2SeqObjective, translation_scores
from transformer_lib.rnn import AttentionSeq2SeqRNN, Seq2SeqRNN
from transformer_lib.runtime import seed_everything
from transformer_lib.tasks import Seq2SeqTask, date_task, reverse_task, text_task, toy_translation_task
from transformer_lib.train_config import TrainConfig
from transformer_lib.trainer import Trainer


def n_params(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def transformer_for(task: Seq2SeqTask, dropout: float = 0.1) -> Transformer:
    """The benchmarks' Transformer: d_model 64, 4 heads, 2 + 2 layers, d_ff 256."""
    n = len(task.vocab)
    return Transformer(n, n, 64, 4, 2, 2, 256, dropout, task.max_src_len + task.max_tgt_len + 8)


def train_within(trainer: Trainer, seconds: float, chunk: int) -> list[tuple[int, float]]:
    """Train in chunks of ``chunk`` steps (evaluating after each) until the target, ``max_steps`` or ``seconds``.

    Returns ``(step, seconds since the start)`` after each chunk; the last entry is the whole run.
    """
    start, marks = time.perf_counter(), []
    while trainer.step < trainer.config.max_steps and time.perf_counter() - start < seconds:
        stopped = trainer.fit(stop_at=trainer.step + chunk).stopped_early
        marks.append((trainer.step, time.perf_counter() - start))
        if stopped:
            break
    return marks


class Run(NamedTuple):
    scores: dict[str, float]  # on the test split
    wall: float
    steps: int
    to_valid_99: tuple[int, float] | None  # (step, seconds) of the first evaluation with valid EM >= 99%


def seq2seq_run(model: nn.Module, task: Seq2SeqTask, seconds: float, seed: int, lr: float = 1e-3,
                batch_size: int = 64, chunk: int = 200, target: float | None = 1.0, schedule: str = "inverse_sqrt",
                max_steps: int = 100_000) -> Run:
    """Train ``model`` on ``task`` for at most ``seconds`` and score it on the test split."""
    config = TrainConfig(max_steps=max_steps, lr=lr, schedule=schedule, warmup_steps=100, eval_every=chunk, seed=seed,
                         progress=False,
                         target_metric=None if target is None else "exact_match", target_value=target,
                         target_direction=None if target is None else "max")
    trainer = Trainer(model, Seq2SeqObjective(), config, task.loader("train", batch_size, seed=seed),
                      task.loader("valid", 100))
    marks = train_within(trainer, seconds, chunk)
    exact = dict(zip(trainer.history.eval_steps, trainer.history.metrics["exact_match"]))
    to_99 = next(((step, t) for step, t in marks if exact.get(step, 0.0) >= 0.99), None)
    return Run(translation_scores(trainer.model, task, "test"), marks[-1][1], trainer.step, to_99)


def rnn_of_size(cls: type, task: Seq2SeqTask, budget: int) -> nn.Module:
    """The ``cls`` RNN whose parameter count is closest to ``budget`` (embedding = hidden size)."""
    n = len(task.vocab)
    size = min(range(16, 513, 4), key=lambda h: abs(n_params(cls(n, n, h, h)) - budget))
    return cls(n, n, size, size)


class TorchTransformer(nn.Module):
    """The same encoder-decoder built from ``torch.nn.Transformer`` (learned positions)."""

    def __init__(self, n_vocab: int, d_model: int, heads: int, layers: int, d_ff: int, dropout: float, max_len: int):
        super().__init__()
        self.src_embedding, self.tgt_embedding = nn.Embedding(n_vocab, d_model), nn.Embedding(n_vocab, d_model)
        self.position = nn.Embedding(max_len, d_model)
        self.core = nn.Transformer(d_model, heads, layers, layers, d_ff, dropout, batch_first=True)
        self.output_proj = nn.Linear(d_model, n_vocab)
        self.scale = math.sqrt(d_model)

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        def embed(ids: torch.Tensor, table: nn.Embedding) -> torch.Tensor:
            return table(ids) * self.scale + self.position(torch.arange(ids.shape[1], device=ids.device))

        T = tgt.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=tgt.device).triu(1)  # True = masked, here
        hidden = self.core(embed(src, self.src_embedding), embed(tgt, self.tgt_embedding), tgt_mask=causal,
                           src_key_padding_mask=src == 0, tgt_key_padding_mask=tgt == 0,
                           memory_key_padding_mask=src == 0, tgt_is_causal=True)
        return self.output_proj(hidden)


def throughput(model: nn.Module, batches: list[dict], rounds: int) -> float:
    """Target tokens per second of full training steps (forward, backward, AdamW) on ``batches``."""
    objective, optimizer = Seq2SeqObjective(), torch.optim.AdamW(model.parameters(), lr=1e-4)
    model.train()
    best = 0.0
    for _ in range(rounds):
        start, tokens = time.perf_counter(), 0
        for batch in batches:
            optimizer.zero_grad()
            objective.loss(model, batch).backward()
            optimizer.step()
            tokens += int((batch["tgt"][:, 1:] != 0).sum())
        best = max(best, tokens / (time.perf_counter() - start))
    return best


Row = tuple[str, str, str, float]  # experiment, goal, result, wall seconds


def reverse(seed: int, scale: float) -> list[Row]:
    seed_everything(seed)
    task = reverse_task(n_train=10_000, n_valid=200, n_test=1000, length=16, n_symbols=10, seed=seed)
    model = transformer_for(task, dropout=0.0)
    # A cosine schedule that anneals to zero at 1000 steps (about 45 s on 2 idle cores) ends on a
    # model that gets every test string right; stopping at a validation target can end a few short.
    run = seq2seq_run(model, task, 60 * scale, seed, lr=3e-3, chunk=250, target=None, schedule="cosine", max_steps=1000)
    return [("reverse L=16, 10 symbols, Transformer", "EM 100% in 60 s",
             f"test EM {run.scores['exact_match']:.1%} ({run.steps} steps)", run.wall)]


def dates(seed: int, scale: float) -> list[Row]:
    seed_everything(seed)
    task = date_task(n_train=20_000, n_valid=500, n_test=1000, seed=seed)
    run = seq2seq_run(transformer_for(task), task, 300 * scale, seed, chunk=250, target=0.995)
    return [("date -> ISO, Transformer", "EM >= 99% in 5 min",
             f"test EM {run.scores['exact_match']:.1%} ({run.steps} steps)", run.wall)]


def translation(seed: int, scale: float) -> list[Row]:
    """Equal parameters and equal time; the first step with validation EM >= 99% tells them apart."""
    task = toy_translation_task(n_train=10_000, n_valid=500, n_test=1000, seed=seed)
    seed_everything(seed)
    reference = transformer_for(task)
    budget = n_params(reference)
    rows = []
    for name, model in [("Transformer", reference),
                        ("AttentionSeq2SeqRNN", rnn_of_size(AttentionSeq2SeqRNN, task, budget)),
                        ("Seq2SeqRNN", rnn_of_size(Seq2SeqRNN, task, budget))]:
        seed_everything(seed)
        run = seq2seq_run(model, task, 90 * scale, seed, lr=3e-3 if "RNN" in name else 1e-3, chunk=100, target=None)
        reached = "never" if run.to_valid_99 is None else f"at step {run.to_valid_99[0]} ({run.to_valid_99[1]:.0f} s)"
        rows.append((f"toy translation, {name} ({n_params(model) / 1e3:.0f}k params)", "same params, 90 s",
                     f"BLEU {run.scores['bleu']:.1f}, EM {run.scores['exact_match']:.1%} ({run.steps} steps); "
                     f"valid EM >= 99% {reached}", run.wall))
    return rows


def gpt(seed: int, scale: float) -> list[Row]:
    seed_everything(seed)
    text = text_task(block_size=64)
    model = GPT(len(text.vocab), 96, 4, 3, 384, 64, dropout=0.0)
    steps = int(600 * scale)
    config = TrainConfig(max_steps=steps, lr=2e-3, schedule="cosine", warmup_steps=max(1, steps // 10),
                         weight_decay=0.1, seed=seed, progress=False)
    trainer = Trainer(model, LMObjective(), config, text.loader("train", 32, seed=seed), text.loader("valid", 64))
    history = trainer.fit()
    return [(f"GPT on stdlib source ({n_params(model) / 1e3:.0f}k params, chars)", f"{steps} steps of 32x64",
             f"valid loss {history.last('valid_loss'):.3f} nats/char (uniform {math.log(len(text.vocab)):.2f})",
             history.wall_time)]


def speed(seed: int, scale: float) -> list[Row]:
    seed_everything(seed)
    task = reverse_task(n_train=2000, n_valid=10, n_test=10, length=16, seed=seed)
    loader = task.loader("train", 64, seed=seed)
    batches = [b for b, _ in zip(loader, range(int(30 * scale) or 3))]
    ours = transformer_for(task)
    torch_twin = TorchTransformer(len(task.vocab), 64, 4, 2, 256, 0.1, task.max_src_len + task.max_tgt_len + 8)
    start = time.perf_counter()
    rate_ours, rate_torch = throughput(ours, batches, 3), throughput(torch_twin, batches, 3)
    return [(f"throughput, ours {n_params(ours) / 1e3:.0f}k vs nn.Transformer {n_params(torch_twin) / 1e3:.0f}k",
             "ratio >= 1.0", f"{rate_ours:,.0f} vs {rate_torch:,.0f} tok/s, ratio {rate_ours / rate_torch:.2f}",
             time.perf_counter() - start)]


EXPERIMENTS = {"reverse": reverse, "dates": dates, "translation": translation, "gpt": gpt, "throughput": speed}


def print_table(rows: list[Row]) -> None:
    cells = [("experiment", "goal", "result", "wall")] + [(n, g, r, f"{w:.0f} s") for n, g, r, w in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(4)]
    for i, c in enumerate(cells):
        print("| " + " | ".join(text.ljust(w) for text, w in zip(c, widths)) + " |")
        if i == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small budgets: a smoke run of every experiment")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads(), help="torch CPU threads")
    parser.add_argument("--only", nargs="+", choices=list(EXPERIMENTS), default=list(EXPERIMENTS), metavar="NAME",
                        help=f"run only these experiments (of {', '.join(EXPERIMENTS)})")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    scale = 0.1 if args.quick else 1.0
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, seed {args.seed}, "
          f"{'quick' if args.quick else 'full'} run")
    rows = []
    for name in args.only:
        for row in EXPERIMENTS[name](args.seed, scale):
            print(f"  done: {row[0]}: {row[2]} ({row[3]:.0f} s)", flush=True)
            rows.append(row)
    print()
    print_table(rows)
    print(f"\nseed {args.seed}; torch {torch.__version__}; {torch.get_num_threads()} CPU threads")


if __name__ == "__main__":
    main()
