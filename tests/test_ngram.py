"""The counted n-gram baseline: hand-computed probabilities, normalisation, fit, bad input."""

import math
import random
import time

import pytest

from transformer_lib.ngram import NGramLM

# "abababcb": unigrams a 3, b 4, c 1 (8 in all); bigrams ab 3, ba 2, bc 1, cb 1.
# Continuation counts N(. w) over the 4 distinct bigrams: a 1 (ba), b 2 (ab, cb), c 1 (bc).
TEXT = "abababcb"


def test_kneser_ney_bigram_by_hand():
    lm = NGramLM(order=2, discount=0.5).fit(TEXT)
    # Unigram (continuation counts, total 4, 3 types; uniform below it over V + 1 = 4 outcomes):
    #   P1(b) = (2 - 0.5 + 0.5 * 3 * 1/4) / 4 = 1.875 / 4 = 0.46875;  P1(a) = P1(c) = 0.875 / 4 = 0.21875
    #   P1(unknown) = 0.5 * 3 * 1/4 / 4 = 0.09375
    # Bigram after "b" (raw: ba 2, bc 1; total 3, 2 types):
    #   P(a | b) = (2 - 0.5 + 0.5 * 2 * 0.21875) / 3 = 1.71875 / 3
    #   P(b | b) = (0 + 0.5 * 2 * 0.46875) / 3 = 0.15625
    assert lm.prob("b", "a") == pytest.approx(1.71875 / 3)
    assert lm.prob("b", "b") == pytest.approx(0.15625)
    assert lm.prob("xyzb", "a") == pytest.approx(1.71875 / 3)  # only the last order - 1 symbols count
    # An unseen symbol after "b": its share of the unknown class, (0 + 0.5 * 2 * 0.09375) / 3.
    assert lm.prob("b", "z") == pytest.approx(0.03125)
    # An unseen context passes the unigram through.
    assert lm.prob("q", "b") == pytest.approx(0.46875)
    # The first symbol of a text has no context: the unigram of raw counts (total 8, 3 types):
    #   P(a) = (3 - 0.5 + 0.5 * 3 * 1/4) / 8 = 2.875 / 8;  then P(b | a) = (3 - 0.5 + 0.5 * 1 * 0.46875) / 3.
    assert lm.prob("", "a") == pytest.approx(2.875 / 8)
    p_ab = 2.875 / 8 * (2.5 + 0.5 * 0.46875) / 3
    assert lm.loss("ab") == pytest.approx(-math.log(p_ab) / 2)
    assert lm.vocabulary == ["a", "b", "c"]


def test_absolute_discounting_uses_raw_counts_below():
    lm = NGramLM(order=2, discount=0.5, smoothing="absolute").fit(TEXT)
    # P1(a) = (3 - 0.5 + 0.5 * 3 / 4) / 8 = 0.359375; P(a | b) = (2 - 0.5 + 0.5 * 2 * 0.359375) / 3.
    assert lm.prob("b", "a") == pytest.approx((1.5 + 0.359375) / 3)


@pytest.mark.parametrize("smoothing", ["kneser-ney", "absolute"])
@pytest.mark.parametrize("order", [1, 2, 3, 5])
def test_probabilities_sum_to_one(order, smoothing):
    rng = random.Random(order)
    text = "".join(rng.choice("aabbbcdde ") for _ in range(400))
    lm = NGramLM(order, discount=0.6, smoothing=smoothing).fit(text)
    contexts = ["", "a", "ab", "bbc", "zz", "e d", text[100:104], text[-6:]]
    for context in contexts:
        total = sum(lm.prob(context, s) for s in lm.vocabulary) + lm.prob(context, "unseen")
        assert total == pytest.approx(1.0, abs=1e-12), (order, context)


def test_token_ids_work_like_characters():
    ids = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4, 6]
    lm = NGramLM(3).fit(ids)
    assert lm.vocabulary == sorted(set(ids))
    by_char = NGramLM(3).fit([chr(97 + i) for i in ids])
    assert lm.loss(ids) == pytest.approx(by_char.loss([chr(97 + i) for i in ids]))


def test_higher_order_fits_its_training_text_better_and_unseen_text_stays_finite():
    rng = random.Random(0)
    words = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "to", "its", "bed"]
    text = " ".join(rng.choice(words) for _ in range(3000))
    losses = {n: NGramLM(n).fit(text).loss(text) for n in (1, 2, 3, 5)}
    assert losses[5] < losses[3] < losses[2] < losses[1]
    unseen = NGramLM(5).fit(text).loss("qux zap, the dog!")
    assert math.isfinite(unseen) and unseen > losses[5]


def test_scoring_is_fast():
    rng = random.Random(1)
    text = "".join(rng.choice("abcdefghij klmnop\n") for _ in range(100_000))
    lm = NGramLM(5).fit(text)
    start = time.perf_counter()
    lm.loss(text)
    assert time.perf_counter() - start < 5.0  # about 0.3 s on one idle core


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"order": 0}, "order must be an integer >= 1, got 0"),
        ({"order": 2.5}, "order must be an integer >= 1, got 2.5"),
        ({"order": 2, "discount": 0.0}, r"discount must be .* between 0 and 1, got 0.0"),
        ({"order": 2, "discount": 1.5}, r"discount must be .* between 0 and 1, got 1.5"),
        ({"order": 2, "smoothing": "witten-bell"}, "smoothing must be one of .* got 'witten-bell'"),
    ],
)
def test_bad_settings_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        NGramLM(**kwargs)


def test_bad_texts_are_refused():
    with pytest.raises(ValueError, match="training text is empty"):
        NGramLM(2).fit("")
    with pytest.raises(ValueError, match="must be a str, list or tuple of symbols, got int"):
        NGramLM(2).fit(42)
    with pytest.raises(ValueError, match="not been fitted"):
        NGramLM(2).loss("ab")
    with pytest.raises(ValueError, match="text to score is empty"):
        NGramLM(2).fit("ab").loss("")
