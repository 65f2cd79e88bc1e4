"""Figures: each function returns a Figure with the expected axes and labels."""

import matplotlib
import pytest
import torch
from matplotlib.figure import Figure

from transformer_lib.run_state import History
from transformer_lib.train_config import TrainConfig, lr_factor
from transformer_lib.viz import (
    COLUMN_WIDTH,
    draw_multi_head_attention,
    draw_scaled_dot_product_attention,
    draw_transformer,
    plot_attention,
    plot_attention_grid,
    plot_history,
    plot_lr_schedule,
    plot_positional_encoding,
    source_without_docstring,
)

matplotlib.use("Agg")


def test_attention_heatmap_has_token_labels():
    fig = plot_attention(torch.rand(3, 4).softmax(-1), keys=list("abcd"), queries=["x", "y", "z"])
    ax = fig.axes[0]
    assert isinstance(fig, Figure)
    assert [t.get_text() for t in ax.get_xticklabels()] == list("abcd")
    assert [t.get_text() for t in ax.get_yticklabels()] == ["x", "y", "z"]
    with pytest.raises(ValueError, match="need 4 keys labels .* got 2"):
        plot_attention(torch.rand(3, 4), keys=["a", "b"])
    with pytest.raises(ValueError, match=r"\(T, S\), got shape \(2, 3, 4\)"):
        plot_attention(torch.rand(2, 3, 4))


def test_grid_of_layers_by_heads_two_a_row_with_one_colour_bar():
    fig = plot_attention_grid([torch.rand(4, 3, 5) for _ in range(2)], keys=list("abcde"))
    panels, colour_bar = fig.axes[:8], fig.axes[8:]
    assert len(panels) == 8 and panels[5].get_title() == "layer 2, head 2"
    assert len(colour_bar) == 1 and colour_bar[0].get_ylabel() == "attention weight"
    assert fig.get_figwidth() <= COLUMN_WIDTH
    assert [t.get_text() for t in panels[7].get_xticklabels()] == list("abcde")  # bottom row
    assert not panels[0].get_xticklabels()                                      # not repeated above
    odd = plot_attention_grid(torch.rand(1, 3, 2, 2), columns=2)                # 3 panels: one left blank
    assert not odd.axes[3].axison


def test_every_figure_fits_the_column():
    for fig in (plot_attention(torch.rand(40, 40)), draw_transformer(), draw_multi_head_attention(),
                draw_scaled_dot_product_attention()):
        assert fig.get_figwidth() <= COLUMN_WIDTH


def test_diagrams_name_their_parts():
    def texts(fig):
        return " ".join(t.get_text() for t in fig.axes[0].texts)

    transformer = texts(draw_transformer(n_layers="6"))
    for part in ("masked self-attention", "cross-attention", "feed-forward", "add & norm", "6$\\times$"):
        assert part in transformer
    assert "L$\\times$" in texts(draw_transformer())  # the notation page's letter for the number of layers
    assert "$QW^Q_i$" in texts(draw_multi_head_attention(num_heads=8))
    assert "$h = 8$" in texts(draw_multi_head_attention(num_heads=8))
    assert "softmax over keys" in texts(draw_scaled_dot_product_attention())


def test_positional_encoding_heatmap_and_curves():
    fig = plot_positional_encoding(torch.sin(torch.arange(50.0)[:, None] / torch.arange(1.0, 17.0)))
    heat, curves = fig.axes[:2]
    assert heat.images and len(curves.lines) == 6


def test_history_and_schedule_curves(tmp_path):
    history = History()
    for step in range(1, 11):
        history.log_step(step, 1.0 / step, 1e-3)
    history.log_eval(5, {"valid_loss": 0.3, "exact_match": 0.5})
    history.log_eval(10, {"valid_loss": 0.2, "exact_match": 0.9})
    fig = plot_history(history)
    assert len(fig.axes[0].lines) == 2 and len(fig.axes[1].lines) == 1
    fig.savefig(tmp_path / "loss.png")
    with pytest.raises(ValueError, match="'bleu'"):
        plot_history(history, metrics=["bleu"])
    config = TrainConfig(max_steps=400, warmup_steps=50, lr=1.0)
    schedule = plot_lr_schedule([config.lr * lr_factor(s, config) for s in range(1, 401)], config.warmup_steps)
    ys = schedule.axes[0].lines[0].get_ydata()
    assert max(ys) == pytest.approx(1.0) and ys.argmax() == 49 and len(schedule.axes[0].lines) == 2
    assert len(plot_lr_schedule(history.lr).axes[0].lines[0].get_ydata()) == 10


def test_source_without_docstring_keeps_the_signature_and_body():
    class Example:
        def method(self, x: int,
                   y: int) -> int:
            r"""Two lines of docstring, with a raw prefix and "quotes".

            More.
            """
            return x + y  # the body

        def plain(self):
            return 1

    shown = source_without_docstring(Example.method)
    assert shown == ("        def method(self, x: int,\n                   y: int) -> int:\n"
                     "            return x + y  # the body\n")
    assert source_without_docstring(Example.plain) == "        def plain(self):\n            return 1\n"
