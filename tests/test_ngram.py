"""The counted n-gram baseline: hand-computed probabilities, normalisation, fit, bad input."""

import itertools
import math
import random
import time
from collections import Counter

import numpy as np
import pytest

from transformer_lib.ngram import (
    FALLBACK_DISCOUNTS,
    NGramLM,
    best_counted_model,
    losses_by_setting,
    modified_kneser_ney_discounts,
    sequences_nll,
    windows_nll,
)
from transformer_lib.ngram.counting import _Counts, _Grams, _sort_next_order

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


def _setting(smoothing: str, value: float) -> dict:
    """The keyword of a smoothing's one setting: ``scale`` for modified Kneser-Ney, ``discount`` otherwise."""
    return {"scale": value} if smoothing == "modified-kneser-ney" else {"discount": value}


# "dcacaacdaabbacbaaa" (18 symbols, V = 4, so the base is 1/5 per symbol and for "unknown"):
#   unigrams a 9, b 3, c 4, d 2: count-of-counts (n1, n2, n3, n4) = (0, 1, 1, 1), n1 = 0: fallback (0.5, 1, 1.5).
#   bigrams aa 4, ac 3, ca 2, ba 2, and 1 each: ab, bb, cb, cd, da, dc: count-of-counts (6, 2, 1, 1):
#     Y = 6 / (6 + 2*2) = 0.6; D1 = 1 - 2*0.6*2/6 = 0.6, D2 = 2 - 3*0.6*1/2 = 1.1, D3+ = 3 - 4*0.6*1/1 = 0.6.
#   continuation unigrams N(. w): a 4 (ca aa da ba), b 3 (ab bb cb), c 2 (dc ac), d 1 (cd); total 10,
#     count-of-counts (1, 1, 1, 1): Y = 1/3; D1 = 1 - 2/3 = 1/3, D2 = 2 - 3*(1/3) = 1, D3+ = 3 - 4/3 = 5/3.
#   trigrams: 16, all distinct (count 1): count-of-counts (16, 0, 0, 0): fallback (0.5, 1, 1.5).
#   continuation bigrams N(. h w): aa 4 (caa daa baa aaa), ac 3 (cac aac bac), ca 2, ba 2, and 1 each: ab bb cb cd
#     da, but dc 0 (it only starts the text): count-of-counts (5, 2, 1, 1): Y = 5/9,
#     D1 = 1 - 2*(5/9)*2/5 = 5/9, D2 = 2 - 3*(5/9)*1/2 = 7/6, D3+ = 3 - 4*(5/9)*1/1 = 7/9.
MKN_TEXT = "dcacaacdaabbacbaaa"
# The unigram of continuation counts (total 10; N1 = 1 (d), N2 = 1 (c), N3+ = 2 (a, b)):
#   gamma = 1/3 * 1 + 1 * 1 + 5/3 * 2 = 14/3, times the base 1/5 = 14/15:
#   P1(a) = (4 - 5/3 + 14/15) / 10 = 49/150, P1(b) = (3 - 5/3 + 14/15) / 10 = 34/150,
#   P1(c) = (2 - 1 + 14/15) / 10 = 29/150, P1(d) = (1 - 1/3 + 14/15) / 10 = 24/150, P1(unknown) = 14/150.
P1 = {"a": 49 / 150, "b": 34 / 150, "c": 29 / 150, "d": 24 / 150, "z": 14 / 150}


def test_modified_kneser_ney_discounts_by_hand():
    assert modified_kneser_ney_discounts((6, 2, 1, 1)) == pytest.approx((0.6, 1.1, 0.6))
    assert modified_kneser_ney_discounts((1, 1, 1, 1)) == pytest.approx((1 / 3, 1, 5 / 3))
    # Some n_r = 0, or a D_r outside (0, r) (here D2 = 2 - 3 * (1/3) * 9/1 < 0): the fallback.
    assert modified_kneser_ney_discounts((0, 1, 1, 1)) == FALLBACK_DISCOUNTS == (0.5, 1.0, 1.5)
    assert modified_kneser_ney_discounts((1, 1, 9, 1)) == FALLBACK_DISCOUNTS
    # The scale multiplies each; a D_r it pushes to r or beyond stops at r - 0.01.
    assert modified_kneser_ney_discounts((6, 2, 1, 1), scale=2.0) == pytest.approx((0.99, 1.99, 1.2))
    assert modified_kneser_ney_discounts((6, 2, 1, 1), scale=0.5) == pytest.approx((0.3, 0.55, 0.3))


def test_modified_kneser_ney_bigram_by_hand():
    lm = NGramLM(order=2, smoothing="modified-kneser-ney").fit(MKN_TEXT)
    # After "a" (raw bigrams: aa 4, ac 3, ab 1; total 8; N1 = 1, N2 = 0, N3+ = 2), with the raw bigram
    # discounts (0.6, 1.1, 0.6): gamma = 0.6 * 1 + 0.6 * 2 = 1.8 over the continuation unigram P1.
    assert lm.prob("a", "a") == pytest.approx((4 - 0.6 + 1.8 * P1["a"]) / 8)  # 0.4985
    assert lm.prob("a", "c") == pytest.approx((3 - 0.6 + 1.8 * P1["c"]) / 8)  # 0.3435
    assert lm.prob("a", "b") == pytest.approx((1 - 0.6 + 1.8 * P1["b"]) / 8)  # 0.101
    assert lm.prob("a", "d") == pytest.approx(1.8 * P1["d"] / 8)  # 0.036: never seen after "a"
    assert lm.prob("a", "z") == pytest.approx(1.8 * P1["z"] / 8)  # 0.021: an unseen symbol, the unknown class
    # After "c" (ca 2, cb 1, cd 1; total 4; N1 = 2, N2 = 1): gamma = 0.6 * 2 + 1.1 * 1 = 2.3.
    assert lm.prob("c", "a") == pytest.approx((2 - 1.1 + 2.3 * P1["a"]) / 4)
    # A context never seen passes the continuation unigram through.
    assert lm.prob("z", "a") == pytest.approx(49 / 150)
    # The first symbol has no context: the raw unigram (total 18; N2 = 1 (d), N3+ = 3), fallback discounts:
    #   gamma = 1 * 1 + 1.5 * 3 = 5.5, times 1/5 = 1.1: P(a) = (9 - 1.5 + 1.1) / 18, P(d) = (2 - 1 + 1.1) / 18.
    assert lm.prob("", "a") == pytest.approx(8.6 / 18)
    assert lm.prob("", "d") == pytest.approx(2.1 / 18)
    assert lm.discounts()[2] == {"raw": pytest.approx((0.6, 1.1, 0.6))}
    assert lm.discounts()[1] == {"raw": (0.5, 1.0, 1.5), "continuation": pytest.approx((1 / 3, 1, 5 / 3))}
    # The scale multiplies every discount: 1.5 * (0.6, 1.1, 0.6) = (0.9, 1.65, 0.9) after "a", gamma = 2.7, and
    # 1.5 * (1/3, 1, 5/3) = (0.5, 1.5, 2.5) below it: gamma = 0.5 + 1.5 + 5 = 7, times 1/5 = 1.4,
    # P1(c) = (2 - 1.5 + 1.4) / 10 = 0.19.
    scaled = lm.variant(2, 1.5)
    assert scaled.scale == 1.5 and scaled.discount is None and scaled.setting == 1.5
    assert scaled.prob("a", "c") == pytest.approx((3 - 0.9 + 2.7 * 0.19) / 8)


def test_modified_kneser_ney_trigram_by_hand():
    lm = NGramLM(order=3, smoothing="modified-kneser-ney").fit(MKN_TEXT)
    # After "cd": the trigram of raw counts (cda 1; total 1; N1 = 1), fallback discounts (0.5, 1, 1.5):
    #   gamma = 0.5, over the bigram of continuation counts after "d": da 1 and dc 0 (raw dc 1 starts the text,
    #   so no symbol precedes it); total 1, N1 = 1, discounts (5/9, 7/6, 7/9): gamma = 5/9, so
    #   P2(a | d) = (1 - 5/9 + 5/9 * 49/150) = 169/270 and P2(c | d) = 5/9 * 29/150 = 29/270.
    #   P3(a | cd) = (1 - 0.5 + 0.5 * 169/270) = 439/540, P3(c | cd) = 0.5 * 29/270 = 29/540.
    assert lm.prob("cd", "a") == pytest.approx(439 / 540)
    assert lm.prob("cd", "c") == pytest.approx(29 / 540)
    assert lm.prob("xyzcd", "c") == pytest.approx(29 / 540)  # only the last two symbols count
    # An unseen symbol: 0.5 * 5/9 * 14/150 = 7/270.
    assert lm.prob("cd", "z") == pytest.approx(7 / 270)
    # An unseen trigram context ("bd") passes the continuation bigram after "d" through.
    assert lm.prob("bd", "c") == pytest.approx(29 / 270)
    # With one symbol of context, the bigram of *raw* counts is the top: after "d", dc 1 and da 1 (total 2,
    # N1 = 2), raw discounts (0.6, 1.1, 0.6): gamma = 1.2, P(c | d) = (1 - 0.6 + 1.2 * 29/150) / 2 = 0.316.
    assert lm.prob("d", "c") == pytest.approx(0.316)
    # A text is scored so: "dc" then "a" after "dc" (dca 1; gamma 0.5; continuation bigram after "c": ca 2, cb 1,
    # cd 1; total 4, N1 = 2, N2 = 1: gamma = 2 * 5/9 + 7/6 = 41/18, P2(a | c) = (2 - 7/6 + 41/18 * 49/150) / 4).
    p2_a_c = (2 - 7 / 6 + 41 / 18 * 49 / 150) / 4
    expected = [2.1 / 18, 0.316, 1 - 0.5 + 0.5 * p2_a_c]
    assert lm.nll("dca") == pytest.approx([-math.log(p) for p in expected])
    assert set(lm.discounts()) == {1, 2, 3}
    assert lm.discounts()[3] == {"raw": (0.5, 1.0, 1.5)}
    assert lm.discounts()[2]["continuation"] == pytest.approx((5 / 9, 7 / 6, 7 / 9))


# Two settings per smoothing; a scale of 1.9 pushes some estimated discounts to their cap r - 0.01.
SETTINGS = {"modified-kneser-ney": (0.6, 1.9), "kneser-ney": (0.6, 0.95), "absolute": (0.6, 0.95)}


@pytest.mark.parametrize("smoothing", list(SETTINGS))
@pytest.mark.parametrize("order", [1, 2, 3, 5])
def test_probabilities_sum_to_one(order, smoothing):
    rng = random.Random(order)
    text = "".join(rng.choice("aabbbcdde ") for _ in range(400))
    for value in SETTINGS[smoothing]:
        lm = NGramLM(order, smoothing=smoothing, **_setting(smoothing, value)).fit(text)
        contexts = ["", "a", "ab", "bbc", "zz", "e d", text[100:104], text[-6:]]
        for context in contexts:
            total = sum(lm.prob(context, s) for s in lm.vocabulary) + lm.prob(context, "unseen")
            assert total == pytest.approx(1.0, abs=1e-12), (order, value, context)


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
    start = time.process_time()  # CPU time: a loaded machine must not fail the test
    lm.loss(text)
    assert time.process_time() - start < 5.0  # about 0.1 s on one core


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

def _markov_text(n: int, seed: int, depth: int = 2) -> str:
    """A Markov source over 4 letters of order ``depth``: the next letter depends on the last ``depth``."""
    rng = random.Random(seed)
    table = {h: rng.sample("abcd", 4) for h in itertools.product("abcd", repeat=depth)}  # a preferred order per h
    text = list("abcd"[:depth])
    for _ in range(n - depth):
        ranked = table[tuple(text[-depth:])]
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
    best = best_counted_model(train, valid, test, orders=range(1, 6), discounts=(0.3, 0.6, 0.9), smoothing="kneser-ney")
    assert set(best.grid) == {(n, d) for n in range(1, 6) for d in (0.3, 0.6, 0.9)}
    assert best.stopped_at == 5 and best.stop_reason == "scored the orders given, 1 to 5"
    assert best.setting_name == "discount" and best.setting == best.discount
    assert best.valid == min(best.grid.values()) == best.grid[best.order, best.discount]
    assert best.test == pytest.approx(NGramLM(best.order, best.discount).fit(train).loss(test), abs=1e-12)
    # The source looks two letters back: orders below 3 cannot see that far, and lose to the choice.
    assert best.order >= 3
    by_order = best.best_valid_by_order()
    assert by_order[2][1] > best.valid + 0.1 and by_order[1][1] > by_order[2][1]
    # In windows, the first symbols of each window have less context, so the losses are higher.
    windowed = best_counted_model(train, valid, test, orders=[best.order], discounts=[best.discount], block_size=8,
                                  smoothing="kneser-ney")
    assert windowed.block_size == 8 and windowed.valid > best.valid
    rows = windows_nll(windowed.model, test, 8)
    assert windowed.test == pytest.approx(sum(map(sum, rows)) / (8 * len(rows)), abs=1e-12)
    with pytest.raises(ValueError, match="need at least one order, got an empty list"):
        best_counted_model(train, valid, test, orders=[])


def test_best_counted_model_scores_separate_sequences_each_from_its_own_past():
    text = _markov_text(12000, 3)
    train = [list(text[i:i + 40]) for i in range(0, 8000, 40)]
    valid = [list(text[i:i + 40]) for i in range(8000, 10000, 40)]
    test = [list(text[i:i + 40]) for i in range(10000, 12000, 40)]
    best = best_counted_model(train, valid, test, orders=range(1, 5), scales=(0.8, 1.2), separate=True)
    assert best.separate and best.order >= 3 and best.smoothing == "modified-kneser-ney" and best.discount is None
    rows = [best.model.nll(seq)[1:] for seq in test]
    assert best.test == pytest.approx(sum(map(sum, rows)) / (39 * len(rows)), abs=1e-12)
    assert sequences_nll(best.model, test) == pytest.approx(np.array(rows), abs=1e-12)
    assert best.model.vocabulary == sorted(set(text[:8000]))
    with pytest.raises(ValueError, match="exclude each other"):
        best_counted_model(train, valid, test, block_size=8, separate=True)


# --- the array scorer against a slow, dict-based model written here ---

class _ReferenceLM:
    """Interpolated (modified) Kneser-Ney or absolute discounting, one symbol at a time, from Counters."""

    def __init__(self, text, order: int, smoothing: str, setting: float):
        self.order, self.smoothing, self.setting = order, smoothing, setting
        self.vocabulary = sorted(set(text))
        grams = [Counter(tuple(text[i:i + k]) for i in range(len(text) - k + 1)) for k in range(1, order + 2)]
        self.raw = grams[:order]
        # Continuation counts of the k-grams: distinct (k+1)-grams ending in them.
        self.continuation = [Counter(gram[1:] for gram in grams[k]) for k in range(1, order)]

    def _discounts(self, counts: Counter) -> tuple[float, float, float]:
        if self.smoothing != "modified-kneser-ney":
            return (self.setting,) * 3
        n = Counter(counts.values())
        n1, n2, n3, n4 = (n[r] for r in (1, 2, 3, 4))
        estimate = (0.5, 1.0, 1.5)
        if min(n1, n2, n3, n4) > 0:
            y = n1 / (n1 + 2 * n2)
            formula = (1 - 2 * y * n2 / n1, 2 - 3 * y * n3 / n2, 3 - 4 * y * n4 / n3)
            if 0 < formula[0] < 1 and 0 < formula[1] < 2 and 0 < formula[2] < 3:
                estimate = formula
        return tuple(min(self.setting * d, r - 0.01) for r, d in zip((1, 2, 3), estimate))

    def prob(self, context, symbol) -> float:
        context = tuple(context)[max(0, len(context) - self.order + 1):]
        p = 1 / (len(self.vocabulary) + 1)
        for k in range(1, len(context) + 2):
            top = k == len(context) + 1
            counts = self.raw[k - 1] if top or self.smoothing == "absolute" else self.continuation[k - 1]
            h = context[len(context) - k + 1:]
            followers = [c for gram, c in counts.items() if gram[:-1] == h and c > 0]
            if not followers:
                continue
            d1, d2, d3 = self._discounts(counts)

            def discount(c):
                return 0 if c == 0 else (d1, d2, d3)[min(c, 3) - 1]

            c = counts.get(h + (symbol,), 0)
            p = (c - discount(c) + sum(map(discount, followers)) * p) / sum(followers)
        return p


@pytest.mark.parametrize("smoothing", list(SETTINGS))
@pytest.mark.parametrize("order", [1, 2, 4])
def test_array_scorer_equals_a_slow_reference(order, smoothing):
    text = _markov_text(1500, 7, depth=3)
    value = SETTINGS[smoothing][order % 2]
    lm = NGramLM(order, smoothing=smoothing, **_setting(smoothing, value)).fit(text[:1200])
    ref = _ReferenceLM(text[:1200], order, smoothing, value)
    held_out = text[1200:1300] + "x" + text[1300:1340]  # with a symbol never seen in training
    expected = [-math.log(ref.prob(held_out[:i], s)) for i, s in enumerate(held_out)]
    assert lm.nll(held_out) == pytest.approx(expected, rel=1e-12)
    # Windows of 7 + 1: each symbol from at most the 7 before it in its window.
    rows = windows_nll(lm, held_out, 7)
    assert rows.shape == (len(held_out) // 7 - (len(held_out) % 7 == 0), 7)
    for w, row in enumerate(rows):
        window = held_out[w * 7:(w + 1) * 7 + 1]
        assert row == pytest.approx([-math.log(ref.prob(window[:t], window[t])) for t in range(1, 8)], rel=1e-12)
    # Separate sequences, each from its own past.
    sequences = [list(held_out[i:i + 10]) for i in range(0, 130, 10)]
    by_hand = [[-math.log(ref.prob(seq[:t], seq[t])) for t in range(1, 10)] for seq in sequences]
    assert sequences_nll(lm, sequences) == pytest.approx(np.array(by_hand), rel=1e-12)


@pytest.mark.parametrize("scale", [0.7, 1.3])
def test_modified_kneser_ney_variant_scores_as_a_model_counted_again(scale):
    text = _markov_text(2000, 0)
    full = NGramLM(5, smoothing="modified-kneser-ney").fit(text)
    again = NGramLM(3, smoothing="modified-kneser-ney", scale=scale).fit(text)
    assert full.variant(3, scale).nll(text[:300]) == pytest.approx(again.nll(text[:300]), abs=1e-12)
    assert full.nbytes > again.nbytes > 0


@pytest.mark.parametrize(("n", "vocab"), [(1, 1), (2, 1), (3, 2), (12, 1), (40, 3), (500, 5), (3000, 60)])
def test_sorting_each_order_from_the_last_equals_np_unique(n, vocab):
    rng = np.random.default_rng(n)
    symbols = rng.integers(0, vocab, n)
    if n == 3000:
        symbols[1000:2000] = symbols[:1000]  # long repeats: high orders with counts above 1
    grams = _Grams.empty(n)
    for k in range(1, min(n + 1, 80) + 1):  # up to an order longer than the stream, which has no grams
        keys = grams.ids[:-1].astype(np.int64) * vocab + symbols[k - 1:]
        _, first, ids, counts = np.unique(keys, return_index=True, return_inverse=True, return_counts=True)
        grams, got_first, got_counts = _sort_next_order(symbols.astype(np.uint8), grams)
        assert np.array_equal(grams.ids, ids) and np.array_equal(got_first, first)
        assert np.array_equal(got_counts, counts)
        assert np.array_equal(grams.order, np.argsort(ids, kind="stable")), k


def test_counts_per_context_by_hand():
    # Contexts 0 (counts 1, 5, 2), 2 (3, 1, 4) and 3 (2, 0: a continuation count can be 0); 1 and 4 have none.
    counts = _Counts.of(np.array([1, 5, 2, 3, 1, 4, 2, 0]), np.array([0, 0, 0, 2, 2, 2, 3, 3]), 5)
    assert counts.total.tolist() == [8, 0, 8, 2, 0]
    assert counts.followers.tolist() == [[1, 0, 1, 0, 0], [1, 0, 0, 1, 0], [1, 0, 2, 0, 0]]  # N_1, N_2, N_3+
    assert counts.count_of_counts == (2, 2, 1, 1)
    assert counts.per_gram.dtype == counts.total.dtype == counts.followers.dtype == np.uint8


def test_counts_are_stored_compactly():
    lm = NGramLM(3, smoothing="modified-kneser-ney").fit(_markov_text(5000, 2))
    bigrams = lm._orders[1]
    assert bigrams.keys.dtype == np.uint32  # context id * V + symbol < 2**32
    assert bigrams.raw.per_gram.dtype == np.uint16  # the most frequent bigram occurs under 65 536 times
    assert bigrams.continuation.per_gram.dtype == np.uint8  # at most V = 4 distinct predecessors
    assert bigrams.raw.followers.dtype == np.uint8
    assert lm.nbytes == sum(a.nbytes for a in (bigrams.keys, bigrams.raw.per_gram, bigrams.raw.total,
                                               bigrams.raw.followers, bigrams.continuation.per_gram,
                                               bigrams.continuation.total, bigrams.continuation.followers)) \
        + lm._orders[0].nbytes + lm._orders[2].keys.nbytes + lm._orders[2].raw.nbytes


# --- the order grows until validation stops improving ---

def test_order_grows_until_validation_stops_improving():
    text = _markov_text(40000, 5, depth=3)  # the next letter depends on the last three: order 4 sees it all
    train, valid, test = text[:30000], text[30000:35000], text[35000:]
    best = best_counted_model(train, valid, test, scales=(0.8, 1.0, 1.2))
    by_order = best.best_valid_by_order()
    assert best.order >= 4 and best.stopped_at == max(by_order) > best.order
    losses = [loss for _, loss in by_order.values()]
    assert all(a > b for a, b in zip(losses[:-2], losses[1:-1]))  # falling up to the order before the stop
    n = best.stopped_at
    assert by_order[n][1] >= by_order[n - 1][1]
    assert best.stop_reason == (f"order {n}'s best validation loss {by_order[n][1]:.4f} is not below "
                                f"order {n - 1}'s {by_order[n - 1][1]:.4f}")
    assert set(best.grid) == {(k, s) for k in range(1, n + 1) for s in (0.8, 1.0, 1.2)}
    assert best.valid == min(best.grid.values()) and best.cpu_seconds > 0
    assert best.test == pytest.approx(best.model.loss(test), abs=1e-12)
    # A window of 3 + 1 symbols offers at most three predecessors: the search stops at order 4.
    windowed = best_counted_model(train, valid, test, scales=(1.0,), block_size=3)
    assert windowed.stopped_at == 4 and windowed.stop_reason == "reached the window's limit: order block_size + 1 = 4"
    capped = best_counted_model(train, valid, test, scales=(1.0,), max_order=2)
    assert (capped.stopped_at, capped.order, capped.stop_reason) == (2, 2, "reached max_order = 2")
    # The one-discount smoothing beside it, grown the same way.
    kneser_ney = best_counted_model(train, valid, test, smoothing="kneser-ney", discounts=(0.7, 0.9))
    assert kneser_ney.order >= 4 and kneser_ney.setting_name == "discount" and kneser_ney.discount in (0.7, 0.9)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"order": 2, "smoothing": "modified-kneser-ney", "discount": 0.5},
         "'modified-kneser-ney' estimates its discounts and takes a scale, got discount=0.5"),
        ({"order": 2, "scale": 1.2}, "scale is the setting of 'modified-kneser-ney'; 'kneser-ney' takes a discount, "
                                     "got scale=1.2"),
        ({"order": 2, "smoothing": "modified-kneser-ney", "scale": 0}, "scale must be a finite number > 0, got 0"),
    ],
)
def test_bad_modified_kneser_ney_settings_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        NGramLM(**kwargs)


def test_bad_searches_and_streams_are_refused():
    train, valid = "abcab" * 20, "abcabc" * 5
    with pytest.raises(ValueError, match=r"'modified-kneser-ney' tunes scales, got discounts=\(0.5,\)"):
        best_counted_model(train, valid, valid, discounts=(0.5,))
    with pytest.raises(ValueError, match=r"'absolute' tunes discounts, got scales=\(1.0,\)"):
        best_counted_model(train, valid, valid, smoothing="absolute", scales=(1.0,))
    with pytest.raises(ValueError, match="need at least one scale, got an empty grid"):
        best_counted_model(train, valid, valid, scales=())
    with pytest.raises(ValueError, match="scale must be a finite number > 0, got -1"):
        best_counted_model(train, valid, valid, scales=(1.0, -1))
    with pytest.raises(ValueError, match="max_order must be an integer >= 1, got 0"):
        best_counted_model(train, valid, valid, max_order=0)
    with pytest.raises(ValueError, match=r"orders must be integers >= 1, got \[0, 1, 2\]"):
        best_counted_model(train, valid, valid, orders=[0, 1, 2])
    with pytest.raises(ValueError, match="smoothing must be one of .* got 'good-turing'"):
        best_counted_model(train, valid, valid, smoothing="good-turing")
    with pytest.raises(ValueError, match="the training sequences must be a list or tuple of sequences, got str"):
        best_counted_model(train, [valid], [valid], separate=True)
    with pytest.raises(ValueError, match="the sequences to score must be a list or tuple of sequences, got str"):
        best_counted_model([train], valid, valid, separate=True)
    lm = NGramLM(2).fit(train)
    with pytest.raises(ValueError, match="same length, got lengths from 2 to 3"):
        sequences_nll(lm, ["ab", "abc"])
    with pytest.raises(ValueError, match="each of the sequences to score is empty"):
        sequences_nll(lm, ["ab", ""])
    with pytest.raises(ValueError, match="block_size must be an integer >= 1, got 0"):
        windows_nll(lm, valid, 0)
    with pytest.raises(ValueError, match="the text to score must be a str, list or tuple of symbols, got ndarray"):
        windows_nll(lm, np.arange(10), 4)


def test_min_gain_stops_when_an_order_gains_too_little():
    text = _markov_text(40000, 5, depth=3)
    train, valid, test = text[:30000], text[30000:35000], text[35000:]
    plain = best_counted_model(train, valid, test, scales=(1.0,)).best_valid_by_order()
    gains = {n: plain[n - 1][1] - plain[n][1] for n in plain if n > 1}  # order 4 gains far more than 0.05
    best = best_counted_model(train, valid, test, scales=(1.0,), min_gain=0.05)
    n = best.stopped_at
    assert n == min(k for k, gain in gains.items() if gain <= 0.05) and gains[4] > 0.05 and n > 4
    assert best.stop_reason == (f"order {n}'s best validation loss {plain[n][1]:.4f} is not 0.05 below "
                                f"order {n - 1}'s {plain[n - 1][1]:.4f}")
    with pytest.raises(ValueError, match="min_gain must be a finite number >= 0, got -0.1"):
        best_counted_model(train, valid, test, min_gain=-0.1)


@pytest.mark.parametrize(("smoothing", "setting"), [("kneser-ney", {"discount": 0.7}),
                                                    ("modified-kneser-ney", {"scale": 1.1}),
                                                    ("absolute", {"discount": 0.6})])
def test_distribution_is_every_next_probability_and_sums_to_one(smoothing, setting):
    lm = NGramLM(4, smoothing=smoothing, **setting).fit(_markov_text(3000, 5))
    for context in ("", "a", "abcab", "zz"):
        dist = lm.distribution(context)
        assert dist.shape == (len(lm.vocabulary) + 1,) and dist.sum() == pytest.approx(1.0, abs=1e-12)
        expected = [lm.prob(context, s) for s in lm.vocabulary] + [lm.prob(context, "unseen")]
        assert dist == pytest.approx(expected, abs=1e-12)


def test_a_variant_may_switch_between_smoothings_that_share_counts():
    text = _markov_text(3000, 6)
    modified = NGramLM(4, smoothing="modified-kneser-ney").fit(text)
    one = modified.variant(3, 0.7, smoothing="kneser-ney")
    assert (one.smoothing, one.order, one.discount) == ("kneser-ney", 3, 0.7)
    assert one.nll(text[:200]) == pytest.approx(NGramLM(3, 0.7).fit(text).nll(text[:200]), abs=1e-12)
    raw = modified.variant(smoothing="absolute", setting=0.5)
    assert raw.nll(text[:200]) == pytest.approx(NGramLM(4, 0.5, smoothing="absolute").fit(text).nll(text[:200]),
                                                abs=1e-12)
    with pytest.raises(ValueError, match="no continuation counts for 'kneser-ney'"):
        NGramLM(3, smoothing="absolute").fit(text).variant(smoothing="kneser-ney")


def test_losses_by_setting_scores_every_setting_as_its_own_variant():
    text = _markov_text(6000, 7)
    train, valid = text[:5000], text[5000:]
    modified = NGramLM(4, smoothing="modified-kneser-ney").fit(train)
    losses = losses_by_setting(modified, valid, (0.5, 0.9), smoothing="kneser-ney", block_size=16)
    for d, loss in losses.items():
        assert loss == pytest.approx(windows_nll(modified.variant(smoothing="kneser-ney", setting=d), valid, 16).mean(),
                                     abs=1e-12)
    assert set(losses_by_setting(modified, valid, (0.8, 1.2))) == {0.8, 1.2}
    with pytest.raises(ValueError, match="discount must be .* between 0 and 1"):
        losses_by_setting(modified, valid, (1.5,), smoothing="kneser-ney")
