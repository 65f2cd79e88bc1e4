"""Chapter 12's pretraining, committed: the two bodies (text with closing words, plain text), each at its best rate.

    .venv/bin/python benchmarks/pretrain_reviews.py            # writes results/reviews_pretrain.json and
                                                               # results/reviews_bodies.pt (about 8 minutes of CPU)
    .venv/bin/python benchmarks/pretrain_reviews.py --quick    # a smoke run; writes nothing

Chapter 12's GPT (d_model 32, two layers; GPT-2's initialisation) learns the words of the reviews
within a few hundred steps, but the closing word, which needs the review's sentiment, only after
thousands: more than the book can spend while it builds. So this script pretrains each corpus at
every rate of ``--lrs`` for ``--steps`` steps (seed 0), keeps the rate with the lowest validation
loss, and commits the two kept models' weights (state dicts, read with ``weights_only=True``)
and every run's validation curve. It also trains the first ``--check-steps`` steps of the kept
schedule's twin (the same rate, a run of ``--check-steps`` steps) for seeds 0, 1 and 2 on the text
with closings: chapter 12 trains seed 0's again as the book builds and compares, exactly on the
kind of machine the file records and otherwise within twice the three seeds' spread.
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

from transformer_lib.provenance import code_commit, machine_record, save_results
from transformer_lib.reviews import pretrain, review_splits

RESULTS = Path(__file__).resolve().parent / "results"
CORPORA = {"closings": 0.5, "plain": 0.0}  # the share of reviews followed by their closing word
CHECK_SEEDS = (0, 1, 2)


def run(corpus: str, lr: float, steps: int, eval_every: int, seed: int = 0, keep: bool = True) -> dict:
    """One pretraining run: its curve, final validation loss, CPU seconds and (``keep``) its weights."""
    torch.set_num_threads(1)
    start = time.process_time()
    model, history = pretrain(review_splits(), CORPORA[corpus], lr, steps, eval_every=eval_every, seed=seed)
    result = {"corpus": corpus, "lr": lr, "steps": steps, "seed": seed, "valid": history.last("valid_loss"),
              "curve": [[s, v] for s, v in zip(history.eval_steps, history.metrics["valid_loss"])],
              "cpu_seconds": time.process_time() - start}
    print(f"{corpus:>8}, lr {lr:g}, {steps} steps, seed {seed}: validation {result['valid']:.4f} "
          f"({result['cpu_seconds']:.0f} s CPU)", flush=True)
    return {**result, "state_dict": model.state_dict()} if keep else result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lrs", type=float, nargs="+", default=(3e-3, 1e-2, 3e-2))
    parser.add_argument("--steps", type=int, default=12000)
    parser.add_argument("--eval-every", type=int, default=1000)
    parser.add_argument("--check-steps", type=int, default=600)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 40 steps, one rate; writes nothing")
    args = parser.parse_args()
    if args.quick:
        args.lrs, args.steps, args.eval_every, args.check_steps = (1e-2,), 40, 20, 20
    started, wall, commit = datetime.now(timezone.utc), time.perf_counter(), code_commit(RESULTS.parent)
    grid = [(corpus, lr) for corpus in CORPORA for lr in args.lrs]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        runs = list(pool.map(run, *zip(*grid), [args.steps] * len(grid), [args.eval_every] * len(grid)))
        chosen = {corpus: min((r for r in runs if r["corpus"] == corpus), key=lambda r: r["valid"])
                  for corpus in CORPORA}
        checks = list(pool.map(run, ["closings"] * len(CHECK_SEEDS), [chosen["closings"]["lr"]] * len(CHECK_SEEDS),
                               [args.check_steps] * len(CHECK_SEEDS), [0] * len(CHECK_SEEDS), CHECK_SEEDS,
                               [False] * len(CHECK_SEEDS)))
    print(f"{len(runs) + len(checks)} runs in {time.perf_counter() - wall:.0f} s of wall time, {args.jobs} at a time")
    if args.quick:
        return
    record = {"command": " ".join(["python", "benchmarks/pretrain_reviews.py", *sys.argv[1:]]),
              "date": started.strftime("%Y-%m-%d %H:%M UTC"), **machine_record(), "commit": commit,
              "corpora": CORPORA, "steps": args.steps, "lrs": list(args.lrs),
              "runs": [{k: v for k, v in r.items() if k != "state_dict"} for r in runs],
              "chosen": {corpus: r["lr"] for corpus, r in chosen.items()}, "checks": checks,
              "weights": "reviews_bodies.pt"}
    save_results(RESULTS / "reviews_bodies.pt", {corpus: r["state_dict"] for corpus, r in chosen.items()})
    save_results(RESULTS / "reviews_pretrain.json", record)
    print(f"wrote {RESULTS / 'reviews_bodies.pt'} and {RESULTS / 'reviews_pretrain.json'}")


if __name__ == "__main__":
    main()
