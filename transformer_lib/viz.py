"""Figures for the book and for training runs. Every function returns a ``matplotlib`` Figure.

Nothing is shown or saved here: call ``fig.savefig(path)`` or let Jupyter display it.
The figures are built with the object-oriented API, so they work with any backend
(``Agg`` included) and never touch pyplot's global state.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from transformer_lib.trainer import History

__all__ = [
    "plot_attention",
    "plot_attention_grid",
    "plot_positional_encoding",
    "plot_history",
    "plot_lr_schedule",
]


def _matrix(weights: torch.Tensor | np.ndarray, dims: int, what: str) -> np.ndarray:
    array = weights.detach().float().cpu().numpy() if isinstance(weights, torch.Tensor) else np.asarray(weights)
    if array.ndim != dims:
        raise ValueError(f"{what}, got shape {array.shape}")
    return array


def _heatmap(ax: Axes, matrix: np.ndarray, keys: Sequence[str] | None, queries: Sequence[str] | None) -> None:
    """Draw ``matrix`` ``(T, S)`` (rows: queries, columns: keys) with optional token labels."""
    for labels, size, axis in ((keys, matrix.shape[1], "keys"), (queries, matrix.shape[0], "queries")):
        if labels is not None and len(labels) != size:
            raise ValueError(f"need {size} {axis} labels for a {matrix.shape} matrix, got {len(labels)}")
    ax.imshow(matrix, cmap="viridis", vmin=0.0, aspect="auto")
    if keys is not None:
        ax.set_xticks(range(len(keys)), list(keys), rotation=90)
    if queries is not None:
        ax.set_yticks(range(len(queries)), list(queries))


def plot_attention(weights: torch.Tensor | np.ndarray, keys: Sequence[str] | None = None,
                   queries: Sequence[str] | None = None, title: str = "attention") -> Figure:
    """Heatmap of one attention matrix ``(T, S)``: row ``t`` shows where query ``t`` looks.

    ``keys`` (``S`` labels, e.g. source tokens) go along the x axis, ``queries`` (``T``
    labels) along the y axis.
    """
    matrix = _matrix(weights, 2, "weights must be one attention matrix (T, S)")
    fig = Figure(figsize=(1.5 + 0.35 * matrix.shape[1], 1.2 + 0.35 * matrix.shape[0]))
    ax = fig.subplots()
    _heatmap(ax, matrix, keys, queries)
    ax.set_xlabel("key")
    ax.set_ylabel("query")
    ax.set_title(title)
    fig.colorbar(ax.images[0], ax=ax)
    fig.tight_layout()
    return fig


def plot_attention_grid(weights: Sequence[torch.Tensor] | torch.Tensor, keys: Sequence[str] | None = None,
                        queries: Sequence[str] | None = None) -> Figure:
    """A grid of heatmaps, one row per layer and one column per head.

    ``weights`` is one example's attention, ``(n_layers, h, T, S)``, or a list of ``n_layers``
    tensors ``(h, T, S)`` (a model's per-layer weights for batch element 0, for instance).
    """
    stacked = torch.stack(list(weights)) if not isinstance(weights, (torch.Tensor, np.ndarray)) else weights
    grid = _matrix(stacked, 4, "weights must be (n_layers, h, T, S)")
    n_layers, n_heads = grid.shape[:2]
    fig = Figure(figsize=(2.4 * n_heads, 2.2 * n_layers))
    axes = np.atleast_2d(fig.subplots(n_layers, n_heads, squeeze=False))
    for layer in range(n_layers):
        for head in range(n_heads):
            ax = axes[layer, head]
            _heatmap(ax, grid[layer, head], keys if layer == n_layers - 1 else None, queries if head == 0 else None)
            ax.set_title(f"layer {layer + 1}, head {head + 1}", fontsize=8)
            if layer < n_layers - 1:
                ax.set_xticks([])
            if head > 0:
                ax.set_yticks([])
    fig.tight_layout()
    return fig


def plot_positional_encoding(pe: torch.Tensor | np.ndarray, dims: Sequence[int] = (0, 1, 4, 5, 8, 9)) -> Figure:
    """The encoding ``PE`` ``(T, d_model)`` as a heatmap, and some of its columns as curves."""
    matrix = _matrix(pe, 2, "pe must be (T, d_model)")
    fig = Figure(figsize=(11, 4))
    heat, curves = fig.subplots(1, 2)
    image = heat.imshow(matrix, cmap="RdBu", vmin=-1, vmax=1, aspect="auto")
    heat.set_xlabel("dimension i")
    heat.set_ylabel("position pos")
    heat.set_title("PE(pos, i)")
    fig.colorbar(image, ax=heat)
    for i in (d for d in dims if d < matrix.shape[1]):
        curves.plot(matrix[:, i], label=f"i = {i}")
    curves.set_xlabel("position pos")
    curves.set_title("a few dimensions")
    curves.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_history(history: History, metrics: Sequence[str] | None = None) -> Figure:
    """Training loss per step, and the evaluated metrics (all, or those named) per evaluation."""
    names = list(history.metrics) if metrics is None else list(metrics)
    missing = [m for m in names if m not in history.metrics]
    if missing:
        raise ValueError(f"metrics {missing} are not in the history, which has {sorted(history.metrics)}")
    fig = Figure(figsize=(10, 3.5))
    loss_ax, metric_ax = fig.subplots(1, 2)
    loss_ax.plot(history.steps, history.loss, lw=1, label="train loss")
    if "valid_loss" in history.metrics:
        loss_ax.plot(history.eval_steps, history.metrics["valid_loss"], "o-", label="valid loss")
    loss_ax.set_xlabel("step")
    loss_ax.set_ylabel("loss")
    loss_ax.legend()
    for name in (n for n in names if n != "valid_loss"):
        metric_ax.plot(history.eval_steps, history.metrics[name], "o-", label=name)
    metric_ax.set_xlabel("step")
    metric_ax.set_title("evaluation")
    if metric_ax.lines:
        metric_ax.legend()
    fig.tight_layout()
    return fig


def plot_lr_schedule(rates: Sequence[float], warmup_steps: int | None = None, title: str = "learning rate") -> Figure:
    """The learning rate of steps ``1 .. len(rates)``, with the end of the warm-up marked if given.

    ``rates`` is a run's ``history.lr``, or a schedule before any run:
    ``[config.lr * lr_factor(step, config) for step in range(1, config.max_steps + 1)]``.
    """
    fig = Figure(figsize=(5, 3))
    ax = fig.subplots()
    ax.plot(np.arange(1, len(rates) + 1), rates)
    if warmup_steps is not None:
        ax.axvline(warmup_steps, color="grey", ls=":", label=f"warm-up = {warmup_steps}")
        ax.legend()
    ax.set_xlabel("step")
    ax.set_ylabel("learning rate")
    ax.set_title(title)
    fig.tight_layout()
    return fig
