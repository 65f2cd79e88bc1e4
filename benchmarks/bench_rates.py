"""The peak learning rates of the book's small language models, each chosen on validation.

    .venv/bin/python benchmarks/bench_rates.py            # writes results/rates.json (about 5 minutes of CPU)
    .venv/bin/python benchmarks/bench_rates.py --jobs 1

Chapter 8 trains two models on the repeated-segment task (the attention-only model and a GPT of
the same width and depth with its feed-forward layers), and chapter 11 six layouts of the GPT at
equal parameters. Since the GPT's initialisation is GPT-2's, the rates the pages used before no
longer fit, and each model gets its own: seed 0 is trained at every rate of a grid, with the page's
own setup, and the rate with the lowest validation loss is kept. The pages read the chosen rates from
the file (and check that it was made with their setup); their runs, every seed, are trained as the
book builds. Chapter 8's long run and chapter 10's grid choose their rates in their own scripts
(``train_lm.py``, ``bench_scale.py``).

Validation: for the repeated-segment task, the mean loss of every prediction of 200 held-out
sequences (the page's validation sequences); for chapter 11, the validation split of chapter 8's
corpus in windows of the training context.
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
from transformer_lib.induction import AttentionOnlyLM, repeat_task, train_on_repeats
from transformer_lib.lm_training import sequence_losses
from transformer_lib.models import GPT
from transformer_lib.provenance import code_commit, machine_record
from transformer_lib.runtime import seed_everything
from transformer_lib.tasks import text_task

RESULTS = Path(__file__).resolve().parent / "results" / "rates.json"
#: Chapter 8's repeated-segment experiment: the task, the two models' size, the training, the validation sequences.
REPEAT = {"vocab_size": 64, "half": 16, "concentration": 1.0, "task_seed": 0, "d_model": 64, "heads": 4, "layers": 2,
          "d_ff": 256, "steps": 1200, "batch_size": 32, "valid_sequences": 200, "valid_seed": 2}
REPEAT_RATES = (1e-3, 3e-3, 1e-2, 3e-2)
ABLATION_RATES = (1.5e-3, 3e-3, 6e-3, 1.2e-2, 2.4e-2)


def repeat_model(kind: str) -> torch.nn.Module:
    """Chapter 8's two models of the repeated-segment task, drawn from seed 0."""
    seed_everything(0)
    r = REPEAT
    if kind == "attention-only":
        return AttentionOnlyLM(r["vocab_size"], r["d_model"], r["heads"], r["layers"], 2 * r["half"])
    return GPT(r["vocab_size"], r["d_model"], r["heads"], r["layers"], r["d_ff"], 2 * r["half"])


def repeat_run(kind: str, lr: float) -> tuple[str, float, float]:
    torch.set_num_threads(1)
    task = repeat_task(vocab_size=REPEAT["vocab_size"], half=REPEAT["half"], concentration=REPEAT["concentration"],
                       seed=REPEAT["task_seed"])
    valid, _ = task.sample(REPEAT["valid_sequences"], torch.Generator().manual_seed(REPEAT["valid_seed"]))
    model = repeat_model(kind)
    train_on_repeats(model, task, REPEAT["steps"], batch_size=REPEAT["batch_size"], lr=lr, seed=0)
    return kind, lr, sequence_losses(model, valid).mean().item()


def ablation_run(name: str, lr: float) -> tuple[str, float, float]:
    torch.set_num_threads(1)
    setup = AblationSetup()
    return name, lr, train_variant(setup, text_task(block_size=setup.context), variants(setup.heads)[name], lr)["valid"]


def choose(results: list[tuple[str, float, float]]) -> dict[str, dict]:
    """``{model: {"search": {rate: valid loss}, "lr": the rate with the lowest}}``."""
    chosen: dict[str, dict] = {}
    for name, lr, loss in results:
        chosen.setdefault(name, {"search": {}})["search"][repr(lr)] = loss
    for entry in chosen.values():
        entry["lr"] = float(min(entry["search"], key=entry["search"].get))
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    started, wall, commit = datetime.now(timezone.utc), time.perf_counter(), code_commit(RESULTS.parents[1])
    repeat_jobs = [(kind, lr) for kind in ("attention-only", "gpt") for lr in REPEAT_RATES]
    ablation_jobs = [(name, lr) for name in variants(AblationSetup().heads) for lr in ABLATION_RATES]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        repeat = list(pool.map(repeat_run, *zip(*repeat_jobs)))
        ablation = list(pool.map(ablation_run, *zip(*ablation_jobs)))
    for name, lr, loss in repeat + ablation:
        print(f"{name:>20} lr {lr:<7g} valid {loss:.4f}")
    print(f"{len(repeat) + len(ablation)} runs in {time.perf_counter() - wall:.0f} s of wall time")
    record = {"command": " ".join(["python", "benchmarks/bench_rates.py", *sys.argv[1:]]),
              "date": started.strftime("%Y-%m-%d %H:%M UTC"), **machine_record(), "commit": commit,
              "corpus_sha256": python_corpus().sha256,
              "ch08_repeat": {"setup": REPEAT, "models": choose(repeat)},
              "ch11": {"setup": AblationSetup().as_dict(), "variants": choose(ablation)}}
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    tmp.replace(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
