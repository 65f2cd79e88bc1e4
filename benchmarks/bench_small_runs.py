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

The models the pages open are also committed, so that a page trains one of them again, not all:

    .venv/bin/python benchmarks/bench_small_runs.py --weights   # results/small_runs_weights.pt (~2 minutes)

trains again, at the file's chosen rates, every seed of the models the pages open (chapter 8's
attention-only model, recording its repeat loss every 100 steps on 256 monitor sequences, and
chapter 11's three layouts), refuses to save them unless each test loss is exactly the file's (it runs only on
the machine kind the file records), and saves their weights (state dicts, loaded with
``weights_only=True``) with the same provenance.

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
from transformer_lib.provenance import code_commit, machine_record, same_machine_kind, save_results
from transformer_lib.runtime import seed_everything
from transformer_lib.tasks import text_task

RESULTS = Path(__file__).resolve().parent / "results" / "small_runs.json"
WEIGHTS = RESULTS.with_name("small_runs_weights.pt")
#: Chapter 8's repeated-segment experiment: the task, the two models' size, the training, the held-out sequences.
REPEAT = {"vocab_size": 64, "half": 16, "concentration": 1.0, "task_seed": 0, "d_model": 64, "heads": 4, "layers": 2,
          "d_ff": 256, "steps": 1200, "batch_size": 32, "valid_sequences": 200, "valid_seed": 2,
          "test_sequences": 500, "test_seed": 3}
REPEAT_MODELS = ("attention-only", "gpt")
REPEAT_RATES = (1e-3, 3e-3, 1e-2, 3e-2)
ABLATION_RATES = (1.5e-3, 3e-3, 6e-3, 1.2e-2, 2.4e-2)
SEEDS = (0, 1, 2)
#: The models whose weights the pages open: chapter 8's attention-only model, chapter 11's three layouts.
OPENED = {"ch08_repeat": ("attention-only",), "ch11": ("GPT-2 layout", "RoPE", "all (Llama layout)")}
#: The held-out sequences chapter 8 follows the attention-only model's training on: (how many, generator seed).
MONITOR = (256, 4)


def repeat_model(kind: str, seed: int) -> torch.nn.Module:
    """Chapter 8's two models of the repeated-segment task, drawn from ``seed``."""
    seed_everything(seed)
    r = REPEAT
    if kind == "attention-only":
        return AttentionOnlyLM(r["vocab_size"], r["d_model"], r["heads"], r["layers"], 2 * r["half"])
    return GPT(r["vocab_size"], r["d_model"], r["heads"], r["layers"], r["d_ff"], 2 * r["half"])


def repeat_run(kind: str, lr: float, seed: int, keep: bool = False) -> dict:
    """Train one model on fresh sequences; its validation loss, and its test loss overall and on the repeat.

    With ``keep``, also its weights (``state_dict``) and the repeat loss along the way on the
    monitor sequences (``history``, as :func:`~transformer_lib.induction.train_on_repeats` returns it).
    """
    torch.set_num_threads(1)
    r = REPEAT
    task = repeat_task(vocab_size=r["vocab_size"], half=r["half"], concentration=r["concentration"],
                       seed=r["task_seed"])
    valid, _ = task.sample(r["valid_sequences"], torch.Generator().manual_seed(r["valid_seed"]))
    test, lengths = task.sample(r["test_sequences"], torch.Generator().manual_seed(r["test_seed"]))
    monitor = task.sample(MONITOR[0], torch.Generator().manual_seed(MONITOR[1])) if keep else None
    model = repeat_model(kind, seed)
    start = time.process_time()
    history = train_on_repeats(model, task, r["steps"], batch_size=r["batch_size"], lr=lr, seed=seed,
                               eval_every=100, eval_sequences=monitor)
    cpu = time.process_time() - start
    losses = sequence_losses(model, test)  # (sequences, T - 1)
    run = {"model": kind, "lr": lr, "seed": seed, "valid": sequence_losses(model, valid).mean().item(),
           "test": losses.mean().item(), "repeat": losses[parts(lengths, 2 * r["half"])["repeat"]].mean().item(),
           "cpu_seconds": cpu}
    return {**run, "state_dict": model.state_dict(), "history": history} if keep else run


def ablation_run(name: str, lr: float, seed: int, keep: bool = False) -> dict:
    """Train one of chapter 11's layouts; its width, parameters and losses (with ``keep``, its weights too)."""
    torch.set_num_threads(1)
    setup = AblationSetup()
    run = train_variant(setup, text_task(block_size=setup.context), variants(setup.heads)[name], lr, seed)
    scores = {"model": name, "lr": lr, "seed": seed, **{k: run[k] for k in ("d_ff", "params", "valid", "test")},
              "cpu_seconds": run["cpu_seconds"]}
    return {**scores, "state_dict": run["model"].state_dict()} if keep else scores


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


def save_opened_weights(jobs: int, out: Path) -> None:
    """Train again every seed of the models the pages open, check them against small_runs.json, save their weights."""
    record = json.loads(RESULTS.read_text(encoding="utf-8"))
    if not same_machine_kind(record):
        sys.exit(f"{RESULTS.name} was made on {record['machine']} ({record['cpu_capability']}, PyTorch "
                 f"{record['torch']}): its weights must come from the same kind of machine")
    started, commit = datetime.now(timezone.utc), code_commit(RESULTS.parents[1])
    entries = {"ch08_repeat": "models", "ch11": "variants"}
    jobs_list = [(part, name, record[part][entries[part]][name]["lr"], seed)
                 for part, names in OPENED.items() for name in names for seed in SEEDS]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        done = list(pool.map(opened_run, *zip(*jobs_list)))
    saved: dict[str, dict[str, list]] = {part: {name: [] for name in names} for part, names in OPENED.items()}
    for (part, name, _, seed), run in zip(jobs_list, done):
        filed = record[part][entries[part]][name]["runs"][SEEDS.index(seed)]
        print(f"{name:>20} seed {seed}: test {run['test']:.6f}, the file's {filed['test']:.6f}", flush=True)
        if run["test"] != filed["test"]:  # the same kind of machine: training is exactly reproducible
            sys.exit(f"{name}, seed {seed}, does not reproduce {RESULTS.name}: nothing saved")
        saved[part][name].append({key: run[key] for key in ("seed", "state_dict", "history") if key in run})
    weights = {"command": " ".join(["python", "benchmarks/bench_small_runs.py", *sys.argv[1:]]),
               "date": started.strftime("%Y-%m-%d %H:%M UTC"), **machine_record(), "commit": commit,
               "results": RESULTS.name, "monitor": list(MONITOR), **saved}
    save_results(out, weights)
    print(f"wrote {out} ({out.stat().st_size / 2**20:.1f} MiB)")


def opened_run(part: str, name: str, lr: float, seed: int) -> dict:
    """One of the opened runs, kept (a module-level function, so that worker processes can call it)."""
    return (repeat_run if part == "ch08_repeat" else ablation_run)(name, lr, seed, keep=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", type=Path, default=None, help=f"default {RESULTS} ({WEIGHTS} with --weights)")
    parser.add_argument("--weights", action="store_true",
                        help="train again the models the pages open and save their weights (after the file exists)")
    args = parser.parse_args()
    if args.weights:
        save_opened_weights(args.jobs, args.out or WEIGHTS)
        return
    args.out = args.out or RESULTS
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
    save_results(args.out, record)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
