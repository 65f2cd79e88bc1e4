"""The CLI: trains, writes checkpoint + metrics JSON + loss PNG, resumes, explains every flag."""

import dataclasses
import json

import pytest

from transformer_lib import objectives
from transformer_lib.data import PAD_ID, collate_pairs
from transformer_lib.train import SET_BY_THE_CLI, build_parser, main
from transformer_lib.train_config import TrainConfig

TINY = ["--task", "reverse", "--length", "4", "--n-symbols", "4", "--n-train", "64", "--n-valid", "16",
        "--n-test", "16", "--batch-size", "16", "--d-model", "16", "--heads", "2", "--layers", "1",
        "--d-ff", "32", "--warmup-steps", "2", "--eval-every", "2"]


def _history(out):
    return json.loads((out / "metrics.json").read_text())["history"]


def test_trains_and_writes_checkpoint_metrics_and_plot(tmp_path, capsys):
    out = tmp_path / "run"
    assert main([*TINY, "--max-steps", "3", "--out", str(out), "--device", "auto"]) == 0
    printed = capsys.readouterr().out
    assert "step      2  valid_loss" in printed and "test exact_match" in printed
    assert {p.name for p in out.iterdir()} >= {"checkpoint.pt", "metrics.json", "loss.png"}
    report = json.loads((out / "metrics.json").read_text())
    assert report["history"]["steps"] == [1, 2, 3]
    assert set(report["test"]) == {"exact_match", "token_accuracy", "bleu"}


def test_resume_continues_the_run(tmp_path):
    main([*TINY, "--max-steps", "4", "--out", str(tmp_path / "whole"), "--quiet"])
    main([*TINY, "--max-steps", "2", "--out", str(tmp_path / "part"), "--quiet"])
    main([*TINY, "--max-steps", "4", "--out", str(tmp_path / "part"), "--quiet", "--resume"])
    assert _history(tmp_path / "part")["loss"] == _history(tmp_path / "whole")["loss"]


@pytest.mark.parametrize("model", ["transformer", "rnn"])
def test_beam_search_scores_the_test_split(tmp_path, monkeypatch, beam_search_calls, model):
    """The test scores are those of what beam search returned. Here it searches (recorded by
    ``beam_search_calls``) and then answers right, the reversed source: exact match 1.0, which three
    steps of training never reach, so scores taken from greedy decoding would show it."""
    search = objectives.beam_search

    def searching_then_answering_right(model, src, max_len, **kwargs):
        search(model, src, max_len, **kwargs)
        sources = [[token for token in row if token != PAD_ID] for row in src.tolist()]
        return collate_pairs([(row, row[::-1]) for row in sources])["tgt"][:, 1:].to(src.device)

    monkeypatch.setattr(objectives, "beam_search", searching_then_answering_right)
    main([*TINY, "--model", model, "--max-steps", "3", "--out", str(tmp_path), "--quiet", "--beam-size", "3",
          "--length-penalty", "1.0"])
    report = json.loads((tmp_path / "metrics.json").read_text())
    assert beam_search_calls and set(beam_search_calls) == {(3, 1.0)}  # every test batch, as asked
    assert report["test"]["exact_match"] == report["test"]["token_accuracy"] == 1.0
    assert report["test"]["bleu"] == pytest.approx(100.0)


def test_training_flags_are_the_config_fields():
    parser = build_parser()
    defaults = parser.parse_args([])
    helps = {a.dest: a.help for a in parser._actions}
    for knob in dataclasses.fields(TrainConfig):
        if knob.name not in SET_BY_THE_CLI:
            assert getattr(defaults, knob.name) == knob.default and helps[knob.name] == knob.metadata["help"]
    args = parser.parse_args(["--grad-clip", "none", "--betas", "0.8", "0.9", "--compile", "--target-value", "0.5"])
    assert args.grad_clip is None and args.betas == [0.8, 0.9] and args.compile and args.target_value == 0.5


def test_help_explains_every_flag():
    parser = build_parser()
    flags = [a for a in parser._actions if a.option_strings]
    assert len(flags) > 25 and all(a.help for a in flags)
    assert "--resume" in parser.format_help()


def test_bad_arguments(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["--task", "nope"])
    assert "invalid choice: 'nope'" in capsys.readouterr().err
    with pytest.raises(ValueError, match="--model gpt does not fit --task reverse"):
        main([*TINY, "--model", "gpt", "--out", str(tmp_path)])
    with pytest.raises(ValueError, match="lr must be > 0, got -1.0"):
        main([*TINY, "--lr", "-1", "--out", str(tmp_path)])
    with pytest.raises(ValueError, match="--beam-size must be >= 1 \\(1 is greedy\\), got 0"):
        main([*TINY, "--beam-size", "0", "--out", str(tmp_path)])
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        main([*TINY, "--resume", "--out", str(tmp_path / "empty")])
