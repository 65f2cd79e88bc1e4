"""The scaling section's grid: six GPT sizes x six step budgets x three learning rates, one process per core.

    .venv/bin/python benchmarks/bench_scale.py                   # the whole grid; writes results/scale.json
    .venv/bin/python benchmarks/bench_scale.py --quick           # two sizes, one budget, two rates (a smoke run)
    .venv/bin/python benchmarks/bench_scale.py --jobs 2 --out results/scale.json
    .venv/bin/python benchmarks/bench_scale.py --add-seeds 1 2      # more seeds at each cell's chosen rate

Every run is :func:`transformer_lib.scaling.train_budget`: its own warm-up and cosine schedule over
its budget, the same seed and the same stream of training batches for every run, final losses on
the validation and test characters of chapter 8's corpus. The book's scaling section reads the
file this writes (the learning rate of each size and budget is chosen there, on validation) and
trains a column of the grid again as it builds, to check the file against the code that made it.
The longest budget also records its validation loss along the way (``curve``), to set a mid-run
checkpoint beside the final point of a shorter run.

The whole grid is about 70 minutes of one idle CPU core (its cost grows with width and budget).
``--add-seeds`` reads the file, takes for each size and budget the rate whose seed-0 run has the
lowest validation loss, trains that cell again with each new seed (a new initialisation and a new
stream of batches) and adds those runs to the file: about 45 more minutes of CPU for two seeds.
The file records the machine (its CPU and the capability PyTorch finds on it), the date, every
command that wrote it, the Python and PyTorch versions and the SHA-256 of the corpus (shipped with
the library, :mod:`transformer_lib.corpus`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from datetime import datetime, timezone
from pathlib import Path

import torch

from transformer_lib.corpus import python_corpus
from transformer_lib.provenance import code_commit, machine_record, same_machine_kind, save_results
from transformer_lib.scaling import SIZES, train_budget
from transformer_lib.tasks import text_task

CONTEXT, BATCH = 64, 16
BUDGETS = (250, 500, 1000, 2000, 4000, 8000)
LRS = (4e-3, 8e-3, 1.6e-2)
CURVE_POINTS = 16  # evaluations along the runs of the longest budget
RESULTS = Path(__file__).resolve().parent / "results" / "scale.json"


def _run(d_model: int, layers: int, steps: int, lr: float, curve_every: int, seed: int = 0) -> dict:
    torch.set_num_threads(1)
    return train_budget(text_task(block_size=CONTEXT), d_model, layers, steps, lr, BATCH, seed=seed,
                        curve_every=curve_every)


def chosen_rates(runs: list[dict]) -> dict[tuple[int, int], float]:
    """``{(d_model, steps): lr}``: the rate of the seed-0 run with the lowest finite validation loss."""
    best: dict[tuple[int, int], dict] = {}
    for r in runs:
        key = (r["d_model"], r["steps"])
        if r.get("seed", 0) == 0 and math.isfinite(r["valid"]) and (key not in best or r["valid"] < best[key]["valid"]):
            best[key] = r
    return {key: r["lr"] for key, r in best.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="two sizes, one budget of 64 steps, two rates")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="runs at once, one core each")
    parser.add_argument("--out", type=Path, default=None, help=f"where to write the JSON (default {RESULTS}; "
                        "none with --quick)")
    parser.add_argument("--add-seeds", type=int, nargs="+", default=(), metavar="SEED",
                        help="add runs of these seeds, at each cell's chosen rate, to the existing file")
    args = parser.parse_args()
    sizes, budgets, lrs = (SIZES[:2], (64,), LRS[:2]) if args.quick else (SIZES, BUDGETS, LRS)
    previous = None
    if args.add_seeds:
        previous = json.loads((args.out or RESULTS).read_text(encoding="utf-8"))
        if not same_machine_kind(previous):  # a file's seeds come from one kind of machine (provenance.py)
            raise SystemExit(f"the file was made on {previous['machine']} (Python {previous['python'].split()[0]}, "
                             f"PyTorch {previous['torch']}): add seeds on that kind of machine, or run the grid again")
        budgets, rates = previous["budgets"], chosen_rates(previous["runs"])
        grid = [(d, layers, steps, rates[d, steps], steps // CURVE_POINTS if steps == max(budgets) else 0, seed)
                for d, layers in sizes for steps in budgets for seed in args.add_seeds]
    else:
        grid = [(d, layers, steps, lr, steps // CURVE_POINTS if steps == max(budgets) else 0)
                for d, layers in sizes for steps in budgets for lr in lrs]
    grid.sort(key=lambda run: -run[0] ** 2 * run[1] * run[2])  # the longest first, so that none runs alone at the end
    start, runs, commit = time.perf_counter(), [], code_commit(RESULTS.parents[1])  # the code that runs
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for done in as_completed([pool.submit(_run, *run) for run in grid]):
            run = done.result()
            runs.append(run)
            print(f"d_model {run['d_model']:3d}, {run['steps']:5d} steps, lr {run['lr']:.0e}, seed {run['seed']}: "
                  f"valid {run['valid']:.3f}, test {run['test']:.3f} nats/char ({run['seconds']:.0f} s CPU) "
                  f"[{len(runs)}/{len(grid)}]", flush=True)
    print(f"{len(runs)} runs in {time.perf_counter() - start:.0f} s of wall time, {args.jobs} at a time")
    out = args.out or (None if args.quick else RESULTS)
    if out is not None:
        command = " ".join(["python", "benchmarks/bench_scale.py", *sys.argv[1:]])
        date = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        record = {"command": command, "date": date, **machine_record(), "commit": commit,
                  "corpus_sha256": python_corpus().sha256,
                  "jobs": args.jobs, "context": CONTEXT,
                  "batch_size": BATCH, "budgets": list(budgets), "lrs": list(lrs), "runs": runs}
        if previous is not None:
            provenance = ("command", "date", "machine", "cpu_capability", "python", "torch", "commit")
            history = previous.get("history", [{k: previous[k] for k in provenance if k in previous}])
            record["history"] = [*history, {k: record[k] for k in provenance}]
            record["lrs"], record["runs"] = previous["lrs"], previous["runs"] + runs
        record["runs"].sort(key=lambda r: (r["d_model"], r["steps"], r["lr"], r.get("seed", 0)))
        save_results(out, record)
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
