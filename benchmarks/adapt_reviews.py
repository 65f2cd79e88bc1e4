"""Chapter 12's adaptation runs, ten seeds each: classifiers from few labels, LoRA, SFT and DPO.

    .venv/bin/python benchmarks/adapt_reviews.py            # writes results/reviews_adapt.json (about 6 minutes
                                                            # of CPU, on 2 cores about 3 minutes)
    .venv/bin/python benchmarks/adapt_reviews.py --quick    # a smoke run: one seed, the smallest runs; writes nothing

Each run takes seconds, but chapter 12 states verdicts about every seed ("every seed of the probe
above every seed from scratch"), and such a verdict needs about ten seeds; the page cannot spend
the several minutes that takes while the book builds. So this script runs every configuration of the
page (:mod:`transformer_lib.review_adapt`) for ``--seeds`` seeds from the two committed bodies
(``results/reviews_bodies.pt``) and commits the scores; the page reads them and trains seed 0 of
some configurations again, to check the file against the code.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime, timezone
from functools import cache
from pathlib import Path

import torch

from transformer_lib.models import GPT
from transformer_lib.provenance import code_commit, machine_record, save_results
from transformer_lib.review_adapt import (
    LABELS_PER_CLASS,
    PreferencePairs,
    classify,
    dpo_policy,
    dpo_reference,
    dpo_scores,
    exact_match,
    held_out_pairs,
    sft_exact_match,
    training_pairs,
)
from transformer_lib.reviews import ReviewSplits, review_gpt, review_splits

RESULTS = Path(__file__).resolve().parent / "results"
LORA_LABELS, RANKS = 16, (1, 4, 16)
BETAS = (0.1, 0.5, 2.0)


@cache
def setting() -> tuple[ReviewSplits, dict[str, GPT]]:
    """The splits and the two committed bodies (loaded once per worker)."""
    torch.set_num_threads(1)  # tiny tensors: one thread is fastest
    record = torch.load(RESULTS / "reviews_bodies.pt", weights_only=True)
    bodies = {}
    for name, state in record.items():
        bodies[name] = review_gpt(0)
        bodies[name].load_state_dict(state)
        bodies[name].eval()
    return review_splits(), bodies


@cache
def dpo_setting() -> tuple[GPT, PreferencePairs, PreferencePairs]:
    """DPO's reference (an early SFT model), its training pairs and its held-out pairs (once per worker)."""
    splits, bodies = setting()
    reference = dpo_reference(splits, bodies["closings"])
    return reference, training_pairs(splits, reference), held_out_pairs(splits, reference)


def run(task: dict) -> dict:
    """One run of ``task`` (its ``kind`` and settings); the task with its scores and CPU seconds."""
    splits, bodies = setting()
    start = time.process_time()
    kind, seed = task["kind"], task["seed"]
    if kind == "classifier":
        accuracy, trainable = classify(splits, bodies, task["method"], task["per_class"], seed, body=task["body"],
                                       rank=task.get("rank"))
        scores = {"accuracy": accuracy, "trainable": trainable}
    elif kind == "sft":
        scores = {"exact": sft_exact_match(splits, bodies["closings"], task["answer_only"], seed)}
    else:
        reference, pairs, held_out = dpo_setting()
        policy = dpo_policy(reference, pairs, task["beta"], seed)
        scores = dpo_scores(policy, reference, held_out, splits.test[:500], task["beta"])
    result = {**task, **scores, "cpu_seconds": time.process_time() - start}
    print(" ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in result.items()), flush=True)
    return result


def tasks(seeds: range, quick: bool) -> list[dict]:
    """Every run of the page, for every seed."""
    label_counts = LABELS_PER_CLASS[:1] if quick else LABELS_PER_CLASS
    grid = [("scratch", None, k) for k in label_counts] + [
        (method, body, k) for k in label_counts for body in ("closings", "plain") for method in ("probe", "full")]
    out = [{"kind": "classifier", "method": m, "body": b, "per_class": k, "seed": s} for m, b, k in grid for s in seeds]
    out += [{"kind": "classifier", "method": "lora", "body": "closings", "per_class": LORA_LABELS, "rank": r, "seed": s}
            for r in RANKS[:1 if quick else None] for s in seeds]
    if not quick:
        out += [{"kind": "sft", "answer_only": a, "seed": s} for a in (True, False) for s in seeds]
        out += [{"kind": "dpo", "beta": b, "seed": s} for b in BETAS for s in seeds]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--quick", action="store_true", help="a smoke run: one seed, the smallest runs; writes nothing")
    args = parser.parse_args()
    seeds = range(1 if args.quick else args.seeds)
    started, wall, commit = datetime.now(timezone.utc), time.perf_counter(), code_commit(RESULTS.parent)
    todo = tasks(seeds, args.quick)
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        runs = list(pool.map(run, todo))
    print(f"{len(runs)} runs in {time.perf_counter() - wall:.0f} s of wall time, {args.jobs} at a time")
    if args.quick:
        return
    splits, bodies = setting()
    reference, pairs, held_out = dpo_setting()
    record = {"command": " ".join(["python", "benchmarks/adapt_reviews.py", *sys.argv[1:]]),
              "date": started.strftime("%Y-%m-%d %H:%M UTC"), **machine_record(), "commit": commit,
              "bodies": "reviews_bodies.pt", "seeds": list(seeds), "labels_per_class": list(LABELS_PER_CLASS),
              "lora_labels": LORA_LABELS, "ranks": list(RANKS), "betas": list(BETAS),
              "sft_before": exact_match(bodies["closings"], splits.test[:500]),
              "dpo_reference": dpo_scores(reference, reference, held_out, splits.test[:500], 1.0),
              "dpo_own": pairs.own, "dpo_held_own": held_out.own, "runs": runs}
    save_results(RESULTS / "reviews_adapt.json", record)
    print(f"wrote {RESULTS / 'reviews_adapt.json'}")


if __name__ == "__main__":
    main()
