"""Counting: every n-gram of a training stream, one order at a time, in sorted numpy arrays; the discounts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

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
