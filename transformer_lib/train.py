"""Command line: train a model of the course on one of its tasks.

    python -m transformer_lib.train --task reverse --model transformer --device auto --out runs/reverse

writes ``runs/reverse/checkpoint.pt``, ``metrics.json`` (history, test scores, settings) and
``loss.png``. ``--resume`` continues from the checkpoint in ``--out``. Under
``torchrun --nproc_per_node=N -m transformer_lib.train ...`` it trains data-parallel.
The training flags are the fields of :class:`~transformer_lib.train_config.TrainConfig`, with its
defaults and help texts. Run with ``--help`` for every flag.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import typing
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from torch import nn

from transformer_lib.g2p import G2PObjective, PronunciationTask, g2p_task, pronunciation_scores
from transformer_lib.models import GPT, Transformer
from transformer_lib.objectives import LMObjective, Seq2SeqObjective, translation_scores
from transformer_lib.rnn import AttentionSeq2SeqRNN, Seq2SeqRNN
from transformer_lib.runtime import seed_everything
from transformer_lib.tasks import (
    Seq2SeqTask,
    TextTask,
    addition_task,
    copy_task,
    date_task,
    reverse_task,
    sort_task,
    text_task,
    toy_translation_task,
)
from transformer_lib.train_config import TrainConfig
from transformer_lib.trainer import Trainer
from transformer_lib.viz import plot_history

MODELS = ("transformer", "attention_rnn", "rnn", "gpt")
#: Task factories by name (``--task``).
TASKS: dict[str, Callable[..., Seq2SeqTask | TextTask]] = {
    "copy": copy_task,
    "reverse": reverse_task,
    "sort": sort_task,
    "addition": addition_task,
    "date": date_task,
    "toy_translation": toy_translation_task,
    "text": text_task,
    "g2p": g2p_task,
}
# The metric that --target-value stops at, and whether it is minimised, when --target-metric is not given.
DEFAULT_TARGETS = {"text": ("valid_loss", "min"), "g2p": ("wer", "min")}
OTHER_TASKS_TARGET = ("exact_match", "max")
# TrainConfig fields that the CLI sets itself: the checkpoint goes to --out, --quiet hides the bar.
SET_BY_THE_CLI = ("checkpoint_path", "progress")


def _optional(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """``parse``, except that ``none`` gives ``None``."""
    return lambda text: None if text.lower() == "none" else parse(text)


def add_config_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per :class:`TrainConfig` field (``max_steps`` -> ``--max-steps``), default and help from the field."""
    group = parser.add_argument_group("training (TrainConfig)")
    hints = typing.get_type_hints(TrainConfig)
    for knob in dataclasses.fields(TrainConfig):
        if knob.name in SET_BY_THE_CLI:
            continue
        kind, options = hints[knob.name], dict(knob.metadata)
        if kind is bool:
            options["action"] = argparse.BooleanOptionalAction
        elif typing.get_origin(kind) is tuple:
            options.update(type=float, nargs=len(typing.get_args(kind)), metavar=("B1", "B2"))
        else:
            parse = next(t for t in typing.get_args(kind) or (kind,) if t is not type(None))
            options["type"] = _optional(parse) if type(None) in typing.get_args(kind) else parse
        group.add_argument("--" + knob.name.replace("_", "-"), default=knob.default, **options)


def build_parser() -> argparse.ArgumentParser:
    """The CLI's flags, each with its help text; the training ones come from :class:`TrainConfig`."""
    p = argparse.ArgumentParser(prog="python -m transformer_lib.train", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    run = p.add_argument_group("run")
    run.add_argument("--task", choices=sorted(TASKS), default="reverse",
                     help="what to learn (text: language modelling; g2p: English pronunciation, CMUdict)")
    run.add_argument("--model", choices=MODELS, default="transformer",
                     help="architecture; gpt only for --task text, the others only for translation-style tasks")
    run.add_argument("--out", default=None, help="output folder (default runs/<task>)")
    run.add_argument("--resume", action="store_true", help="continue from <out>/checkpoint.pt")
    run.add_argument("--quiet", action="store_true", help="print nothing but the final scores")
    data = p.add_argument_group("data")
    data.add_argument("--n-train", type=int, default=10_000,
                      help="training examples (translation-style tasks; g2p: words, 200000 for all of them)")
    data.add_argument("--n-valid", type=int, default=200, help="validation examples")
    data.add_argument("--n-test", type=int, default=1000, help="test examples")
    data.add_argument("--length", type=int, default=16, help="sequence length of copy/reverse/sort")
    data.add_argument("--n-symbols", type=int, default=10, help="alphabet size of copy/reverse/sort")
    data.add_argument("--stress", action="store_true", help="g2p: keep the vowels' stress marks (IY1, not IY)")
    data.add_argument("--block-size", type=int, default=128, help="context length of --task text")
    data.add_argument("--batch-size", type=int, default=64, help="examples per batch (per process)")
    model = p.add_argument_group("model and loss")
    model.add_argument("--d-model", type=int, default=64, help="model width (RNNs: hidden size)")
    model.add_argument("--heads", type=int, default=4, help="attention heads")
    model.add_argument("--layers", type=int, default=2, help="encoder and decoder layers each (gpt: blocks)")
    model.add_argument("--d-ff", type=int, default=256, help="feed-forward width")
    model.add_argument("--dropout", type=float, default=0.0, help="dropout probability")
    model.add_argument("--label-smoothing", type=float, default=0.0, help="label smoothing (the paper uses 0.1)")
    add_config_flags(p)
    decoding = p.add_argument_group("test decoding (translation-style tasks)")
    decoding.add_argument("--beam-size", type=int, default=1, help="1: greedy; more: beam search of that width")
    decoding.add_argument("--length-penalty", type=float, default=0.6,
                          help="beam search's length penalty alpha (Wu et al. 2016; 0: none)")
    return p


def make_task(name: str, **kwargs: Any) -> Seq2SeqTask | TextTask:
    """Build the task called ``name`` (a key of :data:`TASKS`) with the factory's keyword arguments."""
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; expected one of {sorted(TASKS)}")
    return TASKS[name](**kwargs)


def build_model(args: argparse.Namespace, task: Seq2SeqTask | TextTask) -> nn.Module:
    """The ``--model`` architecture sized by the flags, for ``task``'s vocabulary."""
    vocab_size = len(task.vocab)
    if (args.model == "gpt") != isinstance(task, TextTask):
        raise ValueError(f"--model {args.model} does not fit --task {args.task}: gpt is for text, the others translate")
    if args.model == "gpt":
        return GPT(vocab_size, args.d_model, args.heads, args.layers, args.d_ff, args.block_size, args.dropout)
    if args.model == "transformer":
        max_len = max(task.max_src_len, task.max_tgt_len + 2) + 8
        return Transformer(vocab_size, vocab_size, args.d_model, args.heads, args.layers, args.layers, args.d_ff,
                           args.dropout, max_len)
    rnn = AttentionSeq2SeqRNN if args.model == "attention_rnn" else Seq2SeqRNN
    return rnn(vocab_size, vocab_size, args.d_model, args.d_model)


def _task(args: argparse.Namespace) -> Seq2SeqTask | TextTask:
    if args.task == "text":
        return make_task("text", block_size=args.block_size)
    sizes = {"n_train": args.n_train, "n_valid": args.n_valid, "n_test": args.n_test, "seed": args.seed}
    if args.task in ("copy", "reverse", "sort"):
        sizes.update(length=args.length, n_symbols=args.n_symbols)
    if args.task == "g2p":
        sizes.update(stress=args.stress)
    return make_task(args.task, **sizes)


def _listed(metrics: dict[str, float]) -> str:
    """``"wer 0.3120  per 0.0810"``: metrics as the CLI prints them."""
    return "  ".join(f"{name} {value:.4f}" for name, value in metrics.items())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    args = build_parser().parse_args(argv)
    if args.beam_size < 1:
        raise ValueError(f"--beam-size must be >= 1 (1 is greedy), got {args.beam_size}")
    out = Path(args.out or f"runs/{args.task}")
    text = args.task == "text"
    knobs = {f.name: getattr(args, f.name) for f in dataclasses.fields(TrainConfig) if f.name not in SET_BY_THE_CLI}
    knobs["betas"] = tuple(knobs["betas"])
    if knobs["target_value"] is not None and knobs["target_metric"] is None:
        knobs["target_metric"], knobs["target_direction"] = DEFAULT_TARGETS.get(args.task, OTHER_TASKS_TARGET)
    config = TrainConfig(**knobs, checkpoint_path=str(out / "checkpoint.pt"), progress=False if args.quiet else None)
    seed_everything(args.seed)
    task = _task(args)
    model = build_model(args, task)
    if isinstance(task, PronunciationTask):
        objective = G2PObjective(label_smoothing=args.label_smoothing, task=task)
    else:
        objective = (LMObjective if text else Seq2SeqObjective)(label_smoothing=args.label_smoothing)
    trainer = Trainer(model, objective, config, task.loader("train", args.batch_size, seed=args.seed),
                      task.loader("valid", args.batch_size))
    say = (lambda *a: None) if args.quiet or not trainer.is_main else print
    if args.resume:
        trainer.resume(out / "checkpoint.pt")
        say(f"resumed from {out / 'checkpoint.pt'} at step {trainer.step}")
    n_params = sum(p.numel() for p in model.parameters())
    say(f"{args.model} ({n_params:,} parameters) on {args.task}, device {trainer.device}, seed {args.seed}")
    history = trainer.fit(on_eval=lambda step, m: say(f"step {step:>6}  " + _listed(m)))
    if text:
        test = objective.evaluate(trainer.model.eval(), task.loader("test", args.batch_size), trainer.device)
        test = {"test_loss": test["valid_loss"]}
    elif isinstance(task, PronunciationTask):
        test = pronunciation_scores(trainer.model, task, "test", beam_size=args.beam_size, alpha=args.length_penalty)
    else:
        test = translation_scores(trainer.model, task, "test", trainer.device, beam_size=args.beam_size,
                                  alpha=args.length_penalty)
    if trainer.is_main:
        report = {"test": test, "history": history.to_dict(), "args": vars(args), "parameters": n_params}
        (out / "metrics.json").write_text(json.dumps(report, indent=1))
        plot_history(history).savefig(out / "loss.png", dpi=100)
        print("test " + _listed(test) + f"  ({history.wall_time:.1f} s)")
        say(f"wrote {out / 'checkpoint.pt'}, {out / 'metrics.json'}, {out / 'loss.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
