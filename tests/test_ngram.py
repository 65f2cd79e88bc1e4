"""The counted n-gram baseline: hand-computed probabilities, normalisation, fit, bad input."""

import math
import random
import time

import pytest

from transformer_lib.ngram import NGramLM, best_counted_model, windows_nll

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


# --- lower orders sharing counts, windows, and the best counted model chosen on validation ---

def _markov_text(n: int, seed: int) -> str:
    """A second-order Markov source over 4 letters: the next letter depends on the last two."""
    rng = random.Random(seed)
    table = {(a, b): rng.sample("abcd", 4) for a in "abcd" for b in "abcd"}  # a preferred order per context
    text = ["a", "b"]
    for _ in range(n - 2):
        ranked = table[text[-2], text[-1]]
        text.append(ranked[0] if rng.random() < 0.85 else rng.choice(ranked[1:]))
    return "".join(text)


@pytest.mark.parametrize("order", [1, 2, 3, 4])
@pytest.mark.parametrize("discount", [0.3, 0.9])
def test_variant_scores_as_a_model_counted_again(order, discount):
    text = _markov_text(2000, 0)
    full = NGramLM(5, discount=0.5).fit(text)
    variant = full.variant(order, discount)
    again = NGramLM(order, discount).fit(text)
    assert (variant.order, variant.discount) == (order, discount)
    assert variant.nll(text[:300]) == pytest.approx(again.nll(text[:300]), abs=1e-12)
    assert full.discount == 0.5 and full.order == 5  # the original is unchanged


def test_variant_refuses_orders_it_has_not_counted():
    lm = NGramLM(3).fit(TEXT)
    with pytest.raises(ValueError, match="from 1 to the fitted order 3, got 4"):
        lm.variant(4)
    with pytest.raises(ValueError, match="not been fitted"):
        NGramLM(3).variant(2)


def test_windows_nll_predicts_each_window_from_its_own_past():
    lm = NGramLM(3).fit(TEXT)
    text = "abcbabacbab"  # 11 symbols: windows of 4 + 1 are [0:5], [4:9]; the rest is dropped
    rows = windows_nll(lm, text, 4)
    assert len(rows) == 2 and all(len(row) == 4 for row in rows)
    assert rows[1] == pytest.approx(lm.nll(text[4:9])[1:])
    assert rows[1][0] == pytest.approx(-math.log(lm.prob("a", "b")))  # one symbol of context, not the running text
    with pytest.raises(ValueError, match="hold no window"):
        windows_nll(lm, "ab", 4)


def test_best_counted_model_chooses_on_validation_and_scores_on_test():
    text = _markov_text(26000, 1)
    train, valid, test = text[:20000], text[20000:23000], text[23000:]
    best = best_counted_model(train, valid, test, orders=range(1, 6), discounts=(0.3, 0.6, 0.9))
    assert set(best.grid) == {(n, d) for n in range(1, 6) for d in (0.3, 0.6, 0.9)}
    assert best.valid == min(best.grid.values()) == best.grid[best.order, best.discount]
    assert best.test == pytest.approx(NGramLM(best.order, best.discount).fit(train).loss(test), abs=1e-12)
    # The source looks two letters back: orders below 3 cannot see that far, and lose to the choice.
    assert best.order >= 3
    by_order = best.best_valid_by_order()
    assert by_order[2][1] > best.valid + 0.1 and by_order[1][1] > by_order[2][1]
    # In windows, the first symbols of each window have less context, so the losses are higher.
    windowed = best_counted_model(train, valid, test, orders=[best.order], discounts=[best.discount], block_size=8)
    assert windowed.block_size == 8 and windowed.valid > best.valid
    rows = windows_nll(windowed.model, test, 8)
    assert windowed.test == pytest.approx(sum(map(sum, rows)) / (8 * len(rows)), abs=1e-12)
    with pytest.raises(ValueError, match="at least one order"):
        best_counted_model(train, valid, test, orders=[])


def test_best_counted_model_scores_separate_sequences_each_from_its_own_past():
    text = _markov_text(12000, 3)
    train = [list(text[i:i + 40]) for i in range(0, 8000, 40)]
    valid = [list(text[i:i + 40]) for i in range(8000, 10000, 40)]
    test = [list(text[i:i + 40]) for i in range(10000, 12000, 40)]
    best = best_counted_model(train, valid, test, orders=range(1, 5), discounts=(0.5, 0.8), separate=True)
    assert best.separate and best.order >= 3
    rows = [best.model.nll(seq)[1:] for seq in test]
    assert best.test == pytest.approx(sum(map(sum, rows)) / (39 * len(rows)), abs=1e-12)
    assert best.model.vocabulary == sorted(set(text[:8000]))
    with pytest.raises(ValueError, match="exclude each other"):
        best_counted_model(train, valid, test, block_size=8, separate=True)
