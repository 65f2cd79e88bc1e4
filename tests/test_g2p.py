"""English pronunciation on CMUdict: the loader, the split, the task, scoring, the CLI and `pronounce`."""

import json

import pytest
import torch

from transformer_lib.data import EOS_ID
from transformer_lib.g2p import (
    ALPHABET,
    SPLIT_FRACTIONS,
    G2PObjective,
    check_spelling,
    g2p_task,
    load_cmudict,
    phoneme_inventory,
    pronounce,
    pronunciation_scores,
)
from transformer_lib.models import Transformer
from transformer_lib.pronounce import main as pronounce_main
from transformer_lib.tasks import split_of
from transformer_lib.train import main as train_main
from transformer_lib.train import make_task


@pytest.fixture(scope="module")
def small():
    return g2p_task(n_train=200, n_valid=20, n_test=30, seed=1)


def test_the_dictionary_is_read_with_every_pronunciation_and_no_stress():
    words = load_cmudict()
    assert len(words) > 120_000
    assert words["phoenix"] == [("F", "IY", "N", "IH", "K", "S")]
    assert words["tomato"] == [("T", "AH", "M", "EY", "T", "OW"), ("T", "AH", "M", "AA", "T", "OW")]
    assert load_cmudict(stress=True)["tomato"][0] == ("T", "AH0", "M", "EY1", "T", "OW2")
    assert all(set(w) <= set(ALPHABET) for w in words)  # "a.m." and "able-bodied" are left out
    assert "a.m." not in words and "'bout" in words
    inventory = set(phoneme_inventory())
    assert len(inventory) == 39 and all(set(p) <= inventory for prons in words.values() for p in prons)
    assert len(phoneme_inventory(stress=True)) == 84


def test_pronunciations_that_differ_only_in_stress_are_merged():
    stressed, plain = load_cmudict(stress=True), load_cmudict()
    merged = [w for w in plain if len(plain[w]) < len(stressed[w])]
    assert merged and all(len(set(plain[w])) == len(plain[w]) for w in merged)


def test_split_is_by_word_deterministic_and_disjoint(small):
    assert split_of("phoenix", SPLIT_FRACTIONS) == split_of("phoenix", {"train": 90, "valid": 5, "test": 5})
    assert split_of("the", SPLIT_FRACTIONS) in ("train", "valid", "test")
    every = g2p_task()
    sets = {s: set(every.words[s]) for s in ("train", "valid", "test")}
    assert not (sets["train"] & sets["valid"] or sets["train"] & sets["test"] or sets["valid"] & sets["test"])
    sizes = {s: len(v) for s, v in sets.items()}
    total = sum(sizes.values())
    assert 0.89 < sizes["train"] / total < 0.91 and 0.04 < sizes["test"] / total < 0.06
    assert all(split_of(w, SPLIT_FRACTIONS) == s for s, words in small.words.items() for w in words)
    assert g2p_task(n_train=200, n_valid=20, n_test=30, seed=1).words == small.words  # seeded sample
    assert g2p_task(n_train=200, n_valid=20, n_test=30, seed=2).words["train"] != small.words["train"]


def test_task_pairs_letters_with_the_first_pronunciation(small):
    assert {s: len(small.split(s)) for s in ("train", "valid", "test")} == {"train": 200, "valid": 20, "test": 30}
    word = small.words["train"][0]
    src, tgt = small.train[0]
    assert "".join(small.tokens(src)) == word and tuple(small.tokens(tgt)) == small.lexicon[word][0]
    every = g2p_task(n_train=200, n_valid=20, n_test=30, seed=1, variants="all")
    assert len(every.train) == sum(len(small.lexicon[w]) for w in small.words["train"]) > 200
    assert make_task("g2p", n_train=5, n_valid=5, n_test=5).vocab.decode(list(range(4, 8))) == ["a", "b", "c", "d"]
    with pytest.raises(ValueError, match="variants must be 'first' or 'all', got 'some'"):
        g2p_task(variants="some")
    with pytest.raises(ValueError, match="n_test must be a positive integer or None"):
        g2p_task(n_test=0)


def test_spelling_outside_the_alphabet_is_refused(small):
    assert check_spelling("Zyxel's") == "zyxel's"
    expected = r"cannot spell 'naïve3': expected only the letters a-z and the apostrophe, got '3', 'ï'"
    with pytest.raises(ValueError, match=expected):
        small.encode_words(["cat", "naïve3"])
    with pytest.raises(ValueError, match="a word must be a non-empty string, got ''"):
        check_spelling("")


def test_pronounce_and_scores_of_an_untrained_model(small):
    torch.manual_seed(0)
    n = len(small.vocab)
    model = Transformer(n, n, 16, 2, 1, 1, 32, 0.0, 64)
    predicted = pronounce(model, small, ["blorft", "cat"])
    assert len(predicted) == 2 and all(isinstance(p, str) for row in predicted for p in row)
    assert pronounce(model, small, ["cat"], beam_size=3)[0] is not None
    scores = pronunciation_scores(model, small, "test")
    assert set(scores) == {"wer", "per"} and scores["wer"] == 1.0 and scores["per"] > 0.5
    metrics = G2PObjective(task=small).evaluate(model, small.loader("valid", 8), torch.device("cpu"))
    assert set(metrics) == {"valid_loss", "wer", "per"} and metrics["wer"] == 1.0  # no made-up exact match


class Oracle(torch.nn.Module):
    """Decodes every word of ``task`` to its *last* pronunciation: right, though not the trained one.

    It keeps the encoder-decoder protocol: ``decode`` puts all the probability on the next phoneme."""

    def __init__(self, task):
        super().__init__()
        self.task, self.weight = task, torch.nn.Parameter(torch.zeros(1))

    def encode(self, src):
        return src

    def decode(self, tgt, memory, src=None):
        logits = torch.full((*tgt.shape, len(self.task.vocab)), -1e9)
        for row, word_ids in enumerate(memory):
            answer = self.task.vocab.encode(list(self.task.lexicon["".join(self.task.tokens(word_ids))][-1]))
            answer += [EOS_ID] * (tgt.shape[1] + 1)
            for t in range(tgt.shape[1]):
                logits[row, t, answer[t]] = 0.0
        return logits


def test_a_match_with_any_pronunciation_counts():
    task = g2p_task(n_train=5, n_valid=5, n_test=400, seed=0)
    assert any(len(task.lexicon[w]) > 1 for w in task.words["test"])
    assert pronunciation_scores(Oracle(task), task, "test") == {"wer": 0.0, "per": 0.0}


TINY = ["--task", "g2p", "--n-train", "64", "--n-valid", "16", "--n-test", "16", "--batch-size", "16",
        "--d-model", "16", "--heads", "2", "--layers", "1", "--d-ff", "32", "--warmup-steps", "2", "--eval-every", "2"]


@pytest.mark.slow  # trains through the command line
def test_cli_trains_scores_by_wer_and_pronounces(tmp_path, capsys):
    out = tmp_path / "g2p"
    assert train_main([*TINY, "--max-steps", "2", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "step      2  valid_loss" in printed and " wer " in printed and "test wer" in printed
    report = json.loads((out / "metrics.json").read_text())
    assert set(report["test"]) == {"wer", "per"}
    assert pronounce_main(["--run", str(out), "Phoenix", "blorft"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == ["phoenix", "blorft"]
    assert pronounce_main(["--run", str(out), "--beam-size", "2", "cat"]) == 0
    with pytest.raises(SystemExit):
        pronounce_main(["--run", str(out), "x-ray"])
    assert "cannot spell 'x-ray': expected only the letters a-z and the apostrophe, got '-'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        pronounce_main(["--run", str(tmp_path / "nothing"), "cat"])
    assert "no trained run" in capsys.readouterr().err


@pytest.mark.slow  # three training runs through the command line
def test_cli_pronounces_with_several_runs_as_one_ensemble(tmp_path, capsys):
    runs = {name: tmp_path / name for name in ("a", "b", "stressed")}
    for name, out in runs.items():
        flags = ["--seed", "1"] if name == "b" else ["--stress"] if name == "stressed" else []
        assert train_main([*TINY, *flags, "--max-steps", "2", "--quiet", "--out", str(out)]) == 0
    capsys.readouterr()
    assert pronounce_main(["--run", str(runs["a"]), "--run", str(runs["b"]), "--beam-size", "2", "cat", "blorft"]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()] == ["cat", "blorft"]
    with pytest.raises(SystemExit):
        pronounce_main(["--run", str(runs["a"]), "--run", str(runs["stressed"]), "cat"])
    assert "all be trained with --stress or all without" in capsys.readouterr().err
