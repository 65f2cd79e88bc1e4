"""A counted n-gram language model: the baseline a neural language model has to beat.

The model counts every n-gram of orders 1..n in a training sequence (characters of a ``str``, or
any list of hashable, sortable symbols such as token ids) and predicts the next symbol from at most
``n - 1`` preceding ones. Counts are smoothed by **interpolated Kneser-Ney** with one discount ``D``
per model (Kneser & Ney, 1995; the "interpolated Kneser-Ney" of Chen & Goodman, 1999, section 3.5,
not their *modified* variant with three discounts), or, with ``smoothing="absolute"``, by
interpolated absolute discounting (Ney, Essen & Kneser, 1994). Jurafsky & Martin, *Speech and
Language Processing*, ch. 3, derive both.

Write ``h`` for a context of ``k`` symbols, ``h'`` for ``h`` without its oldest symbol, ``c(h w)``
for a count and ``P_{k-1}`` for the model one order lower. Each order interpolates its discounted
counts with the order below it::

    P_k(w | h) = max(c_k(h w) - D, 0) / c_k(h .)  +  D * N_k(h .) / c_k(h .) * P_{k-1}(w | h')

where ``c_k(h .) = sum_w c_k(h w)`` and ``N_k(h .)`` is the number of distinct ``w`` with
``c_k(h w) > 0``: the mass taken from the seen symbols (``D`` from each) is exactly the mass given
to the lower order, so every ``P_k`` sums to one. A context never seen (``c_k(h .) = 0``) passes
the lower order through unchanged: ``P_k(w | h) = P_{k-1}(w | h')``.

Which counts ``c_k`` are used is the difference between the two smoothings:

* the highest order (the context as long as it is given, at most ``n - 1``) uses the raw counts
  ``c(h w)``, for both;
* with Kneser-Ney the lower orders use *continuation counts* ``N(. h w)``, the number of distinct
  symbols seen before ``h w``: a lower order is only consulted when the longer context says little,
  so it should rate ``w`` by how many contexts it completes, not by how often it occurs (the classic
  example: "Francisco" is frequent but follows almost only "San");
* with absolute discounting every order uses the raw counts.

Below the unigram lies a uniform distribution over the vocabulary **plus one**: every symbol never
seen in training falls into one extra class, "unknown", that receives ``1 / (V + 1)`` of the
unigram's interpolation mass. So probabilities over the vocabulary and the unknown class sum to
one, and the loss of any text is finite.

At the start of a text a symbol has fewer than ``n - 1`` predecessors; it is predicted from the
ones it has (the model of that lower order, with raw counts at its top). Fitting is one pass of
:class:`collections.Counter` per order; scoring is a handful of dictionary look-ups per symbol
(on one core at order 8: about two seconds to fit 330 000 characters, a tenth of a second to score
18 000).

**The best counted model.** A neural model is read against the strongest counted model, not a
fixed order: :func:`best_counted_model` fits the highest order once, scores every order up to it
with every discount of a grid on a *validation* split (:meth:`NGramLM.variant` shares the counts,
so no order is counted twice), keeps the order and discount with the lowest validation loss, and
reports that model's loss on a *test* split, which took no part in the choice. With
``block_size`` set, both splits are scored as a language model of that context is: cut into
non-overlapping windows of ``block_size + 1`` symbols, each window's last ``block_size`` symbols
predicted from the earlier ones of the same window (:func:`windows_nll`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field

__all__ = ["NGramLM", "CountedBaseline", "best_counted_model", "windows_nll", "DISCOUNTS"]

SMOOTHINGS = ("kneser-ney", "absolute")
#: The discounts :func:`best_counted_model` tries (character models of high order prefer large ones).
DISCOUNTS = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)


def _context_stats(counts: Counter) -> dict[tuple, tuple[int, int]]:
    """``{h: (c(h .), N(h .))}``: total count and number of distinct followers of each context."""
    stats: dict[tuple, list[int]] = {}
    for gram, c in counts.items():
        entry = stats.setdefault(gram[:-1], [0, 0])
        entry[0] += c
        entry[1] += 1
    return {h: (total, types) for h, (total, types) in stats.items()}


class NGramLM:
    """Interpolated Kneser-Ney (or absolute-discounting) n-gram model over a sequence of symbols.

    Args:
        order: ``n``, at least 1: predictions use up to ``n - 1`` preceding symbols.
        discount: ``D``, strictly between 0 and 1 (0.75 is the usual choice).
        smoothing: ``"kneser-ney"`` (continuation counts below the highest order) or ``"absolute"``.

    Example::

        lm = NGramLM(order=3).fit("the cat sat on the mat")
        lm.prob("th", "e"), lm.loss("the rat")   # a probability; nats per symbol
    """

    def __init__(self, order: int, discount: float = 0.75, smoothing: str = "kneser-ney") -> None:
        if isinstance(order, bool) or not isinstance(order, int) or order < 1:
            raise ValueError(f"order must be an integer >= 1, got {order!r}")
        if isinstance(discount, bool) or not isinstance(discount, (int, float)) or not 0 < discount < 1:
            raise ValueError(f"discount must be a number strictly between 0 and 1, got {discount!r}")
        if smoothing not in SMOOTHINGS:
            raise ValueError(f"smoothing must be one of {SMOOTHINGS}, got {smoothing!r}")
        self.order = order
        self.discount = float(discount)
        self.smoothing = smoothing
        self.vocabulary: list[Hashable] = []
        # Per context length k = 0 .. order-1: raw counts c(h w) and their context stats; for k < order-1
        # also the counts a lower order uses (continuation counts with Kneser-Ney, raw ones otherwise).
        self._raw: list[Counter] = []
        self._raw_stats: list[dict[tuple, tuple[int, int]]] = []
        self._low: list[Counter] = []
        self._low_stats: list[dict[tuple, tuple[int, int]]] = []

    def __repr__(self) -> str:
        return (f"NGramLM(order={self.order}, discount={self.discount}, smoothing={self.smoothing!r}, "
                f"vocabulary={len(self.vocabulary)} symbols)")

    @staticmethod
    def _as_tuple(symbols: Sequence[Hashable], what: str) -> tuple:
        if isinstance(symbols, (str, list, tuple)):
            seq = tuple(symbols)
        else:
            raise ValueError(f"{what} must be a str, list or tuple of symbols, got {type(symbols).__name__}")
        if not seq:
            raise ValueError(f"{what} is empty: expected at least one symbol")
        return seq

    def fit(self, symbols: Sequence[Hashable]) -> NGramLM:
        """Count every n-gram of orders 1..n in ``symbols`` (a str, or a list/tuple of hashable symbols)."""
        seq = self._as_tuple(symbols, "the training text")
        n = self.order
        self._raw = [Counter(zip(*(seq[i:] for i in range(k + 1)))) for k in range(n)]
        self._raw_stats = [_context_stats(c) for c in self._raw]
        if self.smoothing == "kneser-ney":
            # N(. h w): distinct symbols seen before h w = distinct (k+2)-grams ending in h w.
            self._low = [Counter(gram[1:] for gram in self._raw[k + 1]) for k in range(n - 1)]
            self._low_stats = [_context_stats(c) for c in self._low]
        else:
            self._low, self._low_stats = self._raw[: n - 1], self._raw_stats[: n - 1]
        self.vocabulary = sorted({gram[0] for gram in self._raw[0]})
        return self

    def variant(self, order: int | None = None, discount: float | None = None) -> NGramLM:
        """The model of a lower (or equal) ``order`` and another ``discount``, sharing this one's counts.

        The result scores exactly as ``NGramLM(order, discount, self.smoothing).fit(same text)``
        would, without counting again: the counts of orders ``1..order`` are the same tables.
        """
        self._check_fitted()
        order = self.order if order is None else order
        discount = self.discount if discount is None else discount
        if isinstance(order, bool) or not isinstance(order, int) or not 1 <= order <= self.order:
            raise ValueError(f"order must be an integer from 1 to the fitted order {self.order}, got {order!r}")
        lm = NGramLM(order, discount, self.smoothing)
        lm.vocabulary = self.vocabulary
        lm._raw, lm._raw_stats = self._raw[:order], self._raw_stats[:order]
        lm._low, lm._low_stats = self._low[: order - 1], self._low_stats[: order - 1]
        return lm

    def _check_fitted(self) -> None:
        if not self.vocabulary:
            raise ValueError("this NGramLM has not been fitted: call .fit(symbols) first")

    def _prob(self, context: tuple, symbol: Hashable) -> float:
        """``P(symbol | context)``, ``context`` already cut to at most ``order - 1`` symbols."""
        d = self.discount
        p = 1.0 / (len(self.vocabulary) + 1)
        top = len(context)
        for k in range(top + 1):
            counts, stats = (self._raw[k], self._raw_stats[k]) if k == top else (self._low[k], self._low_stats[k])
            h = context[top - k:]
            total_types = stats.get(h)
            if total_types is None:
                continue  # context never seen at this order: the lower order passes through
            total, types = total_types
            c = counts.get(h + (symbol,), 0)
            p = (max(c - d, 0.0) + d * types * p) / total
        return p

    def prob(self, context: Sequence[Hashable], symbol: Hashable) -> float:
        """``P(symbol | context)``; only the last ``order - 1`` symbols of ``context`` (any length) count.

        A symbol outside :attr:`vocabulary` gets the probability of the "unknown" class.
        """
        self._check_fitted()
        context = tuple(context)
        keep = self.order - 1
        return self._prob(context[len(context) - keep:] if keep else (), symbol)

    def nll(self, symbols: Sequence[Hashable]) -> list[float]:
        """Negative log-likelihood (nats) of each symbol of ``symbols`` given up to ``n - 1`` predecessors."""
        self._check_fitted()
        seq = self._as_tuple(symbols, "the text to score")
        keep = self.order - 1
        return [-math.log(self._prob(seq[max(0, i - keep):i], symbol)) for i, symbol in enumerate(seq)]

    def loss(self, symbols: Sequence[Hashable]) -> float:
        """Mean negative log-likelihood in nats per symbol over every position of ``symbols``.

        Symbol ``i`` is predicted from symbols ``max(0, i - n + 1) .. i - 1`` of the same text (so the
        first few from shorter contexts); symbols never seen in training get the "unknown" class's
        probability, so the loss is always finite.
        """
        seq = self._as_tuple(symbols, "the text to score")
        return math.fsum(self.nll(seq)) / len(seq)


def windows_nll(model: NGramLM, symbols: Sequence[Hashable], block_size: int) -> list[list[float]]:
    """Per-symbol loss (nats) on the non-overlapping windows of ``block_size + 1`` symbols of ``symbols``.

    Window ``i`` is ``symbols[i * block_size : (i + 1) * block_size + 1]``, as a language model's
    loader cuts it; its first symbol is only context, and each of the other ``block_size`` is
    predicted from the symbols before it *in the window*. Returns ``(windows, block_size)`` as
    nested lists (the last, incomplete window is dropped).
    """
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ValueError(f"block_size must be an integer >= 1, got {block_size!r}")
    seq = list(symbols)
    n = (len(seq) - 1) // block_size
    if n == 0:
        raise ValueError(f"{len(seq)} symbols hold no window of block_size + 1 = {block_size + 1}")
    return [model.nll(seq[i * block_size:(i + 1) * block_size + 1])[1:] for i in range(n)]


def _mean_loss(model: NGramLM, symbols: Sequence, block_size: int | None, separate: bool) -> float:
    if separate:
        rows = [model.nll(seq)[1:] for seq in symbols]
    elif block_size is not None:
        rows = windows_nll(model, symbols, block_size)
    else:
        return model.loss(list(symbols))
    return math.fsum(v for row in rows for v in row) / sum(map(len, rows))


@dataclass
class CountedBaseline:
    """The counted n-gram chosen on validation, and its test loss.

    Attributes:
        model: the chosen :class:`NGramLM` (fitted; its ``order`` and ``discount`` are the choice).
        valid: its loss on the validation split (nats per symbol), the lowest of the grid.
        test: its loss on the test split, which took no part in the choice.
        grid: ``{(order, discount): validation loss}`` for every model tried.
        block_size: the window the losses were scored in (``None``: the running text, or separate sequences).
        separate: whether ``valid`` and ``test`` were lists of sequences, each scored on its own.
    """

    model: NGramLM
    valid: float
    test: float
    grid: dict[tuple[int, float], float] = field(repr=False)
    block_size: int | None = None
    separate: bool = False

    @property
    def order(self) -> int:
        return self.model.order

    @property
    def discount(self) -> float:
        return self.model.discount

    def best_valid_by_order(self) -> dict[int, tuple[float, float]]:
        """``{order: (best discount, its validation loss)}``: the grid's best model of each order."""
        best: dict[int, tuple[float, float]] = {}
        for (order, discount), loss in self.grid.items():
            if order not in best or loss < best[order][1]:
                best[order] = (discount, loss)
        return dict(sorted(best.items()))


def best_counted_model(train: Sequence[Hashable], valid: Sequence[Hashable], test: Sequence[Hashable],
                       orders: Iterable[int] = range(1, 9), discounts: Iterable[float] = DISCOUNTS,
                       block_size: int | None = None, smoothing: str = "kneser-ney",
                       separate: bool = False) -> CountedBaseline:
    """The best counted model: order and discount chosen on ``valid``, scored on ``test``.

    ``train``, ``valid`` and ``test`` are sequences of symbols (a str, or lists of token ids). The
    highest order is counted once on ``train``; every ``(order, discount)`` of the grid is scored
    on ``valid`` (in windows of ``block_size`` if given, else as running text); the lowest wins
    (on a tie, the lower order, then the smaller discount). With ``separate=True``, ``train``,
    ``valid`` and ``test`` are lists of sequences (say, the rows of a task's tensor as lists):
    the training sequences are counted as one stream, and each sequence of ``valid`` and ``test``
    is scored on its own, its first symbol being context only. On one core, orders 1-8 with the
    default 8 discounts cost about 2 s to count 330 000 characters and 5 s to score 18 000.
    """
    orders, discounts = sorted(set(orders)), sorted(set(discounts))
    if not orders or not discounts:
        raise ValueError("need at least one order and one discount")
    if separate and block_size is not None:
        raise ValueError("block_size and separate=True exclude each other: separate sequences are their own windows")
    stream = [s for seq in train for s in seq] if separate else list(train)
    full = NGramLM(max(orders), discounts[0], smoothing).fit(stream)
    grid = {(n, d): _mean_loss(full.variant(n, d), valid, block_size, separate) for n in orders for d in discounts}
    order, discount = min(grid, key=lambda key: (grid[key], key))
    model = full.variant(order, discount)
    return CountedBaseline(model, grid[order, discount], _mean_loss(model, test, block_size, separate), grid,
                           block_size, separate)
