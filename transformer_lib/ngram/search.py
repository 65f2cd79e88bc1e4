"""The best counted model: the order grown and the setting chosen on validation, scored on test."""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .chain import _Chain, _check_sequences, _Stream
from .counting import _Counter
from .model import NGramLM, _settings_grid


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
