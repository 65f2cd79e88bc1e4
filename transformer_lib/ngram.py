"""A counted n-gram language model: the baseline a neural language model has to beat.

The model counts every n-gram of orders 1..n in a training sequence (characters of a ``str``, or
any list of hashable, sortable symbols such as token ids) and predicts the next symbol from at most
``n - 1`` preceding ones. Jurafsky & Martin, *Speech and Language Processing*, ch. 3, derive the
smoothings below; Chen & Goodman (1999) compare them.

**Interpolation.** Write ``h`` for a context of ``k - 1`` symbols, ``h'`` for ``h`` without its
oldest symbol, ``c(h w)`` for a count and ``P_{k-1}`` for the model one order lower. Each order
takes a discount ``D(c)`` from every count and hands the mass it frees to the order below::

    P_k(w | h) = ( c(h w) - D(c(h w))  +  gamma(h) * P_{k-1}(w | h') ) / c(h .)

    gamma(h) = D_1 N_1(h .) + D_2 N_2(h .) + D_3+ N_3+(h .)

where ``c(h .) = sum_w c(h w)``, ``D(0) = 0``, and ``N_r(h .)`` is the number of distinct ``w``
with ``c(h w) = r`` (``N_3+``: at least 3). ``gamma(h)`` is exactly the mass taken, so every
``P_k`` sums to one. A context never seen (``c(h .) = 0``) passes the lower order through
unchanged: ``P_k(w | h) = P_{k-1}(w | h')``. Three smoothings fill in ``D`` and ``c``:

* ``"absolute"``: one discount ``D`` for every count (``D_1 = D_2 = D_3+ = D``, so
  ``gamma(h) = D N_1+(h .)``) and raw counts at every order (Ney, Essen & Kneser, 1994).
* ``"kneser-ney"``: one discount ``D``, raw counts at the highest order in use, and *continuation
  counts* ``N_1+(. h w)`` below it, the number of distinct symbols seen before ``h w`` (Kneser &
  Ney, 1995; the interpolated form of Chen & Goodman, 1999, section 3.5). A lower order is only
  consulted when the longer context says little, so it should rate ``w`` by how many contexts it
  completes, not by how often it occurs (the classic example: "Francisco" is frequent but follows
  almost only "San").
* ``"modified-kneser-ney"``: the same counts with three discounts ``D_1, D_2, D_3+`` per order *and
  per kind of counts* (raw, continuation), each set from that table's count-of-counts ``n_r``
  (how many of its grams have count exactly ``r``) by Chen & Goodman's eq. 26 (section 3.6)::

      Y = n_1 / (n_1 + 2 n_2),  D_1 = 1 - 2 Y n_2 / n_1,  D_2 = 2 - 3 Y n_3 / n_2,  D_3+ = 3 - 4 Y n_4 / n_3

  then multiplied by one common ``scale``, tuned on validation (:func:`modified_kneser_ney_discounts`
  says how a table too small for the estimate, or a scale too large, is handled).

The one setting each smoothing takes is named ``discount`` (``D``, between 0 and 1) for
``"kneser-ney"`` and ``"absolute"``, and ``scale`` (a positive factor on the estimated discounts)
for ``"modified-kneser-ney"``; :attr:`NGramLM.setting` is whichever applies.

Below the unigram lies a uniform distribution over the vocabulary **plus one**: every symbol never
seen in training falls into one extra class, "unknown", that receives ``1 / (V + 1)`` of the
unigram's interpolation mass. So probabilities over the vocabulary and the unknown class sum to
one, and the loss of any text is finite.

**Shorter contexts.** At the start of a text (or a window, or a sequence) a symbol has fewer than
``n - 1`` predecessors; it is predicted from the ones it has: by the model of that lower order,
with raw counts at its top. Per position, the number of usable predecessors caps the order.

**Counting with arrays.** Symbols become ids ``0..V-1`` (the sorted vocabulary; an unseen symbol is
``V``). The k-grams get dense ids one order at a time: the k-gram ending at position ``i`` has the
key ``id_{k-1}(gram ending at i - 1) * V + symbol_i``, and ``np.unique`` of the keys numbers the
distinct ones in sorted order, which is (context, symbol) order, because the (k-1)-gram ids are
themselves sorted. The context of a k-gram is ``key // V``; a look-up is ``np.searchsorted``. The
continuation count of a k-gram is how many distinct (k+1)-grams end in it: one occurrence of each
(k+1)-gram gives its suffix's id, and ``np.bincount`` counts them. Each order keeps its keys and
counts, and per context the total and the number of followers of count 1, 2 and >= 3, in the
smallest unsigned integer type that holds them (:attr:`NGramLM.nbytes`).

**Scoring** is one vectorised pass per order over a whole stream: the chain starts at
``p_0 = 1 / (V + 1)``; at order ``k`` it computes, from the same ``p_{k-1}``, the probability with
raw counts (kept by the positions whose cap is ``k``) and the one with lower-order counts (carried
on to order ``k + 1``). :meth:`NGramLM.nll`, :meth:`NGramLM.loss`, :meth:`NGramLM.prob`,
:func:`windows_nll` and :func:`sequences_nll` all go through it.

**The best counted model.** A neural model is read against the strongest counted model, not a
fixed order: :func:`best_counted_model` counts order 1, 2, 3, ... one at a time, scores the
validation split with every setting of a grid at each order (sharing the counts), and stops at
the first order whose best validation loss is not below the previous order's (or at a limit). It
keeps the order and setting with the lowest validation loss, and reports that model's loss on a
test split, which took no part in the choice. With ``block_size`` set, both splits are scored as a
language model of that context is: cut into non-overlapping windows of ``block_size + 1``
symbols, each window's last ``block_size`` symbols predicted from the earlier ones of the same
window. On the shipped Python corpus (3.9 million training characters, 96 symbols) each order
costs about 0.7 s of one core, counting and scoring 220 000 validation characters with the 12
scales of :data:`SCALES` together; the counts of orders 1-17 take 360 MiB, those of 1-40 1.5 GiB.
"""

from __future__ import annotations

import math
import time
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["NGramLM", "CountedBaseline", "best_counted_model", "windows_nll", "sequences_nll", "losses_by_setting",
           "modified_kneser_ney_discounts", "SMOOTHINGS", "DISCOUNTS", "SCALES", "FALLBACK_DISCOUNTS"]

SMOOTHINGS = ("modified-kneser-ney", "kneser-ney", "absolute")
#: The discounts :func:`best_counted_model` tries for one-discount smoothing (character models of high
#: order prefer large ones).
DISCOUNTS = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
#: The scales :func:`best_counted_model` tries on the estimated discounts of modified Kneser-Ney.
SCALES = (0.6, 0.7, 0.8, 0.9, 0.95, 1.0, 1.05, 1.1, 1.15, 1.2, 1.3, 1.4)
#: ``(D_1, D_2, D_3+)`` where a table's count-of-counts cannot give them (KenLM's ``--discount_fallback``).
FALLBACK_DISCOUNTS = (0.5, 1.0, 1.5)
#: A scaled discount ``D_r`` stays at most ``r - DISCOUNT_MARGIN``: a seen gram keeps some of its own count.
DISCOUNT_MARGIN = 0.01


def modified_kneser_ney_discounts(count_of_counts: Sequence[int], scale: float = 1.0) -> tuple[float, float, float]:
    """``(D_1, D_2, D_3+)`` of one table from its count-of-counts ``(n_1, n_2, n_3, n_4)``, times ``scale``.

    Chen & Goodman's eq. 26: ``Y = n_1 / (n_1 + 2 n_2)``, ``D_r = r - (r + 1) Y n_{r+1} / n_r``. Where
    the estimate is undefined (some ``n_r`` is 0: a small table, or the unigram of a small vocabulary)
    or some ``D_r`` falls outside ``(0, r)``, the table takes :data:`FALLBACK_DISCOUNTS` instead, as
    KenLM does. Then each ``D_r`` is multiplied by ``scale`` and capped at ``r - DISCOUNT_MARGIN``;
    it stays above 0 because ``scale`` does.
    """
    n1, n2, n3, n4 = (int(n) for n in count_of_counts)
    estimate = FALLBACK_DISCOUNTS
    if min(n1, n2, n3, n4) > 0:
        y = n1 / (n1 + 2 * n2)
        formula = (1 - 2 * y * n2 / n1, 2 - 3 * y * n3 / n2, 3 - 4 * y * n4 / n3)
        if all(0 < d < r for r, d in enumerate(formula, 1)):
            estimate = formula
    return tuple(min(scale * d, r - DISCOUNT_MARGIN) for r, d in enumerate(estimate, 1))


def _compact(values: np.ndarray) -> np.ndarray:
    """Non-negative integers in the smallest unsigned dtype that holds their maximum."""
    largest = int(values.max()) if values.size else 0
    for dtype in (np.uint8, np.uint16, np.uint32):
        if largest <= np.iinfo(dtype).max:
            return values.astype(dtype)
    return values.astype(np.uint64)


@dataclass
class _Counts:
    """One kind of counts (raw or continuation) of the k-grams of one order, and what interpolation needs.

    Attributes:
        per_gram: ``(M_k,)`` the count of each k-gram, in the order of the table's keys.
        total: ``(M_{k-1},)`` per context ``h`` (a (k-1)-gram id): ``c(h .) = sum_w c(h w)``.
        followers: ``(3, M_{k-1})`` per context: ``N_1(h .)``, ``N_2(h .)``, ``N_3+(h .)``.
        count_of_counts: ``(n_1, n_2, n_3, n_4)``: how many k-grams have count exactly 1, 2, 3, 4.
    """

    per_gram: np.ndarray
    total: np.ndarray
    followers: np.ndarray
    count_of_counts: tuple[int, int, int, int]

    @classmethod
    def of(cls, per_gram: np.ndarray, contexts: np.ndarray, n_contexts: int) -> _Counts:
        """From the count of each k-gram ``(M_k,)`` and its context id ``(M_k,)``, with ``n_contexts`` ids."""
        total = np.bincount(contexts, weights=per_gram, minlength=n_contexts).astype(np.int64)
        # One bincount for all three N_r: row r of (4, n_contexts) counts the grams with min(count, 3) = r.
        level = np.minimum(per_gram, 3)
        followers = np.bincount(level * n_contexts + contexts, minlength=4 * n_contexts).reshape(4, n_contexts)[1:]
        count_of_counts = tuple(int(n) for n in np.bincount(np.minimum(per_gram, 5), minlength=6)[1:5])
        return cls(_compact(per_gram), _compact(total), _compact(followers), count_of_counts)

    @property
    def nbytes(self) -> int:
        return self.per_gram.nbytes + self.total.nbytes + self.followers.nbytes


@dataclass
class _Order:
    """The distinct k-grams of one order ``k``, sorted by (context, symbol), and their counts.

    Attributes:
        keys: ``(M_k,)`` ascending ``context id * V + symbol``: the k-gram with id ``m`` is ``keys[m]``.
        raw: the raw counts ``c(h w)``.
        continuation: the continuation counts ``N_1+(. h w)``, once the (k+1)-grams have been counted
            (``None`` before, and for absolute discounting, which does not use them).
    """

    keys: np.ndarray
    raw: _Counts
    continuation: _Counts | None = None

    @property
    def nbytes(self) -> int:
        return self.keys.nbytes + self.raw.nbytes + (self.continuation.nbytes if self.continuation else 0)


@dataclass
class _Grams:
    """The k-grams of one order at every position ``s = 0 .. N - k`` of a training stream of ``N`` symbols.

    Attributes:
        ids: ``(N - k + 1,)`` the id of the k-gram starting at each position (ids number the distinct
            k-grams in sorted order).
        order: ``(N - k + 1,)`` the positions sorted by (id, position).
    """

    ids: np.ndarray
    order: np.ndarray

    @classmethod
    def empty(cls, n: int) -> _Grams:
        """Order 0: the one empty gram, at each of the ``n + 1`` positions of a stream of ``n`` symbols."""
        dtype = np.int32 if n < np.iinfo(np.int32).max else np.int64  # positions and ids: half the memory
        return cls(np.zeros(n + 1, dtype=dtype), np.arange(n + 1, dtype=dtype))


def _sort_next_order(symbols: np.ndarray, below: _Grams) -> tuple[_Grams, np.ndarray, np.ndarray]:
    """The k-grams of ``symbols`` ``(N,)`` from the (k-1)-grams; per distinct k-gram, its first position and count.

    The same as ``np.unique`` of the keys ``below.ids[s] * V + symbols[s + k - 1]`` (with
    ``return_inverse``, ``return_index`` and ``return_counts``), without comparing keys: the k-gram
    at ``s`` is ``symbols[s]`` followed by the (k-1)-gram at ``s + 1``, so the positions
    ``below.order - 1`` (all but -1) come sorted by the rest of their gram, and a stable sort by the
    first symbol alone (a radix sort, linear in ``N``) sorts them by the whole gram: in the order of
    (first symbol, rest), which is that of (context, last symbol).
    """
    order = below.order[below.order > 0]
    order -= 1
    order = order[np.argsort(symbols[order], kind="stable")]
    first_symbol, rest = symbols[order], below.ids[order + 1]
    new = np.ones(len(order), dtype=bool)  # where a distinct k-gram begins, in sorted order
    new[1:] = (first_symbol[1:] != first_symbol[:-1]) | (rest[1:] != rest[:-1])
    ids = np.empty_like(below.ids, shape=len(order))
    ids[order] = np.cumsum(new, dtype=ids.dtype) - 1
    at = np.flatnonzero(new)
    return _Grams(ids, order), order[at], np.diff(at, append=len(order))


class _Counter:
    """Counts the n-grams of a training stream of ids ``(N,)``, one order at a time: 1, 2, 3, ..."""

    def __init__(self, ids: np.ndarray, vocab_size: int, continuation: bool) -> None:
        self.ids = ids
        self.vocab_size = vocab_size
        self.continuation = continuation
        self.orders: list[_Order] = []
        self._grams = _Grams.empty(len(ids))  # the highest order's grams at each position
        self._symbols = _compact(ids)  # the smallest dtype sorts fastest

    def count_next_order(self) -> None:
        """Count order ``k = len(self.orders) + 1``; fill in the continuation counts of order ``k - 1``."""
        k, v = len(self.orders) + 1, self.vocab_size
        n_contexts = len(self.orders[-1].keys) if self.orders else 1
        below = self._grams
        self._grams, first, counts = _sort_next_order(self._symbols, below)
        contexts = below.ids[first].astype(np.int64)  # the (k-1)-gram each k-gram begins with
        grams = contexts * v + self.ids[first + k - 1]
        if n_contexts * v <= np.iinfo(np.uint32).max:
            grams = grams.astype(np.uint32)  # half the memory
        if self.continuation and self.orders:
            # A k-gram's suffix is the (k-1)-gram it ends with: one per distinct k-gram.
            suffixes = below.ids[first + 1]
            lower = self.orders[-1]
            lower_contexts = lower.keys.astype(np.int64) // v
            n_lower_contexts = len(self.orders[-2].keys) if len(self.orders) > 1 else 1
            lower.continuation = _Counts.of(np.bincount(suffixes, minlength=len(lower.keys)), lower_contexts,
                                            n_lower_contexts)
        self.orders.append(_Order(grams, _Counts.of(counts, contexts, n_contexts)))


def _next_grams(keys: np.ndarray, grams: np.ndarray, ids: np.ndarray, vocab_size: int) -> np.ndarray:
    """The ids of the k-grams of a scored stream, from those of its (k-1)-grams.

    ``grams`` ``(L + 1,)``: index ``j`` holds the id of the (k-1)-gram ending at position ``j - 1``,
    or -1 where it was never seen in training (or would start before the stream). Returns the same
    for the k-grams, found among ``keys`` ``(M_k,)`` by binary search.
    """
    found = np.full(len(grams), -1, dtype=np.int64)
    contexts = grams[:-1]
    valid = (contexts >= 0) & (ids < vocab_size)
    if keys.size and valid.any():
        query = (contexts[valid] * vocab_size + ids[valid]).astype(keys.dtype)
        at = np.minimum(np.searchsorted(keys, query), len(keys) - 1)
        found[1:][valid] = np.where(keys[at] == query, at, -1)
    return found


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


def _mean_loss(model: NGramLM, symbols: Sequence, block_size: int | None, separate: bool) -> float:
    stream = _Stream.of(symbols, model._index, block_size, separate)
    return float(-model._log_probs(stream)[stream.scored].mean())


@dataclass
class CountedBaseline:
    """The counted n-gram chosen on validation, and its test loss.

    Attributes:
        model: the chosen :class:`NGramLM` (fitted; its ``order`` and ``setting`` are the choice).
        valid: its loss on the validation split (nats per symbol), the lowest of the grid.
        test: its loss on the test split, which took no part in the choice.
        grid: ``{(order, setting): validation loss}`` for every model tried; the setting is the
            discount ``D``, or the scale for modified Kneser-Ney.
        block_size: the window the losses were scored in (``None``: the running text, or separate sequences).
        separate: whether ``valid`` and ``test`` were lists of sequences, each scored on its own.
        stopped_at: the highest order counted and scored.
        stop_reason: why the search stopped there, in words.
        cpu_seconds: CPU time (``time.process_time``) of the whole search, test scoring included.
    """

    model: NGramLM
    valid: float
    test: float
    grid: dict[tuple[int, float], float] = field(repr=False)
    block_size: int | None = None
    separate: bool = False
    stopped_at: int = 0
    stop_reason: str = ""
    cpu_seconds: float = 0.0

    @property
    def order(self) -> int:
        return self.model.order

    @property
    def smoothing(self) -> str:
        return self.model.smoothing

    @property
    def setting(self) -> float:
        """The chosen scale (modified Kneser-Ney) or discount ``D``: see :attr:`setting_name`."""
        return self.model.setting

    @property
    def setting_name(self) -> str:
        return self.model.setting_name

    @property
    def discount(self) -> float | None:
        """The chosen ``D`` of one-discount smoothing; ``None`` for modified Kneser-Ney (see :attr:`setting`)."""
        return self.model.discount

    def best_valid_by_order(self) -> dict[int, tuple[float, float]]:
        """``{order: (best setting, its validation loss)}``: the grid's best model of each order."""
        best: dict[int, tuple[float, float]] = {}
        for (order, setting), loss in self.grid.items():
            if order not in best or loss < best[order][1]:
                best[order] = (setting, loss)
        return dict(sorted(best.items()))


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


def _check_orders(orders: Iterable[int] | None, max_order: int) -> list[int] | None:
    if isinstance(max_order, bool) or not isinstance(max_order, int) or max_order < 1:
        raise ValueError(f"max_order must be an integer >= 1, got {max_order!r}")
    if orders is None:
        return None
    orders = sorted(set(orders))
    if not orders:
        raise ValueError("need at least one order, got an empty list of orders")
    if any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in orders):
        raise ValueError(f"orders must be integers >= 1, got {orders}")
    return orders


def _longest_context(valid: _Stream, block_size: int | None, separate: bool) -> tuple[int, str]:
    """The highest order validation can tell apart from the one below, and how to say it was reached."""
    limit = int(valid.available.max()) + 1
    if block_size is not None:
        return limit, f"reached the window's limit: order block_size + 1 = {limit}"
    if separate:
        return limit, f"reached the length of the longest validation sequence, {limit}"
    return limit, f"reached the length of the validation text, {limit}"


def best_counted_model(train: Sequence, valid: Sequence, test: Sequence, orders: Iterable[int] | None = None,
                       discounts: Iterable[float] | None = None, scales: Iterable[float] | None = None,
                       block_size: int | None = None, smoothing: str = "modified-kneser-ney", separate: bool = False,
                       max_order: int = 40, min_gain: float = 0.0) -> CountedBaseline:
    """The best counted model: order and setting chosen on ``valid``, scored on ``test``.

    ``train``, ``valid`` and ``test`` are sequences of symbols (a str, or lists of token ids). With
    ``orders=None`` the order grows: orders 1, 2, 3, ... are counted on ``train`` one at a time, and
    each is scored on ``valid`` with every setting of the grid (``scales`` for modified Kneser-Ney,
    default :data:`SCALES`; ``discounts`` for the others, default :data:`DISCOUNTS`); the search
    stops at the first order whose best validation loss is not below the previous order's (by more
    than ``min_gain`` nats, if given), or at ``max_order``, or at the longest context validation
    has (``block_size + 1`` in windows). With ``orders`` given, exactly those orders are scored. The
    lowest validation loss of everything tried wins (on a tie, the lower order, then the smaller
    setting). On characters, validation tends to keep falling by a few ten-thousandths of a nat per
    order long after the gains that matter, each order costing memory: ``min_gain=1e-3`` stops there.

    Validation and test are scored in windows of ``block_size`` if given, else as running text. With
    ``separate=True``, ``train``, ``valid`` and ``test`` are lists of sequences (say, the rows of a
    task's tensor as lists): the training sequences are counted as one stream, and each sequence of
    ``valid`` and ``test`` is scored on its own, its first symbol being context only.
    """
    start = time.process_time()
    name, settings = _settings_grid(smoothing, discounts, scales)
    orders = _check_orders(orders, max_order)
    if isinstance(min_gain, bool) or not isinstance(min_gain, (int, float)) or not 0 <= min_gain < math.inf:
        raise ValueError(f"min_gain must be a finite number >= 0, got {min_gain!r}")
    if separate and block_size is not None:
        raise ValueError("block_size and separate=True exclude each other: separate sequences are their own windows")
    if separate:
        _check_sequences(train, "the training sequences")
        train = [s for seq in train for s in seq]
    shell = NGramLM(1, smoothing=smoothing, **{name: settings[0]})  # holds the vocabulary until the choice
    counter = _Counter(shell._learn_vocabulary(train), len(shell.vocabulary), smoothing != "absolute")
    stream = _Stream.of(valid, shell._index, block_size, separate)
    chain = _Chain(stream.ids, stream.available, len(shell.vocabulary), smoothing, settings)

    grid: dict[tuple[int, float], float] = {}
    best_by_order: list[float] = []
    limit, limit_reason = _longest_context(stream, block_size, separate)
    if max_order < limit:
        limit, limit_reason = max_order, f"reached max_order = {max_order}"
    last = limit if orders is None else orders[-1]
    stop_reason = f"scored the orders given, {orders[0]} to {orders[-1]}" if orders else limit_reason
    for n in range(1, last + 1):
        counter.count_next_order()
        chain.advance(counter.orders)
        if orders is not None and n not in orders:
            continue
        losses = -chain.log_probs[:, stream.scored].mean(axis=1)
        grid.update({(n, s): float(loss) for s, loss in zip(settings, losses)})
        best_by_order.append(float(losses.min()))
        if orders is None and n >= 2 and best_by_order[-2] - best_by_order[-1] <= min_gain:
            by = f"{min_gain:g} " if min_gain else ""
            stop_reason = (f"order {n}'s best validation loss {best_by_order[-1]:.4f} is not {by}below "
                           f"order {n - 1}'s {best_by_order[-2]:.4f}")
            last = n
            break
    order, setting = min(grid, key=lambda key: (grid[key], key))
    model = shell._sharing(order, setting, counter.orders)
    test_loss = _mean_loss(model, test, block_size, separate)
    return CountedBaseline(model, grid[order, setting], test_loss, grid, block_size, separate, last, stop_reason,
                           time.process_time() - start)
