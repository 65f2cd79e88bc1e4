"""Batching: padding, specials, bucketing, resumable order, sharding across ranks."""

import pytest
import torch

from transformer_lib.corpus import python_corpus
from transformer_lib.data import BOS_ID, EOS_ID, BucketBatchSampler, collate_pairs, lm_loader
from transformer_lib.tasks import reverse_task


def test_collate_pads_and_wraps_targets():
    batch = collate_pairs([([5, 6, 7], [8]), ([5], [9, 9])])
    assert batch["src"].tolist() == [[5, 6, 7], [5, 0, 0]]
    assert batch["tgt"].tolist() == [[BOS_ID, 8, EOS_ID, 0], [BOS_ID, 9, 9, EOS_ID]]
    with pytest.raises(ValueError, match="at least one"):
        collate_pairs([])


def test_bucketing_groups_similar_lengths_and_covers_every_example():
    lengths = [1 + (i * 7) % 30 for i in range(400)]
    sampler = BucketBatchSampler(lengths, batch_size=16, seed=0)
    batches = list(sampler)
    assert sorted(i for b in batches for i in b) == list(range(400))
    spread = sum(max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in batches) / len(batches)
    assert spread < 5  # random batches would spread over ~28


def test_order_is_seeded_per_epoch_and_shards_are_disjoint():
    lengths = [5] * 100
    a = BucketBatchSampler(lengths, 10, seed=1)
    first = list(a)
    a.set_epoch(1)
    assert list(a) != first
    a.set_epoch(0)
    assert list(a) == first
    ranks = [list(BucketBatchSampler(lengths, 10, seed=1, num_replicas=2, rank=r)) for r in (0, 1)]
    assert len(ranks[0]) == len(ranks[1]) == 5
    assert not {i for b in ranks[0] for i in b} & {i for b in ranks[1] for i in b}


def test_task_loader_batches():
    task = reverse_task(n_train=64, n_valid=8, n_test=8, length=6, min_length=2)
    batch = next(iter(task.loader("train", batch_size=8)))
    assert batch["src"].shape[0] == 8 and batch["tgt"][:, 0].eq(BOS_ID).all()
    assert (batch["tgt"] == EOS_ID).sum(dim=1).eq(1).all()


def test_the_shipped_corpus_is_split_by_whole_file():
    corpus = python_corpus()
    names = {split: set(corpus.splits[split]) for split in ("train", "valid", "test")}
    assert not (names["train"] & names["valid"] or names["train"] & names["test"] or names["valid"] & names["test"])
    assert set().union(*names.values()) == set(corpus.files)
    sizes = {split: len(corpus.text(split)) for split in names}
    assert sizes["train"] > 3_000_000 and all(150_000 < sizes[s] < 300_000 for s in ("valid", "test"))
    assert all(text.isascii() for text in corpus.files.values()) and "def " in corpus.files["textwrap.py"]
    assert corpus.sha256 == python_corpus().sha256 and len(corpus.sha256) == 64
    with pytest.raises(ValueError, match="split must be one of .* got 'dev'"):
        corpus.text("dev")


def test_random_offset_windows_start_anywhere_and_repeat_per_seed_and_epoch():
    ids = torch.arange(1000)
    loader = lm_loader(ids, block_size=8, batch_size=4, seed=3, random_offsets=True)
    assert len(loader) == (999 // 8) // 4
    batches = list(loader)
    starts = torch.cat([b["idx"][:, 0] for b in batches])
    assert all(torch.equal(b["idx"][:, 1:], b["targets"][:, :-1]) for b in batches)
    assert all(torch.equal(b["idx"], b["idx"][:, :1] + torch.arange(8)) for b in batches)  # contiguous windows
    assert (starts % 8 != 0).any() and int(starts.max()) <= 1000 - 9
    again = torch.cat([b["idx"][:, 0] for b in lm_loader(ids, 8, 4, seed=3, random_offsets=True)])
    assert torch.equal(starts, again)
    loader.batch_sampler.set_epoch(1)
    assert not torch.equal(starts, torch.cat([b["idx"][:, 0] for b in loader]))
    with pytest.raises(ValueError, match="batch_size <= windows_per_epoch"):
        lm_loader(ids[:20], block_size=8, batch_size=4, random_offsets=True)
