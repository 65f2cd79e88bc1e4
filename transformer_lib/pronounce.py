"""Command line: pronounce words with a model trained by ``python -m transformer_lib.train --task g2p``.

    python -m transformer_lib.train --task g2p --n-train 200000 --out runs/g2p
    python -m transformer_lib.pronounce --run runs/g2p phoenix tomato blorft

prints each word and its predicted ARPAbet phonemes, one word a line. Made-up words work as well
as dictionary words; a word with characters outside a-z and the apostrophe is refused. Several
runs (``--run runs/a --run runs/b``) are decoded as one :class:`~transformer_lib.ensemble.Ensemble`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from transformer_lib.ensemble import Ensemble
from transformer_lib.g2p import check_spelling, g2p_task, pronounce
from transformer_lib.runtime import load_checkpoint
from transformer_lib.train import build_model


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m transformer_lib.pronounce", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("words", nargs="+", metavar="WORD", help="words to pronounce (a-z and the apostrophe)")
    p.add_argument("--run", action="append", metavar="FOLDER",
                   help="output folder of a training run (checkpoint.pt, metrics.json); default runs/g2p; "
                        "repeat it to decode several runs as one ensemble")
    p.add_argument("--beam-size", type=int, default=1, help="1: greedy; more: beam search (--model transformer only)")
    p.add_argument("--length-penalty", type=float, default=0.6, help="beam search's length penalty alpha")
    return p


def _trained_run(parser: argparse.ArgumentParser, run: Path, beam_size: int) -> argparse.Namespace:
    """The training flags of the g2p run in ``run``, or a parser error that says what is wrong with it."""
    if not (run / "metrics.json").is_file() or not (run / "checkpoint.pt").is_file():
        parser.error(f"no trained run in {str(run)!r}: expected checkpoint.pt and metrics.json written by "
                     f"python -m transformer_lib.train --task g2p --out {run}")
    trained = argparse.Namespace(**json.loads((run / "metrics.json").read_text())["args"])
    if trained.task != "g2p":
        parser.error(f"the run in {str(run)!r} learned --task {trained.task}, not g2p")
    if beam_size > 1 and trained.model != "transformer":
        parser.error(f"--beam-size {beam_size} needs transformer runs, got --model {trained.model} in {str(run)!r}")
    return trained


def main(argv: Sequence[str] | None = None) -> int:
    """Print ``word  PHONEMES`` for every word; exits with a message on a bad word or a missing run."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        words = [check_spelling(w) for w in args.words]
    except ValueError as error:
        parser.error(str(error))
    folders = [Path(folder) for folder in args.run or ["runs/g2p"]]
    runs = [_trained_run(parser, folder, args.beam_size) for folder in folders]
    if len({trained.stress for trained in runs}) > 1:
        parser.error("the runs must all be trained with --stress or all without: their phoneme sets differ")
    task = g2p_task(stress=runs[0].stress)  # the whole dictionary: build_model sizes positions by its longest word
    models = []
    for run, trained in zip(folders, runs):
        model = build_model(trained, task)
        model.load_state_dict(load_checkpoint(run / "checkpoint.pt")["model"])
        models.append(model)
    model = models[0] if len(models) == 1 else Ensemble(models)
    for word, phonemes in zip(words, pronounce(model, task, words, args.beam_size, args.length_penalty)):
        print(f"{word}  {' '.join(phonemes)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
