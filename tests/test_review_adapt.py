"""transformer_lib.review_adapt: chapter 12's adaptation runs (classifiers, SFT, DPO) on the reviews."""

import pytest

from transformer_lib.review_adapt import (
    LR,
    answer_of,
    classify,
    dpo_policy,
    dpo_scores,
    labelled,
    preference_pairs,
    prompt_of,
    respond,
    review_batch,
    sft_batches,
)
from transformer_lib.reviews import END, PAD, review_gpt, review_splits
from transformer_lib.sft import IGNORE_INDEX


@pytest.fixture(scope="module")
def splits():
    return review_splits()


def test_labelled_reviews_are_balanced_and_drawn_by_the_seed(splits):
    drawn = labelled(splits.pool, 4, seed=0)
    assert [label for _, label, _ in drawn] == [1] * 4 + [0] * 4
    assert drawn == labelled(splits.pool, 4, seed=0) and drawn != labelled(splits.pool, 4, seed=1)


def test_a_review_batch_is_each_review_and_its_full_stop(splits):
    batch = review_batch(splits.test[:3])
    assert batch["src"].shape[0] == 3 and batch["label"].tolist() == [r[1] for r in splits.test[:3]]
    for row, (words, _, _) in zip(batch["src"].tolist(), splits.test[:3]):
        assert row[len(words)] == END and all(t == PAD for t in row[len(words) + 1:])


def test_classify_refuses_an_unknown_method_and_a_probe_trains_its_head_only(splits):
    bodies = {"closings": review_gpt(0)}
    with pytest.raises(ValueError, match="method must be one of"):
        classify(splits, bodies, "linear", 4, seed=0)
    assert set(LR) == {"scratch", "probe", "full", "lora"}
    _, trainable = classify(splits, bodies, "probe", 4, seed=0)
    assert trainable == 32 * 2 + 2  # d_model x classes + classes


def test_answers_stop_at_the_full_stop(splits):
    prompts = [prompt_of(w) for w, _, _ in splits.test[:20]]
    for answer in respond(review_gpt(0), prompts, max_new=4):
        assert len(answer) <= 4 and (END not in answer or answer.index(END) == len(answer) - 1)
    batch = sft_batches(splits.pool[:2], answer_only=True, batch_size=2)[0]
    kept = batch["targets"][0][batch["targets"][0] != IGNORE_INDEX].tolist()
    assert kept == answer_of(splits.pool[0][2])  # the loss covers the answer only


def test_preference_pairs_never_prefer_an_answer_to_itself_and_dpo_moves_the_policy(splits):
    reference = review_gpt(0)
    pairs = preference_pairs(reference, splits.pool[:64], seed=1)
    assert all(c != r for c, r in zip(pairs.chosen, pairs.rejected))
    assert pairs.own == 64  # an untrained model's samples are all wrong, so every rejected answer is its own
    before = dpo_scores(reference, reference, pairs, splits.test[:20], beta=0.5)
    assert before["reward"] == 0.0 and abs(before["drift"]) < 1e-6  # all rewards 0; the reference is itself
    policy = dpo_policy(reference, pairs, beta=0.5, seed=0)
    after = dpo_scores(policy, reference, pairs, splits.test[:20], beta=0.5)
    assert after["reward"] > 0.9 and after["ranked"] > before["ranked"]
