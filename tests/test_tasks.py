"""Tasks: seeded, splits disjoint, targets correct, bad arguments refused."""

import datetime

import pytest
import torch

from transformer_lib.corpus import python_corpus
from transformer_lib.data import RandomOffsetBatchSampler
from transformer_lib.tasks import (
    DATE_FORMATS,
    addition_task,
    date_task,
    reverse_task,
    sort_task,
    text_task,
    toy_translation_task,
)
from transformer_lib.train import TASKS, make_task

SMALL = {"n_train": 200, "n_valid": 40, "n_test": 40}


def _texts(task, split):
    return [(task.to_text(s), task.to_text(t)) for s, t in task.split(split)]


@pytest.mark.parametrize("name", ["copy", "reverse", "sort", "addition", "date", "toy_translation"])
def test_seeded_sized_and_disjoint(name):
    a, b = make_task(name, seed=3, **SMALL), make_task(name, seed=3, **SMALL)
    assert a.train == b.train and a.valid == b.valid and a.test == b.test
    assert make_task(name, seed=4, **SMALL).train != a.train
    sources = {split: {src for src, _ in _texts(a, split)} for split in ("train", "valid", "test")}
    assert [len(sources[s]) for s in ("train", "valid", "test")] == [200, 40, 40]  # no duplicates
    assert not (sources["train"] & sources["valid"] or sources["train"] & sources["test"]
                or sources["valid"] & sources["test"])


def test_split_of_a_source_does_not_depend_on_the_seed():
    a, b = reverse_task(length=5, n_symbols=4, seed=0, **SMALL), reverse_task(length=5, n_symbols=4, seed=1, **SMALL)
    train_a = {src for src, _ in _texts(a, "train")}
    test_b = {src for src, _ in _texts(b, "test")}
    assert not train_a & test_b


def test_targets_are_right():
    for src, tgt in _texts(reverse_task(**SMALL), "train"):
        assert tgt == src[::-1] and len(src) == 16 and set(src) <= set("abcdefghij")
    for src, tgt in _texts(sort_task(**SMALL), "valid"):
        assert tgt == "".join(sorted(src))
    for src, tgt in _texts(addition_task(**SMALL), "test"):
        a, b = src.split("+")
        assert int(tgt) == int(a) + int(b)


def test_dates_in_every_format_map_to_iso():
    task = date_task(n_train=2000, n_valid=100, n_test=100)
    pairs = _texts(task, "train")
    for src, tgt in pairs:
        day = datetime.date.fromisoformat(tgt)
        assert str(day.year % 100).zfill(2) in src and 2000 <= day.year <= 2099
    sources = [src for src, _ in pairs]
    assert any("/" in s for s in sources) and any("day, " in s for s in sources)
    assert any(s.count(".") == 2 for s in sources)
    example = datetime.date(2021, 3, 3)
    assert {f(example) for f in DATE_FORMATS} >= {
        "3 March 2021", "03/03/21", "Wednesday, March 3, 2021"}


def test_toy_translation_reorders_words():
    task = toy_translation_task(**SMALL)
    src, tgt = _texts(task, "train")[0]
    assert task.sep == " " and len(src.split()) == len(tgt.split())
    verbs = {"vido", "amat", "sekwa", "juva", "trova", "voka", "pasko", "audi"}
    assert all(t.split()[-1] in verbs for _, t in _texts(task, "train"))  # verb last


def test_text_task_reads_the_shipped_corpus_split_by_file():
    task = text_task(block_size=32)
    corpus = python_corpus()
    assert task.to_text(task.valid) == corpus.text("valid") and task.to_text(task.test) == corpus.text("test")
    assert len(task.train) == len(corpus.text("train")) and len(task.vocab) == 100  # 96 characters + 4 specials
    batch = next(iter(task.loader("train", batch_size=4)))
    assert batch["idx"].shape == (4, 32) and (batch["idx"][:, 1:] == batch["targets"][:, :-1]).all()
    assert isinstance(task.loader("train", 4).batch_sampler, RandomOffsetBatchSampler)  # training: any offset
    valid = list(task.loader("valid", batch_size=64))  # evaluation: every prediction once, in order
    assert torch.equal(torch.cat([b["idx"] for b in valid]).flatten()[:100], task.valid[:100])


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="unknown task 'nope'.*reverse"):
        make_task("nope")
    with pytest.raises(ValueError, match="cannot produce"):
        reverse_task(length=2, n_symbols=2, n_train=50, n_valid=5, n_test=5)
    with pytest.raises(ValueError, match="n_train must be a positive integer"):
        TASKS["copy"](n_train=0)
    with pytest.raises(ValueError, match=r"n_symbols must be in \[1, 26\], got 40"):
        reverse_task(n_symbols=40)
    with pytest.raises(ValueError, match=r"batch_size \(500\) is larger than the data \(40 examples\)"):
        reverse_task(**SMALL).loader("valid", batch_size=500)
