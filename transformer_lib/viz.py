"""Figures for the book and for training runs. Every function returns a ``matplotlib`` Figure.

:func:`source_without_docstring` is the code the pages show, as text.

Nothing is shown or saved here: call ``fig.savefig(path)`` or let Jupyter display it.
The figures are built with the object-oriented API, so they work with any backend
(``Agg`` included) and never touch pyplot's global state; ``use_book_style`` is the one
function that changes global settings, for the book's pages. Figures are drawn at most
``COLUMN_WIDTH`` inches wide, the width of the book's text column, so that their 10 pt text
is shown at 10 pt.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable, Sequence

import matplotlib
import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from transformer_lib.run_state import History

__all__ = [
    "COLUMN_WIDTH",
    "use_book_style",
    "draw_scaled_dot_product_attention",
    "draw_multi_head_attention",
    "draw_transformer",
    "plot_attention",
    "plot_attention_grid",
    "plot_positional_encoding",
    "plot_history",
    "plot_lr_schedule",
    "source_without_docstring",
]


COLUMN_WIDTH = 6.8  # inches: the book's text column (about 650 px at 96 px per inch)


def use_book_style() -> None:
    """Figures for the book's pages: column-wide by default, 10 pt text, shown as SVG in Jupyter.

    SVG stays sharp at any zoom and on high-density screens, and it is displayed at its drawn
    size, so 10 pt in the figure is 10 pt on the page. Outside IPython only the sizes change.
    """
    matplotlib.rcParams.update({"figure.figsize": (COLUMN_WIDTH, 3.4), "font.size": 10,
                                "legend.fontsize": 10, "axes.titlesize": 10, "figure.titlesize": 11,
                                "svg.fonttype": "path"})
    try:
        from IPython import get_ipython
        from matplotlib_inline.backend_inline import set_matplotlib_formats
    except ImportError:
        return
    if get_ipython() is not None:
        set_matplotlib_formats("svg")


def _matrix(weights: torch.Tensor | np.ndarray, dims: int, what: str) -> np.ndarray:
    array = weights.detach().float().cpu().numpy() if isinstance(weights, torch.Tensor) else np.asarray(weights)
    if array.ndim != dims:
        raise ValueError(f"{what}, got shape {array.shape}")
    return array


def _heatmap(ax: Axes, matrix: np.ndarray, keys: Sequence[str] | None, queries: Sequence[str] | None,
             vmax: float | None = None) -> None:
    """Draw ``matrix`` ``(T, S)`` (rows: queries, columns: keys) with optional token labels."""
    for labels, size, axis in ((keys, matrix.shape[1], "keys"), (queries, matrix.shape[0], "queries")):
        if labels is not None and len(labels) != size:
            raise ValueError(f"need {size} {axis} labels for a {matrix.shape} matrix, got {len(labels)}")
    ax.imshow(matrix, cmap="viridis", vmin=0.0, vmax=vmax, aspect="auto")
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
    rows, columns = matrix.shape
    fig = Figure(figsize=(min(COLUMN_WIDTH, 2.0 + 0.32 * columns), min(COLUMN_WIDTH, 1.6 + 0.3 * rows)))
    ax = fig.subplots()
    _heatmap(ax, matrix, keys, queries)
    ax.set_xlabel("key")
    ax.set_ylabel("query")
    ax.set_title(title)
    fig.colorbar(ax.images[0], ax=ax)
    fig.tight_layout()
    return fig


def plot_attention_grid(weights: Sequence[torch.Tensor] | torch.Tensor, keys: Sequence[str] | None = None,
                        queries: Sequence[str] | None = None, columns: int = 2) -> Figure:
    """Heatmaps of every head of every layer, ``columns`` a row, with one colour bar (0 to 1).

    ``weights`` is one example's attention, ``(n_layers, h, T, S)``, or a list of ``n_layers``
    tensors ``(h, T, S)`` (a model's per-layer weights for batch element 0, for instance). The
    panels go layer by layer, heads in order; token labels are on the left column (queries)
    and on the bottom panel of each column (keys).
    """
    stacked = torch.stack(list(weights)) if not isinstance(weights, (torch.Tensor, np.ndarray)) else weights
    grid = _matrix(stacked, 4, "weights must be (n_layers, h, T, S)")
    n_layers, n_heads, T, S = grid.shape
    panels = [(layer, head) for layer in range(n_layers) for head in range(n_heads)]
    columns = max(1, min(columns, len(panels)))
    rows = -(-len(panels) // columns)
    panel_width = (COLUMN_WIDTH - 0.9) / columns
    fig = Figure(figsize=(COLUMN_WIDTH, rows * (min(panel_width * T / S, 2.0) + 0.45) + 0.6), layout="constrained")
    axes = fig.subplots(rows, columns, squeeze=False)
    for index, ax in enumerate(axes.flat):
        if index >= len(panels):
            ax.set_axis_off()
            continue
        layer, head = panels[index]
        bottom = index + columns >= len(panels)
        _heatmap(ax, grid[layer, head], keys if bottom else None, queries if index % columns == 0 else None,
                 vmax=1.0)
        ax.set_title(f"layer {layer + 1}, head {head + 1}")
        if not bottom:
            ax.set_xticks([])
        if index % columns:
            ax.set_yticks([])
    fig.colorbar(axes.flat[0].images[0], ax=axes, shrink=0.6, label="attention weight")
    return fig


def plot_positional_encoding(pe: torch.Tensor | np.ndarray, dims: Sequence[int] = (0, 1, 4, 5, 8, 9)) -> Figure:
    """The encoding ``PE`` ``(T, d_model)`` as a heatmap, and some of its columns as curves."""
    matrix = _matrix(pe, 2, "pe must be (T, d_model)")
    fig = Figure(figsize=(COLUMN_WIDTH, 3.0))
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
    curves.legend()
    fig.tight_layout()
    return fig


def plot_history(history: History, metrics: Sequence[str] | None = None) -> Figure:
    """Training loss per step, and the evaluated metrics (all, or those named) per evaluation."""
    names = list(history.metrics) if metrics is None else list(metrics)
    missing = [m for m in names if m not in history.metrics]
    if missing:
        raise ValueError(f"metrics {missing} are not in the history, which has {sorted(history.metrics)}")
    fig = Figure(figsize=(COLUMN_WIDTH, 3.0))
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


# --- diagrams: boxes and arrows, in inches (1 data unit = 1 inch) -----------------------------

_FILL = {"attention": "#f9d9a6", "ffn": "#b9e0f0", "norm": "#f3f1c4", "embed": "#f6c7cc",
         "linear": "#d8d0f0", "plain": "#ececec"}


def _canvas(width: float, height: float) -> tuple[Figure, Axes]:
    """A blank figure whose data coordinates are inches from its bottom-left corner."""
    fig = Figure(figsize=(width, height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.set_axis_off()
    return fig, ax


def _box(ax: Axes, x: float, y: float, text: str, kind: str = "plain", width: float = 2.0,
         height: float = 0.34) -> tuple[float, float, float, float]:
    """A rounded box centred at (x, y); returns its (left, bottom, right, top)."""
    ax.add_patch(FancyBboxPatch((x - width / 2, y - height / 2), width, height, lw=0.8, ec="black",
                                fc=_FILL[kind], boxstyle="round,pad=0,rounding_size=0.06"))
    ax.text(x, y, text, ha="center", va="center")
    return x - width / 2, y - height / 2, x + width / 2, y + height / 2


def _arrow(ax: Axes, start: tuple[float, float], end: tuple[float, float], colour: str = "black",
           bend: float = 0.0) -> None:
    ax.annotate("", xy=end, xytext=start, arrowprops=dict(
        arrowstyle="-|>", lw=1.0, color=colour, shrinkA=0, shrinkB=0, mutation_scale=10,
        connectionstyle=f"arc3,rad={bend}"))


def _stack(ax: Axes, x: float, y: float, blocks: Sequence[tuple[str, str]], width: float = 2.3,
           step: float = 0.52, residual_side: float = -1.0) -> list[float]:
    """Boxes from ``y`` upwards, each fed by the one below; ``add & norm`` boxes get a residual
    arrow from below the sublayer they close. Returns the boxes' centre heights."""
    heights = [y + i * step for i in range(len(blocks))]
    for i, ((text, kind), height) in enumerate(zip(blocks, heights)):
        _box(ax, x, height, text, kind, width)
        if i:
            _arrow(ax, (x, heights[i - 1] + 0.17), (x, height - 0.17))
        if kind == "norm" and i >= 1:
            edge = x + residual_side * (width / 2 + 0.18)
            start = heights[i - 1] - step / 2
            ax.plot([x, edge, edge], [start, start, height], color="grey", lw=1.0)
            _arrow(ax, (edge, height), (x + residual_side * width / 2, height), colour="grey")
    return heights


def draw_scaled_dot_product_attention() -> Figure:
    """Scaled dot-product attention as a flow of operations, queries, keys and values at the bottom."""
    fig, ax = _canvas(5.0, 4.1)
    x_q, x_k, x_v, x_mid = 0.9, 1.9, 4.5, 1.4
    for x, name in ((x_q, "$Q$  (T, $d_k$)"), (x_k, "$K$  (S, $d_k$)"), (x_v, "$V$  (S, $d_v$)")):
        ax.text(x, 0.2, name, ha="center", va="center")
    steps = [("matmul  $QK^\\top$", "linear"), ("scale  $\\div\\sqrt{d_k}$", "plain"),
             ("mask (optional)", "plain"), ("softmax over keys", "attention")]
    heights = _stack(ax, x_mid, 0.9, steps, width=2.0, step=0.62)
    _arrow(ax, (x_q, 0.33), (x_mid - 0.5, heights[0] - 0.17))
    _arrow(ax, (x_k, 0.33), (x_mid + 0.5, heights[0] - 0.17))
    notes = ["scores (T, S)", "variance about 1", "$-\\infty$ where $M$ is False", "weights, rows sum to 1"]
    for height, note in zip(heights, notes):
        ax.text(x_mid + 1.1, height, note, va="center", color="dimgray")
    top = heights[-1] + 0.62
    _box(ax, 2.95, top, "matmul  weights $\\cdot\\, V$", "linear", width=3.3)
    _arrow(ax, (x_mid, heights[-1] + 0.17), (x_mid, top - 0.17))
    _arrow(ax, (x_v, 0.33), (x_v, top - 0.17))
    _arrow(ax, (2.95, top + 0.17), (2.95, top + 0.5))
    ax.text(3.1, top + 0.42, "output (T, $d_v$)", va="center")
    return fig


def draw_multi_head_attention(num_heads: int = 4) -> Figure:
    """Multi-head attention: h projections of Q, K, V, h attentions side by side, concat, W^O."""
    fig, ax = _canvas(6.2, 4.2)
    shadows = min(num_heads, 4) - 1

    def stacked_box(x: float, y: float, text: str, kind: str, width: float) -> None:
        for k in range(shadows, 0, -1):  # the other heads, peeking out behind the first
            ax.add_patch(FancyBboxPatch((x - width / 2 + 0.07 * k, y - 0.17 + 0.07 * k), width, 0.34, lw=0.6,
                                        ec="black", fc=_FILL[kind], boxstyle="round,pad=0,rounding_size=0.06"))
        _box(ax, x, y, text, kind, width)

    inputs = {"Q": 1.0, "K": 2.4, "V": 3.8}
    for name, x in inputs.items():
        ax.text(x, 0.2, f"${name}$", ha="center", va="center")
        stacked_box(x, 0.95, f"${name}W^{name}_i$", "linear", 1.1)
        _arrow(ax, (x, 0.33), (x, 0.78))
    stacked_box(2.4, 2.0, "scaled dot-product attention", "attention", 3.6)
    for x in inputs.values():
        _arrow(ax, (x, 1.12), (x, 1.83))
    ax.text(4.75, 1.45, f"$h = {num_heads}$ heads,\n$d_k = d_\\mathrm{{model}}/h$ each", ha="left",
            va="center", color="dimgray")
    _box(ax, 2.4, 2.85, "concat heads  (T, $h\\, d_k$)", "plain", 2.6)
    _box(ax, 2.4, 3.55, "linear  $W^O$", "linear", 2.0)
    _arrow(ax, (2.4, 2.17), (2.4, 2.68))
    _arrow(ax, (2.4, 3.02), (2.4, 3.38))
    _arrow(ax, (2.4, 3.72), (2.4, 4.05))
    ax.text(2.55, 3.95, "output (T, $d_\\mathrm{model}$)", va="center")
    return fig


def draw_transformer(n_layers: str = "L") -> Figure:
    """The encoder-decoder Transformer (post-LN, as in the paper): two stacks joined by cross-attention,
    each repeated layer framed and labelled ``n_layers``, the course's letter for their number (the paper's N)."""
    fig, ax = _canvas(COLUMN_WIDTH, 5.9)
    x_enc, x_dec = 2.0, 4.9
    encoder = [("embedding + PE", "embed"), ("self-attention", "attention"), ("add & norm", "norm"),
               ("feed-forward", "ffn"), ("add & norm", "norm")]
    decoder = [("embedding + PE", "embed"), ("masked self-attention", "attention"), ("add & norm", "norm"),
               ("cross-attention", "attention"), ("add & norm", "norm"), ("feed-forward", "ffn"),
               ("add & norm", "norm"), ("linear", "linear"), ("softmax", "plain")]
    enc = _stack(ax, x_enc, 0.75, encoder, width=2.1)
    dec = _stack(ax, x_dec, 0.75, decoder, width=2.1, residual_side=1.0)
    ax.text(x_enc, 0.2, "source tokens", ha="center", va="center")
    ax.text(x_dec, 0.2, "target tokens, shifted right", ha="center", va="center")
    _arrow(ax, (x_enc, 0.33), (x_enc, 0.58))
    _arrow(ax, (x_dec, 0.33), (x_dec, 0.58))
    for x, heights, side in ((x_enc, enc[1:5], -1), (x_dec, dec[1:7], 1)):  # the repeated layer
        bottom, top = heights[0] - 0.33, heights[-1] + 0.3
        ax.add_patch(FancyBboxPatch((x - 1.4, bottom), 2.8, top - bottom, lw=1.0, ec="dimgray", fc="none",
                                    boxstyle="round,pad=0,rounding_size=0.12", ls="--"))
        ax.text(x + side * 1.62, (bottom + top) / 2, f"{n_layers}$\\times$", ha="center", va="center",
                fontsize=12)
    memory_y = enc[-1] + 0.75
    ax.text(x_enc, memory_y + 0.1, "memory (S, $d_\\mathrm{model}$):\nkeys and values of\nevery cross-attention",
            ha="center", va="bottom")
    _arrow(ax, (x_enc, enc[-1] + 0.17), (x_enc, memory_y))
    _arrow(ax, (x_enc, memory_y), (x_dec - 1.05, dec[3]), bend=0.3)
    _arrow(ax, (x_dec, dec[-1] + 0.17), (x_dec, dec[-1] + 0.45))
    ax.text(x_dec, dec[-1] + 0.6, "next-token probabilities", ha="center", va="center")
    return fig


def source_without_docstring(function: Callable) -> str:
    """The source of ``function`` (or method, or class) as written, its docstring left out.

    The pages print the library's code beside the text that explains it, which makes the
    docstring a repetition. The docstring is found by parsing the source, so any quoting works.
    """
    source = inspect.getsource(function)
    definition = ast.parse(textwrap.dedent(source)).body[0]
    body = getattr(definition, "body", [])
    if ast.get_docstring(definition) is None:
        return source
    docstring = body[0]
    lines = source.splitlines(keepends=True)
    return "".join(lines[:docstring.lineno - 1] + lines[docstring.end_lineno:])
