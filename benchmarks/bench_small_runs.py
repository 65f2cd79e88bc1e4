"""The book's small language-model runs: each model's learning rate chosen on validation, then its three seeds.

    .venv/bin/python benchmarks/bench_small_runs.py        # writes results/small_runs.json (about 15 minutes of CPU)
    .venv/bin/python benchmarks/bench_small_runs.py --jobs 1

Chapter 8 trains two models on the repeated-segment task (the attention-only model and a GPT of
the same width and depth with its feed-forward layers), and chapter 11 six layouts of the GPT at
equal parameters. Each model gets its own peak learning rate, chosen on validation: seed 0 is
trained at every rate of a grid, with the page's own setup, and the rate with the lowest
validation loss is kept. Then seeds 1 and 2 are trained at that rate, and every run at the chosen
rate is scored on test. The pages read this file: they print the search, take the rates, and train
again as the book builds the runs whose models they need (chapter 8 the attention-only model,
whose heads it opens; chapter 11 the three layouts it tests on longer sequences), which checks
the file against the code; the other runs' test losses (chapter 8's GPT, chapter 11's other three
layouts) are the file's, since the build cannot afford every run.

Validation and test, for the repeated-segment task: the mean loss of every prediction of held-out
sequences (the page's), and on test also the loss on the repeat alone; for chapter 11, the
validation and test modules of chapter 8's corpus in windows of the training context.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

import torch

from transformer_lib.ablation import AblationSetup, train_variant, variants
from transformer_lib.corpus import python_corpus
from transformer_lib.induction import AttentionOnlyLM, parts, repeat_task, train_on_repeats
from transformer_lib.lm_training import sequence_losses
from transformer_lib.models import GPT
from transformer_lib.provenance import code_commit, machine_record
from transformer_lib.runtime import seed_everything
from transformer_lib.tasks import text_task

RESULTS = Path(__file__).resolve().parent / "results" / "small_runs.json"
#: Chapter 8's repeated-segment experiment: the task, the two models' size, the training, the held-out sequences.
REPEAT = {"vocab_size": 64, "half": 16, "concentration": 1.0, "task_seed": 0, "d_model": 64, "heads": 4, "layers": 2,
          "d_ff": 256, "steps": 1200, "batch_size": 32, "valid_sequences": 200, "valid_seed": 2,
          "test_sequences": 500, "test_seed": 3}
REPEAT_MODELS = ("attention-only", "gpt")
REPEAT_RATES = (1e-3, 3e-3, 1e-2, 3e-2)
ABLATION_RATES = (1.5e-3, 3e-3, 6e-3, 1.2e-2, 2.4e-2)
SEEDS = (0, 1, 2)


def repeat_model(kind: str, seed: int) -> torch.nn.Module:
    """Chapter 8's two models of the repeated-segment task, drawn from ``seed``."""
    seed_everything(seed)
    r = REPEAT
    if kind == "attention-only":
        return AttentionOnlyLM(r["vocab_size"], r["d_model"], r["heads"], r["layers"], 2 * r["half"])
    return GPT(r["vocab_size"], r["d_model"], r["heads"], r["layers"], r["d_ff"], 2 * r["half"])


def repeat_run(kind: str, lr: float, seed: int) -> dict:
    """Train one model on fresh sequences; its validation loss, and its test loss overall and on the repeat."""
    torch.set_num_threads(1)
    r = REPEAT
    task = repeat_task(vocab_size=r["vocab_size"], half=r["half"], concentration=r["concentration"],
                       seed=r["task_seed"])
    valid, _ = task.sample(r["valid_sequences"], torch.Generator().manual_seed(r["valid_seed"]))
    test, lengths = task.sample(r["test_sequences"], torch.Generator().manual_seed(r["test_seed"]))
    model = repeat_model(kind, seed)
    start = time.process_time()
    train_on_repeats(model, task, r["steps"], batch_size=r["batch_size"], lr=lr, seed=seed)
    cpu = time.process_time() - start
    losses = sequence_losses(model, test)  # (sequences, T - 1)
    return {"model": kind, "lr": lr, "seed": seed, "valid": sequence_losses(model, valid).mean().item(),
            "test": losses.mean().item(), "repeat": losses[parts(lengths, 2 * r["half"])["repeat"]].mean().item(),
            "cpu_seconds": cpu}


def ablation_run(name: str, lr: float, seed: int) -> dict:
    """Train one of chapter 11's layouts; its width, parameters and losses."""
    torch.set_num_threads(1)
    setup = AblationSetup()
    run = train_variant(setup, text_task(block_size=setup.context), variants(setup.heads)[name], lr, seed)
    return {"model": name, "lr": lr, "seed": seed, **{k: run[k] for k in ("d_ff", "params", "valid", "test")},
            "cpu_seconds": run["cpu_seconds"]}


def search_then_seeds(pool: ProcessPoolExecutor, run, models, rates) -> dict[str, dict]:
    """``{model: {"search": {rate: seed 0's valid loss}, "lr": the lowest's rate, "runs": [one per seed]}}``."""
    search = list(pool.map(run, *zip(*[(m, lr, SEEDS[0]) for m in models for lr in rates])))
    chosen = {m: min((r for r in search if r["model"] == m), key=lambda r: r["valid"]) for m in models}
    more = list(pool.map(run, *zip(*[(m, chosen[m]["lr"], seed) for m in models for seed in SEEDS[1:]])))
    for r in search + more:
        print(f"{r['model']:>20} lr {r['lr']:<7g} seed {r['seed']}: valid {r['valid']:.4f}, test {r['test']:.4f}",
              flush=True)
    return {m: {"search": {repr(r["lr"]): r["valid"] for r in search if r["model"] == m}, "lr": chosen[m]["lr"],
                "runs": [chosen[m]] + [r for r in more if r["model"] == m]} for m in models}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    started, wall, commit = datetime.now(timezone.utc), time.perf_counter(), code_commit(RESULTS.parents[1])
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        repeat = search_then_seeds(pool, repeat_run, REPEAT_MODELS, REPEAT_RATES)
        ablation = search_then_seeds(pool, ablation_run, list(variants(AblationSetup().heads)), ABLATION_RATES)
    print(f"done in {time.perf_counter() - wall:.0f} s of wall time")
    record = {"command": " ".join(["python", "benchmarks/bench_small_runs.py", *sys.argv[1:]]),
              "date": started.strftime("%Y-%m-%d %H:%M UTC"), **machine_record(), "commit": commit,
              "corpus_sha256": python_corpus().sha256, "seeds": list(SEEDS),
              "ch08_repeat": {"setup": REPEAT, "models": repeat},
              "ch11": {"setup": AblationSetup().as_dict(), "variants": ablation}}
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    tmp.replace(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
