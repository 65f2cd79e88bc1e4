"""The counted model itself, and its losses on windows, on separate sequences, and for every setting at once."""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence

import numpy as np

from .chain import _UNSEEN, _Chain, _check_symbols, _discount_rows, _encode, _Stream
from .counting import DISCOUNTS, SCALES, SMOOTHINGS, _Counter, _Order


class NGramLM:
    """An interpolated n-gram model over a sequence of symbols, counted into numpy arrays.

    Args:
        order: ``n``, at least 1: predictions use up to ``n - 1`` preceding symbols.
        discount: ``D`` for ``"kneser-ney"`` and ``"absolute"``, strictly between 0 and 1 (default 0.75).
        smoothing: ``"kneser-ney"`` (one discount, continuation counts below the highest order),
            ``"modified-kneser-ney"`` (three estimated discounts per order and kind of counts) or
            ``"absolute"`` (one discount, raw counts at every order).
        scale: for ``"modified-kneser-ney"`` only, the factor on its estimated discounts (default 1).

    Example::

        lm = NGramLM(order=3).fit("the cat sat on the mat")
        lm.prob("th", "e"), lm.loss("the rat")   # a probability; nats per symbol
        NGramLM(order=3, smoothing="modified-kneser-ney", scale=1.1)
    """

    def __init__(self, order: int, discount: float | None = None, smoothing: str = "kneser-ney",
                 scale: float | None = None) -> None:
        if isinstance(order, bool) or not isinstance(order, int) or order < 1:
            raise ValueError(f"order must be an integer >= 1, got {order!r}")
        if smoothing not in SMOOTHINGS:
            raise ValueError(f"smoothing must be one of {SMOOTHINGS}, got {smoothing!r}")
        if smoothing == "modified-kneser-ney":
            if discount is not None:
                raise ValueError(f"discount is the setting of 'kneser-ney' and 'absolute'; 'modified-kneser-ney' "
                                 f"estimates its discounts and takes a scale, got discount={discount!r}")
            scale = 1.0 if scale is None else scale
            if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0 < scale < math.inf:
                raise ValueError(f"scale must be a finite number > 0, got {scale!r}")
            scale = float(scale)
        else:
            if scale is not None:
                raise ValueError(f"scale is the setting of 'modified-kneser-ney'; {smoothing!r} takes a discount, "
                                 f"got scale={scale!r}")
            discount = 0.75 if discount is None else discount
            if isinstance(discount, bool) or not isinstance(discount, (int, float)) or not 0 < discount < 1:
                raise ValueError(f"discount must be a number strictly between 0 and 1, got {discount!r}")
            discount = float(discount)
        self.order = order
        self.smoothing = smoothing
        #: ``D`` of one-discount smoothing; ``None`` for modified Kneser-Ney.
        self.discount: float | None = discount
        #: The factor on modified Kneser-Ney's estimated discounts; ``None`` for one-discount smoothing.
        self.scale: float | None = scale
        self.vocabulary: list[Hashable] = []
        self._index: dict[Hashable, int] = {}
        self._orders: list[_Order] = []  # orders 1..n; order k's continuation counts are used for k < n

    @property
    def setting_name(self) -> str:
        """``"scale"`` for modified Kneser-Ney, ``"discount"`` otherwise: the one setting tuned."""
        return "scale" if self.smoothing == "modified-kneser-ney" else "discount"

    @property
    def setting(self) -> float:
        """The value of :attr:`setting_name`: the scale of modified Kneser-Ney, or the discount ``D``."""
        return self.scale if self.smoothing == "modified-kneser-ney" else self.discount

    def __repr__(self) -> str:
        return (f"NGramLM(order={self.order}, {self.setting_name}={self.setting}, smoothing={self.smoothing!r}, "
                f"vocabulary={len(self.vocabulary)} symbols)")

    def fit(self, symbols: Sequence[Hashable]) -> NGramLM:
        """Count every n-gram of orders 1..n in ``symbols`` (a str, or a list/tuple of hashable, sortable symbols)."""
        counter = _Counter(self._learn_vocabulary(symbols), len(self.vocabulary), self.smoothing != "absolute")
        for _ in range(self.order):
            counter.count_next_order()
        self._orders = counter.orders
        return self

    def _learn_vocabulary(self, symbols: Sequence[Hashable]) -> np.ndarray:
        """Take the sorted distinct ``symbols`` as the vocabulary; return ``symbols`` as ids ``(N,)``."""
        _check_symbols(symbols, "the training text")
        self.vocabulary = sorted(set(symbols))
        self._index = {s: i for i, s in enumerate(self.vocabulary)}
        return _encode(symbols, self._index)

    def variant(self, order: int | None = None, setting: float | None = None,
                smoothing: str | None = None) -> NGramLM:
        """The model of a lower (or equal) ``order``, another ``setting`` or ``smoothing``, sharing this one's counts.

        ``setting`` is the discount ``D`` or, for modified Kneser-Ney, the scale (by default this
        model's, or the default of another ``smoothing``). The two Kneser-Ney smoothings count
        alike, so either can become the other (or absolute discounting, which needs only the raw
        counts); absolute discounting has no continuation counts to give. The result scores exactly
        as ``NGramLM(order, ...).fit(same text)`` would, without counting again.
        """
        self._check_fitted()
        order = self.order if order is None else order
        if isinstance(order, bool) or not isinstance(order, int) or not 1 <= order <= self.order:
            raise ValueError(f"order must be an integer from 1 to the fitted order {self.order}, got {order!r}")
        smoothing = self.smoothing if smoothing is None else smoothing
        if smoothing not in SMOOTHINGS:
            raise ValueError(f"smoothing must be one of {SMOOTHINGS}, got {smoothing!r}")
        if self.smoothing == "absolute" and smoothing != "absolute":
            raise ValueError(f"a model counted for 'absolute' smoothing has no continuation counts for {smoothing!r}: "
                             "fit one with that smoothing")
        if setting is None and smoothing == self.smoothing:
            setting = self.setting
        return self._sharing(order, setting, self._orders, smoothing)

    def _sharing(self, order: int, setting: float | None, orders: list[_Order],
                 smoothing: str | None = None) -> NGramLM:
        """A model of ``order`` on the counts ``orders`` (those of this vocabulary), without copying them."""
        smoothing = self.smoothing if smoothing is None else smoothing
        name = "scale" if smoothing == "modified-kneser-ney" else "discount"
        lm = NGramLM(order, smoothing=smoothing, **{name: setting})
        top = orders[order - 1]  # always scored with its raw counts: its continuation counts are let go
        lm.vocabulary, lm._index = self.vocabulary, self._index
        lm._orders = [*orders[:order - 1], _Order(top.keys, top.raw)]
        return lm

    def _check_fitted(self) -> None:
        if not self._orders:
            raise ValueError("this NGramLM has not been fitted: call .fit(symbols) first")

    @property
    def nbytes(self) -> int:
        """Bytes held by the count arrays of this model (orders 1..n, continuation counts below n)."""
        self._check_fitted()
        return sum(order.nbytes for order in self._orders)

    def discounts(self) -> dict[int, dict[str, tuple[float, float, float]]]:
        """``{k: {"raw": (D_1, D_2, D_3+), "continuation": (...)}}``: the discounts of each order k.

        ``"raw"`` applies where order k is the highest in use, ``"continuation"`` where it is a lower
        order (absent for absolute discounting, and for order n, which is never a lower order).
        One-discount smoothings give ``(D, D, D)``.
        """
        self._check_fitted()
        result = {}
        for k, table in enumerate(self._orders, 1):
            kinds = {"raw": table.raw}
            if k < self.order and self.smoothing != "absolute":
                kinds["continuation"] = table.continuation
            result[k] = {kind: tuple(float(d) for d in _discount_rows(counts, self.smoothing, [self.setting])[0, 1:])
                         for kind, counts in kinds.items()}
        return result

    def _log_probs(self, stream: _Stream) -> np.ndarray:
        """``(L,)`` natural log of each symbol's probability, from its last ``min(available, n - 1)`` predecessors."""
        self._check_fitted()
        chain = _Chain(stream.ids, stream.available, len(self.vocabulary), self.smoothing, [self.setting])
        for _ in range(self.order):
            chain.advance(self._orders)
        return chain.log_probs[0]

    def prob(self, context: Sequence[Hashable], symbol: Hashable) -> float:
        """``P(symbol | context)``; only the last ``order - 1`` symbols of ``context`` (any length) count.

        A symbol outside :attr:`vocabulary` gets the probability of the "unknown" class.
        """
        self._check_fitted()
        kept = tuple(context)[-(self.order - 1):] if self.order > 1 else ()
        return float(math.exp(self._log_probs(_Stream.running([*kept, symbol], self._index))[-1]))

    def distribution(self, context: Sequence[Hashable]) -> np.ndarray:
        """``(V + 1,)``: ``P(w | context)`` for every symbol ``w`` of :attr:`vocabulary`, then the unknown class.

        Only the last ``order - 1`` symbols of ``context`` (any length) count. The probabilities sum
        to one; a sampler draws the next symbol from them.
        """
        self._check_fitted()
        kept = list(tuple(context)[-(self.order - 1):]) if self.order > 1 else []
        candidates = [*self.vocabulary, _UNSEEN]
        stream = _Stream.sequences([[*kept, symbol] for symbol in candidates], self._index) if kept else None
        if stream is None:  # no context: the first symbol of a text
            stream = _Stream(_encode(candidates, self._index), np.zeros(len(candidates), dtype=np.int64),
                             np.ones(len(candidates), dtype=bool))
        log_probs = self._log_probs(stream)
        return np.exp(log_probs[len(kept)::len(kept) + 1])

    def nll(self, symbols: Sequence[Hashable]) -> np.ndarray:
        """``(len(symbols),)`` negative log-likelihood (nats) of each symbol given up to ``n - 1`` predecessors."""
        self._check_fitted()
        return -self._log_probs(_Stream.running(symbols, self._index))

    def loss(self, symbols: Sequence[Hashable]) -> float:
        """Mean negative log-likelihood in nats per symbol over every position of ``symbols``.

        Symbol ``i`` is predicted from symbols ``max(0, i - n + 1) .. i - 1`` of the same text (so the
        first few from shorter contexts); symbols never seen in training get the "unknown" class's
        probability, so the loss is always finite.
        """
        return float(self.nll(symbols).mean())


def windows_nll(model: NGramLM, symbols: Sequence[Hashable], block_size: int) -> np.ndarray:
    """``(windows, block_size)`` per-symbol loss (nats) on the non-overlapping windows of ``symbols``.

    Window ``w`` is ``symbols[w * block_size : (w + 1) * block_size + 1]``, as a language model's
    loader cuts it; its first symbol is only context, and each of the other ``block_size`` is
    predicted from the symbols before it *in the window*. The last, incomplete window is dropped.
    """
    model._check_fitted()
    stream = _Stream.windows(symbols, model._index, block_size)
    return -model._log_probs(stream)[1:].reshape(-1, block_size)


def sequences_nll(model: NGramLM, sequences: Sequence[Sequence[Hashable]]) -> np.ndarray:
    """``(sequences, T - 1)`` per-symbol loss (nats) of equally long sequences, each from its own past.

    Symbol ``t >= 1`` of each sequence is predicted from symbols ``0 .. t - 1`` of that sequence
    (at most ``n - 1`` of them); the first symbol is only context.
    """
    model._check_fitted()
    stream = _Stream.sequences(sequences, model._index)
    lengths = sorted({len(seq) for seq in sequences})
    if len(lengths) > 1:
        raise ValueError(f"sequences must all have the same length, got lengths from {lengths[0]} to {lengths[-1]}")
    return -model._log_probs(stream)[stream.scored].reshape(len(sequences), lengths[0] - 1)


def losses_by_setting(model: NGramLM, symbols: Sequence, settings: Iterable[float], smoothing: str | None = None,
                      block_size: int | None = None, separate: bool = False) -> dict[float, float]:
    """``{setting: mean loss}`` of ``model``'s order and counts under each setting, scored in one pass.

    ``smoothing`` may switch between the smoothings that share counts (see :meth:`NGramLM.variant`);
    ``settings`` are then its discounts (or scales). ``symbols`` is scored as in :func:`best_counted_model`.
    Cheaper than a :meth:`NGramLM.variant` per setting: one pass of the chain for all of them.
    """
    smoothing = model.smoothing if smoothing is None else smoothing
    settings = list(settings)
    scales = smoothing == "modified-kneser-ney"
    _, settings = _settings_grid(smoothing, None if scales else settings, settings if scales else None)
    shared = model.variant(smoothing=smoothing, setting=settings[0])
    stream = _Stream.of(symbols, shared._index, block_size, separate)
    chain = _Chain(stream.ids, stream.available, len(shared.vocabulary), smoothing, settings)
    for _ in range(shared.order):
        chain.advance(shared._orders)
    losses = -chain.log_probs[:, stream.scored].mean(axis=1)
    return {setting: float(loss) for setting, loss in zip(settings, losses)}


def _settings_grid(smoothing: str, discounts: Iterable[float] | None,
                   scales: Iterable[float] | None) -> tuple[str, list[float]]:
    """The name and the grid of the one setting ``smoothing`` takes, each value checked as :class:`NGramLM` does."""
    if smoothing not in SMOOTHINGS:
        raise ValueError(f"smoothing must be one of {SMOOTHINGS}, got {smoothing!r}")
    if smoothing == "modified-kneser-ney":
        if discounts is not None:
            raise ValueError(f"discounts is the grid of 'kneser-ney' and 'absolute'; 'modified-kneser-ney' tunes "
                             f"scales, got discounts={discounts!r}")
        name, grid = "scale", SCALES if scales is None else scales
    else:
        if scales is not None:
            raise ValueError(f"scales is the grid of 'modified-kneser-ney'; {smoothing!r} tunes discounts, "
                             f"got scales={scales!r}")
        name, grid = "discount", DISCOUNTS if discounts is None else discounts
    grid = sorted(set(grid))
    if not grid:
        raise ValueError(f"need at least one {name}, got an empty grid")
    for value in grid:
        NGramLM(1, smoothing=smoothing, **{name: value})
    return name, grid
