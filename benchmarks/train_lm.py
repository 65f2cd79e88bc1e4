"""Chapter 8's long run: a GPT trained on the shipped corpus until it beats the best counted model, 3 seeds.

    .venv/bin/python benchmarks/train_lm.py                      # the learning-rate search, then 3 seeds; writes
                                                                 # results/lm.json and results/lm_gpt.pt
    .venv/bin/python benchmarks/train_lm.py --quick              # a smoke run of a few steps; writes nothing
    .venv/bin/python benchmarks/train_lm.py --device auto --compile --batch-size 64 --out results/lm_gpu.json

Every run is :func:`transformer_lib.lm_training.train_lm`, the loop chapter 8's own short run uses:
AdamW (weight decay 0.1), a warm-up over a tenth of the steps and a cosine to zero, windows of
``--context`` characters at random offsets of the training modules, the whole validation split
scored every ``--eval-every`` steps, and the weights of the best evaluation kept (early stopping on
validation). The peak learning rate is chosen first, on validation: seed 0 is trained for
``--search-steps`` steps (the same schedule, shorter) at each rate of ``--lrs``, and the rate with
the lowest validation loss trains every seed for ``--steps`` steps.

The results file records the command, the date, the machine (CPU, its capability as PyTorch sees
it, cores), Python and PyTorch, the corpus's SHA-256 and the code's commit, the search, and per seed
the validation curve against training characters and CPU seconds, and the test loss of the kept
weights. The weights of the first seed are saved as a plain state dict (``torch.save``; load with
``torch.load(path, weights_only=True)``): chapter 8 loads them and scores them as the book builds.

Runs go ``--jobs`` at a time, one CPU thread each. On one AMD EPYC core the default model
(d_model 128, 4 blocks, context 256, batches of 16) trains about 12,000 characters a second: the
default 11,000 steps are about an hour of CPU per seed, the search's 2,200 steps 12 minutes per rate.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

import torch

from transformer_lib.corpus import python_corpus
from transformer_lib.lm_training import train_lm, windows_loss
from transformer_lib.models import GPT
from transformer_lib.provenance import code_commit, machine_record, save_results
from transformer_lib.runtime import seed_everything
from transformer_lib.tasks import text_task

RESULTS = Path(__file__).resolve().parent / "results"


def python_vocab() -> list[str]:
    """The task's tokens, in id order (specials first): the page checks that it rebuilds the same vocabulary."""
    return text_task(block_size=2).vocab.tokens


def build_gpt(vocab_size: int, args: argparse.Namespace) -> GPT:
    return GPT(vocab_size, args.d_model, args.heads, args.layers, 4 * args.d_model, args.context)


def run(args: argparse.Namespace, seed: int, steps: int, lr: float, weights: Path | None = None) -> dict:
    """One run, in a worker process: train, then score the kept weights on test."""
    torch.set_num_threads(args.threads)
    task = text_task(block_size=args.context)
    seed_everything(seed)
    gpt = build_gpt(len(task.vocab), args)
    record = train_lm(gpt, task, steps, lr, args.batch_size, seed=seed, eval_every=steps // args.evals,
                      eval_at=[args.early_eval] if args.early_eval < steps else [], patience=args.patience,
                      device=args.device, compile=args.compile)
    record["test"] = windows_loss(gpt, task.test, task.block_size)
    record["parameters"] = sum(p.numel() for p in gpt.parameters())
    if weights is not None:
        weights.parent.mkdir(parents=True, exist_ok=True)
        state = {name: tensor.detach().cpu() for name, tensor in gpt.state_dict().items()}
        save_results(weights, state)
    print(f"seed {seed}, lr {lr:g}, {record['steps_run']} of {steps} steps: best valid {record['valid']:.4f} "
          f"(step {record['best']['step']}), test {record['test']:.4f}, {record['curve'][-1]['cpu_seconds']:.0f} s CPU",
          flush=True)
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--d-model", type=int, default=128)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--context", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--steps", type=int, default=11000, help="optimiser steps of each seed's run")
    parser.add_argument("--evals", type=int, default=22, help="validation evaluations along each run")
    parser.add_argument("--early-eval", type=int, default=150, help="one more evaluation at this step: chapter 8 "
                        "trains the run's first steps again as the book builds (about a minute of CPU) and checks it")
    parser.add_argument("--patience", type=int, default=None, help="stop after this many evaluations without a "
                        "new best (default: never)")
    parser.add_argument("--lrs", type=float, nargs="+", default=(2e-3, 4e-3, 8e-3), help="peak rates searched")
    parser.add_argument("--search-steps", type=int, default=2200, help="steps of each search run (seed 0)")
    parser.add_argument("--lr", type=float, default=None, help="skip the search: train every seed at this rate")
    parser.add_argument("--seeds", type=int, nargs="+", default=(0, 1, 2))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="runs at once")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads of each run")
    parser.add_argument("--device", default="cpu", help="cpu, or auto (CUDA, then MPS, then CPU)")
    parser.add_argument("--compile", action="store_true", help="torch.compile the model (on a GPU)")
    parser.add_argument("--out", type=Path, default=RESULTS / "lm.json")
    parser.add_argument("--weights", type=Path, default=RESULTS / "lm_gpt.pt", help="the first seed's weights")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 40 steps, 2 rates, one seed, no files")
    args = parser.parse_args()
    if args.quick:
        args.steps, args.search_steps, args.evals, args.lrs, args.seeds = 40, 20, 2, (1e-3, 2e-3), (0,)
        args.early_eval = 10
    started, wall, commit = datetime.now(timezone.utc), time.perf_counter(), code_commit(RESULTS.parent)
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        search = []
        if args.lr is None:
            search = list(pool.map(run, [args] * len(args.lrs), [args.seeds[0]] * len(args.lrs),
                                   [args.search_steps] * len(args.lrs), args.lrs))
        lr = args.lr if args.lr is not None else min(search, key=lambda r: r["valid"])["lr"]
        weights = [None if args.quick or i else args.weights for i in range(len(args.seeds))]
        runs = list(pool.map(run, [args] * len(args.seeds), args.seeds, [args.steps] * len(args.seeds),
                             [lr] * len(args.seeds), weights))
    print(f"{len(search) + len(runs)} runs in {time.perf_counter() - wall:.0f} s of wall time, {args.jobs} at a time")
    if args.quick:
        return
    record = {
        "command": " ".join(["python", "benchmarks/train_lm.py", *sys.argv[1:]]),
        "date": started.strftime("%Y-%m-%d %H:%M UTC"), **machine_record(), "threads": args.threads,
        "jobs": args.jobs, "corpus_sha256": python_corpus().sha256, "commit": commit,
        "model": {"d_model": args.d_model, "layers": args.layers, "heads": args.heads, "d_ff": 4 * args.d_model,
                  "context": args.context},
        "vocab": python_vocab(), "lr": lr, "search": search, "runs": runs,
        "weights": {"file": args.weights.name, "seed": args.seeds[0]},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    save_results(args.out, record)
    print(f"wrote {args.out} and {args.weights}")


if __name__ == "__main__":
    main()
