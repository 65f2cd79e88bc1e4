"""Results of the training side, measured on this machine's CPU (not a timed test).

    .venv/bin/python benchmarks/bench_training.py            # full budgets (about 10 minutes)
    .venv/bin/python benchmarks/bench_training.py --quick    # small budgets, a smoke run

Prints one table: each experiment with its goal, its result, wall time and seed.

1. reverse (length 16, 10 symbols): held-out exact match, goal 100% within 60 s;
2. date translation: held-out exact match, goal >= 99% within 5 minutes;
3. the toy translation task: Transformer vs AttentionSeq2SeqRNN vs Seq2SeqRNN at an equal
   parameter budget and an equal time budget (BLEU and exact match on the test split);
4. a GPT's validation loss on the Python standard library's source text after a fixed budget;
5. training throughput (target tokens/s) of our Transformer against a same-size model
   built from ``torch.nn.Transformer`` in the same run; goal: ratio >= 1.0.
"""

from __future__ import annotations

import argparse
import math
import time

import torch
from torch import nn

from transformer_lib.models import GPT, Transformer
from transformer_lib.rnn import AttentionSeq2SeqRNN, Seq2SeqRNN
from transformer_lib.tasks import Seq2SeqTask, date_task, reverse_task, text_task, toy_translation_task
from transformer_lib.training import Seq2SeqAdapter, TrainConfig, Trainer, seed_everything, translation_scores


def n_params(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def transformer_for(task: Seq2SeqTask, d_model: int = 64, layers: int = 2, dropout: float = 0.1,
                    norm_first: bool = False) -> Transformer:
    n = len(task.vocab)
    return Transformer(n, n, d_model, 4, layers, layers, 4 * d_model, dropout, task.max_src_len + task.max_tgt_len + 8,
                       norm_first=norm_first)


def train_within(trainer: Trainer, seconds: float, chunk: int) -> float:
    """Train in chunks of ``chunk`` steps (evaluating after each) until the target, ``max_steps`` or ``seconds``."""
    start = time.perf_counter()
    while trainer.step < trainer.config.max_steps and time.perf_counter() - start < seconds:
        if trainer.fit(stop_at=trainer.step + chunk).stopped_early:
            break
    return time.perf_counter() - start


def seq2seq_run(model: nn.Module, task: Seq2SeqTask, seconds: float, seed: int, lr: float = 1e-3,
                batch_size: int = 64, chunk: int = 200, target: float | None = 1.0, schedule: str = "inverse_sqrt",
                max_steps: int = 100_000) -> tuple[dict, float, int]:
    """Train ``model`` on ``task`` for at most ``seconds``; return test scores, wall time, steps."""
    config = TrainConfig(max_steps=max_steps, lr=lr, schedule=schedule, warmup_steps=100, eval_every=chunk, seed=seed,
                         progress=False,
                         target_metric=None if target is None else "exact_match", target_value=target)
    trainer = Trainer(model, config, task.loader("train", batch_size, seed=seed), task.loader("valid", 100))
    wall = train_within(trainer, seconds, chunk)
    return translation_scores(trainer.module, task, "test"), wall, trainer.step


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
    adapter, optimizer = Seq2SeqAdapter(), torch.optim.AdamW(model.parameters(), lr=1e-4)
    model.train()
    best = 0.0
    for _ in range(rounds):
        start, tokens = time.perf_counter(), 0
        for batch in batches:
            optimizer.zero_grad()
            adapter.loss(model, batch).backward()
            optimizer.step()
            tokens += int((batch["tgt"][:, 1:] != 0).sum())
        best = max(best, tokens / (time.perf_counter() - start))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small budgets: a smoke run of every experiment")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads(), help="torch CPU threads")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    scale = 0.1 if args.quick else 1.0
    seed = args.seed
    rows = []

    def row(name: str, goal: str, result: str, wall: float) -> None:
        rows.append((name, goal, result, f"{wall:.0f} s"))
        print(f"  done: {name}: {result} ({wall:.0f} s)", flush=True)

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, seed {seed}, {'quick' if args.quick else 'full'} run")

    seed_everything(seed)
    task = reverse_task(n_train=10_000, n_valid=200, n_test=1000, length=16, n_symbols=10, seed=seed)
    model = transformer_for(task, dropout=0.0)
    # A cosine schedule that anneals to zero at 1000 steps (about 45 s on 2 idle cores) ends on a
    # model that gets every test string right; stopping at a validation target can end a few short.
    scores, wall, steps = seq2seq_run(model, task, 60 * scale, seed, lr=3e-3, chunk=250, target=None,
                                      schedule="cosine", max_steps=1000)
    row("reverse L=16, 10 symbols, Transformer", "EM 100% in 60 s", f"test EM {scores['exact_match']:.1%} ({steps} steps)", wall)

    seed_everything(seed)
    task = date_task(n_train=20_000, n_valid=500, n_test=1000, seed=seed)
    model = transformer_for(task)
    scores, wall, steps = seq2seq_run(model, task, 300 * scale, seed, chunk=250, target=0.995)
    row("date -> ISO, Transformer", "EM >= 99% in 5 min", f"test EM {scores['exact_match']:.1%} ({steps} steps)", wall)

    task = toy_translation_task(n_train=10_000, n_valid=500, n_test=1000, seed=seed)
    seed_everything(seed)
    reference = transformer_for(task)
    budget = n_params(reference)
    for name, model in [("Transformer", reference), ("AttentionSeq2SeqRNN", rnn_of_size(AttentionSeq2SeqRNN, task, budget)),
                        ("Seq2SeqRNN", rnn_of_size(Seq2SeqRNN, task, budget))]:
        seed_everything(seed)
        scores, wall, steps = seq2seq_run(model, task, 90 * scale, seed, lr=3e-3 if "RNN" in name else 1e-3, target=None)
        row(f"toy translation, {name} ({n_params(model) / 1e3:.0f}k params)", "same params, 90 s",
            f"BLEU {scores['bleu']:.1f}, EM {scores['exact_match']:.1%} ({steps} steps)", wall)

    seed_everything(seed)
    text = text_task(block_size=64)
    gpt = GPT(len(text.vocab), 96, 4, 3, 384, 64, dropout=0.0)
    steps = int(600 * scale)
    config = TrainConfig(max_steps=steps, lr=2e-3, schedule="cosine", warmup_steps=max(1, steps // 10),
                         weight_decay=0.1, seed=seed, progress=False)
    trainer = Trainer(gpt, config, text.loader("train", 32, seed=seed), text.loader("valid", 64), "lm")
    start = time.perf_counter()
    history = trainer.fit()
    row(f"GPT on stdlib source ({n_params(gpt) / 1e3:.0f}k params, chars)", f"{steps} steps of 32x64",
        f"valid loss {history.last('valid_loss'):.3f} nats/char (uniform {math.log(len(text.vocab)):.2f})",
        time.perf_counter() - start)

    seed_everything(seed)
    task = reverse_task(n_train=2000, n_valid=10, n_test=10, length=16, seed=seed)
    loader = task.loader("train", 64, seed=seed)
    batches = [b for b, _ in zip(loader, range(int(30 * scale) or 3))]
    n = len(task.vocab)
    ours = transformer_for(task)
    torch_twin = TorchTransformer(n, 64, 4, 2, 256, 0.1, task.max_src_len + task.max_tgt_len + 8)
    start = time.perf_counter()
    rate_ours, rate_torch = throughput(ours, batches, 3), throughput(torch_twin, batches, 3)
    row(f"throughput, ours {n_params(ours) / 1e3:.0f}k vs nn.Transformer {n_params(torch_twin) / 1e3:.0f}k",
        "ratio >= 1.0", f"{rate_ours:,.0f} vs {rate_torch:,.0f} tok/s, ratio {rate_ours / rate_torch:.2f}",
        time.perf_counter() - start)

    widths = [max(len(r[i]) for r in rows + [("experiment", "goal", "result", "wall")]) for i in range(4)]
    line = lambda cells: "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"  # noqa: E731
    print()
    print(line(("experiment", "goal", "result", "wall")))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print(line(r))
    print(f"\nseed {seed}; torch {torch.__version__}; {torch.get_num_threads()} CPU threads")


if __name__ == "__main__":
    main()
