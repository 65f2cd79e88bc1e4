"""Command line: pronounce words with a model trained by ``python -m transformer_lib.train --task g2p``.

    python -m transformer_lib.train --task g2p --n-train 200000 --out runs/g2p
    python -m transformer_lib.pronounce --run runs/g2p phoenix tomato blorft

prints each word and its predicted ARPAbet phonemes, one word a line. Made-up words work as well
as dictionary words; a word with characters outside a-z and the apostrophe is refused.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from transformer_lib.g2p import check_spelling, g2p_task, pronounce
from transformer_lib.train import build_model
from transformer_lib.runtime import load_checkpoint


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m transformer_lib.pronounce", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("words", nargs="+", metavar="WORD", help="words to pronounce (a-z and the apostrophe)")
    p.add_argument("--run", default="runs/g2p", help="output folder of the training run (checkpoint.pt, metrics.json)")
    p.add_argument("--beam-size", type=int, default=1, help="1: greedy; more: beam search (--model transformer only)")
    p.add_argument("--length-penalty", type=float, default=0.6, help="beam search's length penalty alpha")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Print ``word  PHONEMES`` for every word; exits with a message on a bad word or a missing run."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        words = [check_spelling(w) for w in args.words]
    except ValueError as error:
        parser.error(str(error))
    run = Path(args.run)
    if not (run / "metrics.json").is_file() or not (run / "checkpoint.pt").is_file():
        parser.error(f"no trained run in {str(run)!r}: expected checkpoint.pt and metrics.json written by "
                     f"python -m transformer_lib.train --task g2p --out {run}")
    trained = argparse.Namespace(**json.loads((run / "metrics.json").read_text())["args"])
    if trained.task != "g2p":
        parser.error(f"the run in {str(run)!r} learned --task {trained.task}, not g2p")
    if args.beam_size > 1 and trained.model != "transformer":
        parser.error(f"--beam-size {args.beam_size} needs a transformer run, got --model {trained.model}")
    task = g2p_task(stress=trained.stress)  # the whole dictionary: build_model sizes positions by its longest word
    model = build_model(trained, task)
    model.load_state_dict(load_checkpoint(run / "checkpoint.pt")["model"])
    for word, phonemes in zip(words, pronounce(model, task, words, args.beam_size, args.length_penalty)):
        print(f"{word}  {' '.join(phonemes)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
