"""English pronunciation (CMUdict without stress): a g2p Transformer trained for 10 minutes.

    .venv/bin/python benchmarks/bench_g2p.py                     # compare setups: validation words
    .venv/bin/python benchmarks/bench_g2p.py --split test        # the chosen setup, scored once on test
    .venv/bin/python benchmarks/bench_g2p.py --quick             # a smoke run (a few seconds of training)
    .venv/bin/python benchmarks/bench_g2p.py --device cuda       # the larger GPU setup

On the CPU two small Transformers (3 encoder layers, 1 decoder layer) train side by side, one
process per core; each is scored alone (greedy), then both as one ensemble (greedy and beam
search). Word and phoneme error rates are printed beside the published 33.9% WER of
Phonetisaurus and 30.2% of a 3-layer, 256-unit Transformer (the CMU Sphinx g2p-seq2seq README as
revised on 2018-05-11, on its own split of another CMUdict release); goal: WER below 33.9% on the CPU.

Setups are compared on the validation words only (the default ``--split valid``); the test words
score the chosen setup, once. ``benchmarks/results/g2p.md`` records how the setups were chosen
and what each run measured.
"""

from __future__ import annotations

import argparse
import dataclasses
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from typing import NamedTuple

import torch
from bench_training import Row, n_params, print_table

from transformer_lib.ensemble import Ensemble
from transformer_lib.g2p import G2PObjective, g2p_task, pronunciation_scores
from transformer_lib.models import Transformer
from transformer_lib.runtime import seed_everything
from transformer_lib.train_config import TrainConfig
from transformer_lib.trainer import Trainer


class G2PSetup(NamedTuple):
    """A g2p run: the Transformer's size, its training, and how many are trained side by side."""

    d_model: int
    heads: int
    encoder_layers: int
    decoder_layers: int
    d_ff: int
    dropout: float
    batch_size: int
    lr: float  # peak of the cosine schedule
    members: int  # Transformers trained at once, one process each, then decoded as one ensemble


#: How these were chosen, and what they measured: benchmarks/results/g2p.md.
G2P_SETUPS = {"cpu": G2PSetup(64, 4, 3, 1, 128, 0.0, 64, 3e-3, members=2),
              "cuda": G2PSetup(256, 4, 3, 3, 1024, 0.1, 256, 1e-3, members=1)}


def g2p_model(setup: G2PSetup, n_vocab: int) -> Transformer:
    """The setup's Transformer, letters and phonemes sharing one vocabulary of ``n_vocab`` ids."""
    return Transformer(n_vocab, n_vocab, setup.d_model, setup.heads, setup.encoder_layers, setup.decoder_layers,
                       setup.d_ff, setup.dropout, max_len=64)


def g2p_member(setup: G2PSetup, seed: int, seconds: float, device: str, threads: int) -> tuple[dict, int]:
    """Train one g2p Transformer for ``seconds`` (in a process of its own); return its weights and steps.

    The cosine schedule needs its length in steps: after 50 steps, then every 500, the step rate so far gives the
    trainer a new config whose ``max_steps`` ends the schedule when the time budget ends (the
    schedule is a function of the step and the trainer's config, as when a run is resumed). Set once,
    from steps 50 to 550, it ended a CPU run at 551 of 600 s and a GPU run at 402 of 510 s.
    """
    torch.set_num_threads(threads)
    seed_everything(seed)
    task = g2p_task(seed=seed)
    model = g2p_model(setup, len(task.vocab))
    config = TrainConfig(max_steps=100_000, lr=setup.lr, schedule="cosine", warmup_steps=300,
                         device=device, seed=seed, progress=False)
    # No validation set during training: nothing is decided on it while training, and decoding it
    # every 500 steps cost 5% of the steps; the validation words are scored at the end.
    trainer = Trainer(model, G2PObjective(label_smoothing=0.1, task=task), config,
                      task.loader("train", setup.batch_size, seed=seed))
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds and trainer.step < trainer.config.max_steps:
        if trainer.step:
            remaining = max(1, int(trainer.step * (seconds - elapsed) / elapsed))
            trainer.config = dataclasses.replace(trainer.config, max_steps=trainer.step + remaining)  # validated anew
        trainer.fit(stop_at=min(trainer.config.max_steps, trainer.step + (500 if trainer.step else 50)))
    return {name: tensor.cpu() for name, tensor in trainer.model.state_dict().items()}, trainer.step


def g2p(seed: int, scale: float, device: str = "cpu", split: str = "valid", n_scored: int | None = None) -> list[Row]:
    """CMUdict without stress: train for ``600 * scale`` seconds, score the words of ``split``
    (all of them, or a sample of ``n_scored``).

    The setup's members train at once, seeds ``seed``, ``seed + 1``, ..., each in a process with
    an equal share of the CPU threads; each is scored alone (greedy), then all together as an
    :class:`~transformer_lib.ensemble.Ensemble` (greedy and beam search); a setup of one member
    is scored by itself with both.
    """
    setup = G2P_SETUPS["cuda" if device.startswith("cuda") else "cpu"]
    threads = max(1, torch.get_num_threads() // setup.members)
    train = partial(g2p_member, setup, seconds=600 * scale, device=device, threads=threads)
    start = time.perf_counter()
    with ProcessPoolExecutor(setup.members, mp_context=multiprocessing.get_context("spawn")) as pool:
        trained = list(pool.map(train, [seed + i for i in range(setup.members)]))
    wall = time.perf_counter() - start
    task = g2p_task(seed=seed, **{f"n_{split}": n_scored})
    models = []
    for weights, _ in trained:
        model = g2p_model(setup, len(task.vocab))
        model.load_state_dict(weights)
        models.append(model.to(device))
    name = (f"g2p CMUdict no stress, Transformer ({setup.encoder_layers} + {setup.decoder_layers} layers, "
            f"{n_params(models[0]) / 1e3:.0f}k params, {device}, "
            f"{threads} thread{'s' if threads > 1 else ''})")
    goal, words = "WER < 33.9% (WFST), 30.2% (Transformer)", f"{len(task.words[split]):,d} {split} words"
    alone = [pronunciation_scores(model, task, split) for model in models]  # greedy
    rows = [(f"{name}, seed {seed + i}", goal, f"{split} WER {scores['wer']:.1%} PER {scores['per']:.1%} greedy "
             f"({steps} steps of {setup.batch_size}, {words})", wall)
            for i, (scores, (_, steps)) in enumerate(zip(alone, trained))]
    if setup.members > 1:
        decoder, what = Ensemble(models), f"the {setup.members} above as one ensemble"
        greedy = pronunciation_scores(decoder, task, split)
    else:  # one model: its greedy scores are those above
        (decoder,), what, (greedy,) = models, "the model above", alone
    beam = pronunciation_scores(decoder, task, split, beam_size=4)
    rows.append((f"g2p, {what}, greedy and beam 4", goal,
                 f"{split} WER {greedy['wer']:.1%} PER {greedy['per']:.1%} greedy, WER {beam['wer']:.1%} "
                 f"PER {beam['per']:.1%} beam 4 ({words})", wall))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: 3 s of training, 100 words scored")
    parser.add_argument("--seed", type=int, default=0, help="the first member's seed (the next ones follow)")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads(), help="torch CPU threads in all")
    parser.add_argument("--device", default="cpu", help="cpu: two small members; cuda: one larger model")
    parser.add_argument("--split", choices=["valid", "test"], default="valid",
                        help="the words scored: valid to compare setups, test only for the chosen one")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    scale = 0.005 if args.quick else 1.0
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, seed {args.seed}, "
          f"{'quick' if args.quick else 'full'} run, scored on the {args.split} words")
    rows = g2p(args.seed, scale, args.device, args.split, n_scored=100 if args.quick else None)
    print()
    print_table(rows)
    print(f"\nseed {args.seed}; torch {torch.__version__}; {torch.get_num_threads()} CPU threads")


if __name__ == "__main__":
    main()
