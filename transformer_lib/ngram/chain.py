"""Scoring: the interpolation of every order, from the highest with a seen context down, at many positions at once."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from .counting import _Counts, _next_grams, _Order, modified_kneser_ney_discounts


@dataclass
class _Seen:
    """What one table says at the scored positions ``(P,)`` whose context it has seen (``c(h .) > 0``).

    Only those positions are gathered and interpolated: at high orders most contexts of a text
    never occurred in training, and there the order passes the one below through unchanged.
    """

    at: np.ndarray  # (Q,) which of the P positions have a seen context
    count: np.ndarray  # (Q,) c(h w) as floats, 0 for a gram never seen
    level: np.ndarray  # (Q,) min(c(h w), 3): which discount it loses
    total: np.ndarray  # (Q,) c(h .) > 0, as floats
    followers: np.ndarray  # (3, Q) N_1(h .), N_2(h .), N_3+(h .), as floats

    @classmethod
    def of(cls, counts: _Counts, contexts: np.ndarray, grams: np.ndarray) -> _Seen:
        """From the ids of each position's context and gram ``(P,)``, -1 where the table has none."""
        at = np.flatnonzero(contexts >= 0)
        at = at[counts.total[contexts[at]] > 0]
        contexts, grams = contexts[at], grams[at]
        known = grams >= 0
        count = np.where(known, counts.per_gram[np.where(known, grams, 0)], 0).astype(float)
        return cls(at, count, np.minimum(count, 3).astype(np.intp), counts.total[contexts].astype(float),
                   counts.followers[:, contexts].astype(float))


def _discount_rows(counts: _Counts, smoothing: str, settings: np.ndarray) -> np.ndarray:
    """``(S, 4)``: ``[0, D_1, D_2, D_3+]`` per setting, so that ``row[min(c, 3)]`` is the discount of a count c."""
    if smoothing == "modified-kneser-ney":
        rows = [modified_kneser_ney_discounts(counts.count_of_counts, scale) for scale in settings]
    else:
        rows = [(d, d, d) for d in settings]
    return np.array([(0.0, *row) for row in rows])


def _interpolate(seen: _Seen, discounts: np.ndarray, p_lower: np.ndarray) -> np.ndarray:
    """``(S, P)``: ``(c - D(c) + gamma(h) p_lower) / c(h .)``, or ``p_lower`` where ``c(h .) = 0``.

    ``discounts`` ``(S, 4)`` from :func:`_discount_rows`; ``p_lower`` ``(S, P)``, the order below.
    """
    taken = discounts[:, seen.level]
    gamma = (discounts[:, 1, None] * seen.followers[0] + discounts[:, 2, None] * seen.followers[1]
             + discounts[:, 3, None] * seen.followers[2])
    p = p_lower.copy()
    p[:, seen.at] = (seen.count - taken + gamma * p_lower[:, seen.at]) / seen.total
    return p


class _Chain:
    """The interpolation chain over one scored stream, for several settings at once, one order per step.

    After :meth:`advance` has run ``n`` times, ``log_probs[s, j]`` is the natural log of the probability
    of symbol ``j`` under the model of order ``n`` with ``settings[s]``, predicted from its last
    ``min(available[j], n - 1)`` predecessors.
    """

    def __init__(self, ids: np.ndarray, available: np.ndarray, vocab_size: int, smoothing: str,
                 settings: Sequence[float]) -> None:
        self.ids, self.vocab_size, self.smoothing = ids, vocab_size, smoothing
        self.settings = np.asarray(settings, dtype=float)
        self.top = available + 1  # the highest order each position may use
        self.order = 0
        self.active = np.arange(len(ids))  # the positions that use the current order
        self.log_probs = np.zeros((len(self.settings), len(ids)))
        self._p_lower = np.full((len(self.settings), len(ids)), 1.0 / (vocab_size + 1))  # at the active positions
        self._grams = np.zeros(len(ids) + 1, dtype=np.int64)  # index j: the gram ending at position j - 1
        self._last: tuple[np.ndarray, np.ndarray] = (self._grams[:0], self._grams[:0])  # (contexts, grams)

    def advance(self, orders: Sequence[_Order]) -> None:
        """Score order ``k = self.order + 1`` (raw counts); ``orders`` must hold orders 1..k."""
        k = self.order + 1
        if k >= 2:
            self._lower(orders[k - 2], keep=self.top[self.active] >= k)
        table = orders[k - 1]
        contexts = self._grams[self.active]
        self._grams = _next_grams(table.keys, self._grams, self.ids, self.vocab_size)
        grams = self._grams[self.active + 1]
        p = _interpolate(_Seen.of(table.raw, contexts, grams), _discount_rows(table.raw, self.smoothing, self.settings),
                         self._p_lower)
        self.log_probs[:, self.active] = np.log(p)
        self._last = (contexts, grams)
        self.order = k

    def _lower(self, table: _Order, keep: np.ndarray) -> None:
        """Carry the chain through ``table`` as a lower order, at the active positions that go on (``keep``)."""
        counts = table.raw if self.smoothing == "absolute" else table.continuation
        if not keep.all():
            self.active, self._p_lower = self.active[keep], self._p_lower[:, keep]
            self._last = tuple(ids[keep] for ids in self._last)
        self._p_lower = _interpolate(_Seen.of(counts, *self._last),
                                     _discount_rows(counts, self.smoothing, self.settings), self._p_lower)


def _check_symbols(symbols: object, what: str) -> None:
    if not isinstance(symbols, (str, list, tuple)):
        raise ValueError(f"{what} must be a str, list or tuple of symbols, got {type(symbols).__name__}")
    if not symbols:
        raise ValueError(f"{what} is empty: expected at least one symbol")


def _check_sequences(sequences: object, what: str) -> None:
    if not isinstance(sequences, (list, tuple)):
        raise ValueError(f"{what} must be a list or tuple of sequences, got {type(sequences).__name__}")
    if not sequences:
        raise ValueError(f"{what} is an empty {type(sequences).__name__}: expected at least one sequence")
    for seq in sequences:
        _check_symbols(seq, f"each of {what}")


def _check_block_size(block_size: object) -> None:
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ValueError(f"block_size must be an integer >= 1, got {block_size!r}")


@dataclass
class _Stream:
    """Symbols to score: ids ``(L,)``, how many predecessors each may use ``(L,)``, and which count ``(L,)``."""

    ids: np.ndarray
    available: np.ndarray
    scored: np.ndarray

    @classmethod
    def running(cls, symbols: Sequence[Hashable], index: dict) -> _Stream:
        """Running text: symbol ``i`` may use all ``i`` before it; all count."""
        _check_symbols(symbols, "the text to score")
        ids = _encode(symbols, index)
        return cls(ids, np.arange(len(ids)), np.ones(len(ids), dtype=bool))

    @classmethod
    def windows(cls, symbols: Sequence[Hashable], index: dict, block_size: int) -> _Stream:
        """Non-overlapping windows of ``block_size + 1`` symbols: ``symbols[w * B : (w + 1) * B + 1]``.

        Each window's first symbol is context only; symbol ``i >= 1`` of the stream may use
        ``(i - 1) % B + 1`` predecessors. The last, incomplete window is dropped.
        """
        _check_block_size(block_size)
        _check_symbols(symbols, "the text to score")
        n = (len(symbols) - 1) // block_size
        if n == 0:
            raise ValueError(f"{len(symbols)} symbols hold no window of block_size + 1 = {block_size + 1}")
        ids = _encode(symbols[:n * block_size + 1], index)
        available = np.concatenate([[0], np.arange(n * block_size) % block_size + 1])
        return cls(ids, available, available > 0)

    @classmethod
    def sequences(cls, sequences: Sequence[Sequence[Hashable]], index: dict) -> _Stream:
        """Separate sequences, each from its own past: its first symbol is context only."""
        _check_sequences(sequences, "the sequences to score")
        ids = np.concatenate([_encode(seq, index) for seq in sequences])
        available = np.concatenate([np.arange(len(seq)) for seq in sequences])
        if not available.any():
            raise ValueError("every sequence has a single symbol: expected at least two, one to predict")
        return cls(ids, available, available > 0)

    @classmethod
    def of(cls, symbols: Sequence, index: dict, block_size: int | None, separate: bool) -> _Stream:
        if separate:
            return cls.sequences(symbols, index)
        return cls.running(symbols, index) if block_size is None else cls.windows(symbols, index, block_size)


#: A symbol no vocabulary holds: it encodes as the unknown class.
_UNSEEN = object()


def _encode(symbols: Iterable[Hashable], index: dict) -> np.ndarray:
    """``(L,)`` int64 ids: ``index[symbol]``, or ``len(index)`` (the unknown class) for a symbol not in it."""
    unknown = len(index)
    return np.fromiter((index.get(s, unknown) for s in symbols), dtype=np.int64)
