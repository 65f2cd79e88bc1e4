r'''Chapter 7 exercises: the feed-forward sublayer, the encoder layer, masked pooling, a classifier.

``python -m coursetools.chapters.ch07_encoder`` writes ``solutions/ch07_encoder/ch07_encoder.ipynb``,
the nbgrader source (solutions and hidden tests); ``python -m coursetools.release ch07_encoder``
derives the student notebook. Every hidden block starts with instructor notes listing the mistakes
it is there to catch.
'''

from __future__ import annotations


from coursetools.authoring import (code, free_response, instructions, markdown, setup, solution, tests,
                                   write_chapter)

ASSIGNMENT = "ch07_encoder"

INTRO = r'''
# Chapter 7 exercises: the encoder

You will build the encoder layer of the Transformer from its parts: a position-wise feed-forward
network, self-attention, residual connections and layer normalisation, in both arrangements
(post-LN as in the paper, pre-LN as in most modern models). Your layer will give the same numbers
as `torch.nn.TransformerEncoderLayer` once it holds the same weights. Then you turn an encoder into
a sentence classifier: pool its output over the real tokens and project to class scores.

**Learning objectives.** After these exercises you can

1. write the position-wise feed-forward sublayer and say why it treats every position alone;
2. write an encoder layer, post-LN and pre-LN, with dropout where PyTorch puts it, and match
   `torch.nn.TransformerEncoderLayer` weight for weight, padding mask included;
3. average an encoder's output over the real tokens only (masked mean pooling);
4. assemble an encoder-only classifier whose prediction does not change when padding is added;
5. explain why pre-LN trains more stably than post-LN, and what an encoder without positions
   cannot tell apart.

The chapter page *The encoder* explains all of this; keep it open.
'''

GRADING = r'''
## How grading works

* In each answer cell, replace the lines `# YOUR CODE HERE` and `raise NotImplementedError()`
  with your code; keep the class and function names, signatures and docstrings.
* After each answer, run the test cell below it. The **visible tests** check a small worked
  example and tell you what is wrong. When you submit, **hidden tests** in the same cells check
  many more cases, compare your answers with `transformer_lib` and with PyTorch's own
  `torch.nn.TransformerEncoderLayer` in float64, and give the cell's points only if everything
  passes.
* Each exercise says what you may not use: calling a ready-made implementation of the very thing
  you are asked to write earns no points.
* Do not edit or delete the locked cells, and do not reassign functions of `torch`, Python's
  builtins or `transformer_lib`: the tests detect it and the cell scores zero.
* Before submitting: *Kernel → Restart & Run All*, and check that every test cell runs without an
  error. Each cell must finish within 30 seconds (the solutions take well under one second).

| exercise | points |
|---|---|
| 1. The position-wise feed-forward network | 3 |
| 2. The encoder layer, post-LN and pre-LN | 4 |
| 3. Masked mean pooling | 3 |
| 4. An encoder-only classifier | 3 |
| 5. Question: where the norm goes, and what order is worth (graded by hand) | 3 |
| **total** | **16** |
'''

SETUP = r'''
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

from transformer_lib.layers import Encoder
from transformer_lib.models import InputEmbedding
from transformer_lib.multihead import MultiHeadAttention
from coursetools.checks import assert_close, assert_equal, assert_shape, forbid, verify_untampered

warnings.filterwarnings("ignore")  # a warning printed by torch must not cost points
torch.manual_seed(0)


def load_torch_encoder_layer(ours: nn.Module, theirs: nn.TransformerEncoderLayer) -> nn.Module:
    """Copy the weights of `theirs`, a torch.nn.TransformerEncoderLayer(batch_first=True), into
    `ours`, an EncoderLayer of exercise 2, by the submodule names that exercise 2 specifies.
    Given to you, so that the tests compare your forward, not your loading. Returns `ours`."""
    pairs = [
        (ours.self_attention.in_proj.weight, theirs.self_attn.in_proj_weight),  # W_Q, W_K, W_V stacked
        (ours.self_attention.in_proj.bias, theirs.self_attn.in_proj_bias),
        (ours.self_attention.out_proj.weight, theirs.self_attn.out_proj.weight),  # W_O
        (ours.self_attention.out_proj.bias, theirs.self_attn.out_proj.bias),
        (ours.feed_forward.linear1.weight, theirs.linear1.weight),
        (ours.feed_forward.linear1.bias, theirs.linear1.bias),
        (ours.feed_forward.linear2.weight, theirs.linear2.weight),
        (ours.feed_forward.linear2.bias, theirs.linear2.bias),
        (ours.norm1.weight, theirs.norm1.weight),
        (ours.norm1.bias, theirs.norm1.bias),
        (ours.norm2.weight, theirs.norm2.weight),
        (ours.norm2.bias, theirs.norm2.bias),
    ]
    with torch.no_grad():
        for mine, source in pairs:
            mine.copy_(source)
    return ours


print("MultiHeadAttention(8, 2) parameters:", [name for name, _ in MultiHeadAttention(8, 2).named_parameters()])
'''

# --- exercise 1: position-wise feed-forward ---------------------------------------------------

FFN_TASK = r'''
## Exercise 1: the position-wise feed-forward network (3 points)

The second sublayer of every encoder layer is a small two-layer network applied to each position
on its own, with the same weights at every position:

$$\mathrm{FFN}(x) = \max(0,\; x W_1 + b_1)\, W_2 + b_2, \qquad W_1 \in \mathbb{R}^{d_\text{model} \times d_\text{ff}},\;
W_2 \in \mathbb{R}^{d_\text{ff} \times d_\text{model}}.$$

Write the module `PositionwiseFeedForward(d_model, d_ff, dropout=0.0)` with **exactly these
submodules** (the names are those of `torch.nn.TransformerEncoderLayer`, so its weights can be
copied in):

* `self.linear1 = nn.Linear(d_model, d_ff)` and `self.linear2 = nn.Linear(d_ff, d_model)`;
* `self.dropout = nn.Dropout(dropout)`, applied **between the ReLU and `linear2`** (where PyTorch
  puts it), and active only in training mode (an `nn.Dropout` module takes care of that).

`forward(x)` takes `x` of shape `(..., d_model)` (any leading axes, typically `(B, T, d_model)`)
and returns the same shape. No other parameter. You may not use `transformer_lib`'s
`PositionwiseFeedForward` or `torch.nn.TransformerEncoderLayer`.
'''

FFN_SOLUTION = r'''
class PositionwiseFeedForward(nn.Module):
    """FFN(x) = linear2(dropout(relu(linear1(x)))), the same at every position."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0):
        super().__init__()
        ### BEGIN SOLUTION
        self.linear1 = nn.Linear(d_model, d_ff)    # W_1, b_1: widen to d_ff
        self.linear2 = nn.Linear(d_ff, d_model)    # W_2, b_2: back to d_model
        self.dropout = nn.Dropout(dropout)         # off in eval mode
        ### END SOLUTION

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(..., d_model) -> (..., d_model)."""
        ### BEGIN SOLUTION
        hidden = torch.relu(self.linear1(x))       # (..., d_ff)
        return self.linear2(self.dropout(hidden))  # (..., d_model)
        ### END SOLUTION
'''

FFN_TESTS = r'''
torch.manual_seed(1)
ffn = PositionwiseFeedForward(4, 16)
names = sorted(name for name, _ in ffn.named_parameters())
print("parameters:", names)
assert_equal(names, ["linear1.bias", "linear1.weight", "linear2.bias", "linear2.weight"],
             name="the parameter names of PositionwiseFeedForward(4, 16)")
assert_shape(ffn.linear1.weight, (16, 4), name="linear1.weight (nn.Linear stores (out, in))")
x = torch.randn(2, 3, 4)
y = ffn(x)
assert_shape(y, (2, 3, 4), name="PositionwiseFeedForward(4, 16)(x (2, 3, 4))")
expected = ffn.linear2(torch.relu(ffn.linear1(x)))
assert_close(y, expected, name="FFN(x) = linear2(relu(linear1(x)))")
# position-wise: position 1 of sequence 0 alone gives the same vector
assert_close(ffn(x[0, 1]), y[0, 1], name="FFN of one position alone vs inside the batch")
with torch.no_grad():
    ffn.linear1.bias.fill_(-100.0)  # every hidden unit negative: ReLU gives zeros
assert_close(ffn(x), ffn.linear2.bias.expand(2, 3, 4), name="FFN(x) when every hidden unit is negative (only b_2 is left)")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: no ReLU, or ReLU after linear2; the biases
# missing (bias=False); dropout applied in eval mode (F.dropout without training=self.training);
# dropout after linear2 or before linear1 instead of between the ReLU and linear2; extra
# parameters or other names; a reshape that mixes positions (flattening (B, T, d_model) the wrong
# way); only (B, T, d_model) inputs accepted; calling transformer_lib's PositionwiseFeedForward
# or the feed-forward block of nn.TransformerEncoderLayer.
from coursetools.checks import assert_close, assert_equal, forbid, verify_untampered
verify_untampered()
import transformer_lib.layers as _layers

_forbidden = (_layers.PositionwiseFeedForward, nn.TransformerEncoderLayer)
_generator = torch.Generator().manual_seed(77)
for _shape, _d, _d_ff, _p in [((2, 5, 6), 6, 24, 0.0), ((3, 4, 8), 8, 8, 0.3), ((7, 5), 5, 11, 0.5),
                              ((2, 2, 3, 4), 4, 10, 0.2), ((1, 1, 1), 1, 3, 0.0)]:
    torch.manual_seed(_d * 10 + _d_ff)
    _ours = PositionwiseFeedForward(_d, _d_ff, _p).double()
    _reference = _layers.PositionwiseFeedForward(_d, _d_ff, _p).double()
    with torch.no_grad():
        for _q in _reference.parameters():
            _q.normal_(0, 0.7, generator=_generator)
    assert_equal(sorted(_n for _n, _ in _ours.named_parameters()), sorted(_reference.state_dict()),
                 name=f"the parameter names of PositionwiseFeedForward({_d}, {_d_ff}, {_p})")
    _ours.load_state_dict(_reference.state_dict())
    _x = torch.randn(*_shape, dtype=torch.float64, generator=_generator)
    _ours.eval()
    _reference.eval()
    _expected = _reference(_x)
    with forbid(*_forbidden):
        _result = _ours(_x.clone())
    _case = f"PositionwiseFeedForward({_d}, {_d_ff}, dropout={_p}) on x {_shape}"
    assert_close(_result, _expected, atol=1e-12, name=f"{_case} in eval mode (dropout must be off)")
    # the same weights at every position: shuffling the positions shuffles the outputs
    if len(_shape) >= 2:
        _order = torch.randperm(_shape[-2], generator=_generator)
        with forbid(*_forbidden):
            _shuffled = _ours(_x[..., _order, :].clone())
        assert_close(_shuffled, _expected[..., _order, :], atol=1e-12, name=f"{_case} with its positions shuffled")
    if _p > 0:
        # training mode: the same seed draws the same dropout mask, between the ReLU and linear2
        _ours.train()
        _reference.train()
        torch.manual_seed(123)
        _expected_train = _reference(_x)
        torch.manual_seed(123)
        with forbid(*_forbidden):
            _result_train = _ours(_x.clone())
        assert not bool(torch.allclose(_result_train, _expected)), f"{_case} in training mode applies no dropout"
        assert_close(_result_train, _expected_train, atol=1e-12,
                     name=f"{_case} in training mode (one nn.Dropout, between the ReLU and linear2)")
        _ours.eval()
_ours = PositionwiseFeedForward(3, 5).double()
with forbid(*_forbidden):
    _ours(torch.randn(4, 3, dtype=torch.float64, generator=_generator)).sum().backward()
for _n, _q in _ours.named_parameters():
    assert _q.grad is not None, f"no gradient reaches {_n}"
### END HIDDEN TESTS
'''

# --- exercise 2: the encoder layer ------------------------------------------------------------

LAYER_TASK = r'''
## Exercise 2: the encoder layer, post-LN and pre-LN (4 points)

An encoder layer is two sublayers, self-attention then the feed-forward network, each wrapped in
a residual connection with layer normalisation. With $\mathrm{Sub}$ a sublayer, the two
arrangements are

$$\text{post-LN (the paper):}\quad x \leftarrow \mathrm{LayerNorm}\big(x + \mathrm{Dropout}(\mathrm{Sub}(x))\big), \qquad
\text{pre-LN:}\quad x \leftarrow x + \mathrm{Dropout}\big(\mathrm{Sub}(\mathrm{LayerNorm}(x))\big).$$

Write `EncoderLayer(d_model, num_heads, d_ff, dropout=0.0, norm_first=False)` with **exactly these
submodules** (the helper `load_torch_encoder_layer` of the setup cell copies PyTorch's weights
into them by these names):

* `self.self_attention`: a `MultiHeadAttention(d_model, num_heads, dropout)`, the class imported in
  the setup cell (chapter 5's layer, with `in_proj` and `out_proj`). Call it as
  `self.self_attention(q, k, v, mask)`: it returns `(output, weights)`; for self-attention the
  query, key and value are the same tensor. Its `dropout` argument drops attention weights in
  training mode, as PyTorch's layer does;
* `self.feed_forward`: a `PositionwiseFeedForward(d_model, d_ff, dropout)`, yours, from exercise 1;
* `self.norm1`, `self.norm2`: `nn.LayerNorm(d_model)`, the first for the attention sublayer, the
  second for the feed-forward sublayer;
* `self.dropout1`, `self.dropout2`: `nn.Dropout(dropout)`, on each sublayer's output, before it
  is added to the residual stream (not on the sum);
* `self.norm_first`: the flag; no other parameter (a pre-LN *stack* adds a final norm after its
  last layer, but that belongs to the stack, not to the layer).

`forward(x, mask=None)`: `x` is `(B, T, d_model)`, the result has the same shape. `mask` is `None`
or boolean with **True = may attend**, broadcastable to the scores `(B, h, T, T)`; a padding mask
is `(B, 1, 1, T)`, True at real tokens. Pass it to the attention unchanged.

**Two conventions.** PyTorch's `src_key_padding_mask` is `(B, T)` with the opposite meaning,
True = padding (ignored); the tests convert it with `mask = ~src_key_padding_mask[:, None, None, :]`.
And PyTorch's layer must be built with `batch_first=True` to take `(B, T, d_model)`.

You may not use `torch.nn.TransformerEncoderLayer`, `torch.nn.TransformerEncoder`, or
`transformer_lib`'s `EncoderLayer`, `Residual`, `PositionwiseFeedForward` or `Encoder`.
'''

LAYER_SOLUTION = r'''
class EncoderLayer(nn.Module):
    """Self-attention and feed-forward, each in a residual connection with layer norm."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0, norm_first: bool = False):
        super().__init__()
        ### BEGIN SOLUTION
        self.norm_first = norm_first
        self.self_attention = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.dropout1, self.dropout2 = nn.Dropout(dropout), nn.Dropout(dropout)
        ### END SOLUTION

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """(B, T, d_model) -> (B, T, d_model); mask: True = may attend, e.g. (B, 1, 1, T)."""
        ### BEGIN SOLUTION
        def attention_block(h):
            attended, _ = self.self_attention(h, h, h, mask)
            return self.dropout1(attended)

        def feed_forward_block(h):
            return self.dropout2(self.feed_forward(h))

        if self.norm_first:                           # pre-LN: the residual stream is never normalised
            x = x + attention_block(self.norm1(x))
            return x + feed_forward_block(self.norm2(x))
        x = self.norm1(x + attention_block(x))        # post-LN: normalise after each sum
        return self.norm2(x + feed_forward_block(x))
        ### END SOLUTION
'''

LAYER_TESTS = r'''
torch.manual_seed(2)
layer = EncoderLayer(8, 2, 16)
names = sorted(name for name, _ in layer.named_parameters())
print("parameters:", names)
assert_equal(names, ["feed_forward.linear1.bias", "feed_forward.linear1.weight", "feed_forward.linear2.bias",
                     "feed_forward.linear2.weight", "norm1.bias", "norm1.weight", "norm2.bias", "norm2.weight",
                     "self_attention.in_proj.bias", "self_attention.in_proj.weight",
                     "self_attention.out_proj.bias", "self_attention.out_proj.weight"],
             name="the parameter names of EncoderLayer(8, 2, 16)")
x = torch.randn(2, 5, 8)
assert_shape(layer(x), (2, 5, 8), name="EncoderLayer(8, 2, 16)(x (2, 5, 8))")
# post-LN ends with a layer norm: every output vector has mean 0 and variance 1 (norm2 is fresh)
out = layer(x)
assert_close(out.mean(-1), torch.zeros(2, 5), atol=1e-5, name="the mean of each post-LN output vector")
# the same layer as PyTorch's, post-LN and pre-LN, with a padding mask
for norm_first in (False, True):
    torch.manual_seed(3)
    theirs = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, norm_first=norm_first).eval()
    ours = load_torch_encoder_layer(EncoderLayer(8, 2, 16, norm_first=norm_first), theirs).eval()
    padding = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])  # PyTorch: True = padding
    expected = theirs(x, src_key_padding_mask=padding)
    result = ours(x, ~padding[:, None, None, :])                      # ours: True = may attend
    assert_close(result, expected, atol=1e-5, name=f"EncoderLayer(norm_first={norm_first}) vs nn.TransformerEncoderLayer")
print("post-LN and pre-LN both match torch.nn.TransformerEncoderLayer")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: a missing residual (x not added back, in either
# sublayer); the norm on the wrong side (post-LN written as pre-LN or the reverse, norm_first
# ignored); norm1 and norm2 swapped; an extra final norm inside a pre-LN layer; the residual taken
# from the normalised input in pre-LN (h + Sub(h) instead of x + Sub(norm(x))); dropout on the sum
# instead of the sublayer output, or missing, or active in eval mode; the padding mask ignored,
# inverted, or reshaped; attention dropout not passed to MultiHeadAttention; extra parameters;
# calling nn.TransformerEncoderLayer or transformer_lib's EncoderLayer/Residual/Encoder.
# Compared with PyTorch and transformer_lib in float64, plus padding and gradient properties.
from coursetools.checks import assert_close, assert_equal, forbid, verify_untampered
verify_untampered()
import transformer_lib.layers as _layers


def _load(_ours, _theirs):
    _pairs = [("self_attention.in_proj.weight", "self_attn.in_proj_weight"),
              ("self_attention.in_proj.bias", "self_attn.in_proj_bias"),
              ("self_attention.out_proj.weight", "self_attn.out_proj.weight"),
              ("self_attention.out_proj.bias", "self_attn.out_proj.bias")]
    _pairs += [(f"feed_forward.{_n}", _n) for _n in ("linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias")]
    _pairs += [(_n, _n) for _n in ("norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias")]
    _mine, _source = dict(_ours.named_parameters()), dict(_theirs.named_parameters())
    with torch.no_grad():
        for _a, _b in _pairs:
            _mine[_a].copy_(_source[_b])
    return _ours


_expected_names = sorted(f"{_module}.{_kind}" for _module in ("self_attention.in_proj", "self_attention.out_proj",
                                                              "feed_forward.linear1", "feed_forward.linear2",
                                                              "norm1", "norm2") for _kind in ("weight", "bias"))
_forbidden = (nn.TransformerEncoderLayer, nn.TransformerEncoder, _layers.EncoderLayer, _layers.Residual,
              _layers.PositionwiseFeedForward, _layers.Encoder)
_generator = torch.Generator().manual_seed(707)
for _norm_first in (False, True):
    for _B, _T, _d, _h, _d_ff, _p, _masked in [(2, 5, 12, 3, 20, 0.0, True), (3, 4, 8, 2, 8, 0.2, True),
                                              (1, 6, 6, 1, 10, 0.0, False), (4, 3, 16, 4, 32, 0.5, True),
                                              (2, 7, 10, 5, 6, 0.1, False)]:
        torch.manual_seed(_B * 100 + _d)
        _theirs = nn.TransformerEncoderLayer(_d, _h, _d_ff, dropout=_p, batch_first=True,
                                             norm_first=_norm_first).double()
        with torch.no_grad():
            for _q in _theirs.parameters():
                _q.normal_(0, 0.4, generator=_generator)
        _ours = EncoderLayer(_d, _h, _d_ff, dropout=_p, norm_first=_norm_first).double()
        _case = f"EncoderLayer(d_model={_d}, num_heads={_h}, d_ff={_d_ff}, dropout={_p}, norm_first={_norm_first})"
        assert_equal(sorted(_n for _n, _ in _ours.named_parameters()), _expected_names, name=f"the parameters of {_case}")
        _load(_ours, _theirs)
        _x = torch.randn(_B, _T, _d, dtype=torch.float64, generator=_generator)
        _lengths = torch.randint(1, _T + 1, (_B,), generator=_generator)
        _lengths[0] = _T
        _padding = torch.arange(_T)[None, :] >= _lengths[:, None]  # (B, T), PyTorch: True = padding
        _mask = ~_padding[:, None, None, :] if _masked else None    # (B, 1, 1, T), ours: True = may attend
        _theirs.eval()
        _ours.eval()
        _expected = _theirs(_x, src_key_padding_mask=_padding if _masked else None)
        _reference = _layers.EncoderLayer.from_torch(_theirs).eval()
        assert_close(_reference(_x, _mask), _expected, atol=1e-10)  # the reference agrees with PyTorch
        with forbid(*_forbidden):
            _result = _ours(_x.clone(), None if _mask is None else _mask.clone())
        _where = f"{_case}, x {(_B, _T, _d)}, {'padding mask' if _masked else 'no mask'}, eval mode"
        assert_close(_result, _expected, atol=1e-10, name=f"{_where} vs nn.TransformerEncoderLayer")
        if _masked:  # padding changes nothing at the real tokens
            _changed = _x.clone()
            _changed[_padding] = torch.randn(int(_padding.sum()), _d, dtype=torch.float64, generator=_generator)
            with forbid(*_forbidden):
                _again = _ours(_changed, _mask.clone())
            assert_close(_again[~_padding], _result[~_padding], atol=1e-10,
                         name=f"{_where}: outputs at real tokens after changing the padded positions")
        if _p > 0:
            assert_equal(float(_ours.self_attention.dropout), float(_p),
                         name=f"the attention dropout of {_case} (pass dropout to MultiHeadAttention)")
            # training mode, attention dropout off on both sides so that only dropout1, the
            # feed-forward's dropout and dropout2 draw random numbers, in that order
            _ours.train()
            _reference.train()
            _ours.self_attention.dropout = _reference.self_attention.dropout = 0.0
            torch.manual_seed(2024)
            _expected_train = _reference(_x, _mask)
            torch.manual_seed(2024)
            with forbid(*_forbidden):
                _result_train = _ours(_x.clone(), None if _mask is None else _mask.clone())
            assert not bool(torch.allclose(_result_train, _expected)), f"{_case} in training mode applies no dropout"
            assert_close(_result_train, _expected_train, atol=1e-10,
                         name=f"{_case} in training mode: dropout on each sublayer's output, before the residual sum")
        if not _norm_first and not _p:
            _ours.train()
            with forbid(*_forbidden):
                _ours(_x.clone(), _mask).square().sum().backward()
            for _n, _q in _ours.named_parameters():
                assert _q.grad is not None and float(_q.grad.abs().sum()) > 0, f"no gradient reaches {_n} ({_case})"
### END HIDDEN TESTS
'''

# --- exercise 3: masked mean pooling ----------------------------------------------------------

POOL_TASK = r'''
## Exercise 3: masked mean pooling (3 points)

An encoder returns one vector per token, `(B, T, d_model)`: contextual token representations. A
sentence classifier needs one vector per sentence. The simplest choice is their average, but only
over the **real** tokens: a padded position holds a vector too (the encoder computes one there),
and a sentence must not change meaning with the amount of padding in its batch. With $m_{bt} = 1$
at real tokens and $0$ at padding,

$$\mathrm{pool}(x)_b = \frac{\sum_t m_{bt}\, x_{bt}}{\sum_t m_{bt}}.$$

Write `masked_mean_pool(x, mask)`: `x` is `(B, T, d_model)`, `mask` is a boolean `(B, T)`, True at
real tokens (anywhere in the row, not necessarily a prefix). Return `(B, d_model)` in the dtype of
`x`. A row with no real token at all must give a vector of zeros, not NaN. Do not modify `x`. One
multiplication, two sums and a division do it, without a loop.
'''

POOL_SOLUTION = r'''
def masked_mean_pool(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """x (B, T, d_model), mask (B, T) bool, True at real tokens -> (B, d_model): mean over real tokens."""
    ### BEGIN SOLUTION
    weights = mask.to(x.dtype).unsqueeze(-1)           # (B, T, 1): 1 at real tokens, 0 at padding
    counts = weights.sum(dim=1).clamp(min=1.0)         # (B, 1): a row without tokens divides by 1
    return (x * weights).sum(dim=1) / counts           # (B, d_model)
    ### END SOLUTION
'''

POOL_TESTS = r'''
x = torch.tensor([[[1.0, 10.0], [3.0, 30.0], [100.0, 100.0]],
                  [[2.0, 4.0], [6.0, 8.0], [10.0, 12.0]]])  # B = 2, T = 3, d_model = 2
mask = torch.tensor([[True, True, False], [True, True, True]])
pooled = masked_mean_pool(x, mask)
print("masked_mean_pool(x, mask) =\n", pooled)
assert_shape(pooled, (2, 2), name="masked_mean_pool(x (2, 3, 2), mask (2, 3))")
assert_close(pooled, torch.tensor([[2.0, 20.0], [6.0, 8.0]]),
             name="masked_mean_pool (row 0 must ignore its padded position holding 100)")
empty = masked_mean_pool(torch.randn(1, 4, 3), torch.zeros(1, 4, dtype=torch.bool))
assert_close(empty, torch.zeros(1, 3), name="masked_mean_pool of a row with no real token (zeros, not NaN)")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: averaging over the padding too (x.mean(1)); the
# sum over real tokens divided by T instead of the number of real tokens; pooling over the wrong
# axis (batch or features: wrong shape here, B, T and d_model all differ); a mask assumed to be a
# prefix (lengths instead of the mask); NaN for an empty row (0 / 0); the result in float32 for a
# float64 input; modifying x in place (masked_fill_); max or first-token pooling; no gradient.
from coursetools.checks import assert_close, assert_equal, verify_untampered
verify_untampered()

_generator = torch.Generator().manual_seed(3003)
for _B, _T, _d, _dtype in [(3, 5, 4, torch.float64), (2, 7, 3, torch.float32), (4, 4, 6, torch.float64),
                           (1, 3, 5, torch.float64), (5, 2, 7, torch.float64)]:
    _x = 10 * torch.randn(_B, _T, _d, dtype=_dtype, generator=_generator)
    _mask = torch.rand(_B, _T, generator=_generator) > 0.4
    _mask[0] = True
    _mask[-1] = False
    _mask[-1, -1] = True                    # a row whose only real token is the last one
    if _B > 2:
        _mask[1] = False                    # a row with no real token
    _expected = torch.stack([_x[_b][_mask[_b]].mean(0) if _mask[_b].any() else torch.zeros(_d, dtype=_dtype)
                             for _b in range(_B)])
    _x_before = _x.clone()
    _result = masked_mean_pool(_x, _mask.clone())
    _case = f"masked_mean_pool(x {(_B, _T, _d)} {_dtype}, mask {(_B, _T)})"
    assert_close(_x, _x_before, atol=0, rtol=0, name=f"x after {_case} (it must not be modified)")
    assert_equal(_result.dtype, _dtype, name=f"the dtype of {_case}")
    assert_close(_result, _expected, atol=1e-10 if _dtype == torch.float64 else 1e-5, name=_case)
    # padding changes nothing: other values at padded positions give the same pooled vector
    _other = _x.masked_fill(~_mask[..., None], 1e3)
    assert_close(masked_mean_pool(_other, _mask.clone()), _expected, atol=1e-8 if _dtype == torch.float64 else 1e-3,
                 name=f"{_case} after changing the values at padded positions")
_x = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True, generator=_generator)
_mask = torch.tensor([[True, False, True], [True, True, True]])
masked_mean_pool(_x, _mask).sum().backward()
_expected_grad = (_mask / _mask.sum(1, keepdim=True)).to(torch.float64)[..., None].expand(2, 3, 4)
assert_close(_x.grad, _expected_grad, atol=1e-12, name="the gradient of the pooled sum with respect to x")
### END HIDDEN TESTS
'''

# --- exercise 4: an encoder-only classifier ---------------------------------------------------

CLASSIFIER_TASK = r'''
## Exercise 4: an encoder-only classifier (3 points)

An encoder-only model (the BERT family) turns a sentence into class scores in four steps:

1. **embed**: token ids `(B, S)` → vectors `(B, S, d_model)`, positions added (`self.embedding`);
2. **encode** with the padding masked: `self.encoder(x, mask)` takes the same mask convention as
   your layer, True = may attend, broadcastable to `(B, h, S, S)`; a padding mask is
   `(B, 1, 1, S)` so that **no query attends to a padded key**;
3. **pool**: average the encoder's output over the real tokens (your `masked_mean_pool`);
4. **classify**: `self.head`, a linear layer `d_model → num_classes`, gives the logits.

The constructor is given: it builds `transformer_lib`'s `InputEmbedding` and `Encoder` (the
library's versions of what you wrote above). Write `forward(tokens)`: `tokens` is `(B, S)` integer
ids, padded on the right with `self.pad_id` (which is not always 0); return the logits
`(B, num_classes)`. A real token is any token whose id differs from `self.pad_id`. The result must
not change when more padding is appended to a batch.

You may not use `transformer_lib`'s `TransformerClassifier`.
'''

CLASSIFIER_SOLUTION = r'''
class EncoderClassifier(nn.Module):
    """Embed, encode with the padding masked, mean-pool over real tokens, project to class scores."""

    def __init__(self, vocab_size: int, num_classes: int, d_model: int, num_heads: int, num_layers: int,
                 d_ff: int, max_len: int, pad_id: int = 0, positional: str | None = "sinusoidal",
                 norm_first: bool = False):
        super().__init__()
        self.pad_id = pad_id
        self.embedding = InputEmbedding(vocab_size, d_model, max_len, positional)  # (B, S) -> (B, S, d_model)
        self.encoder = Encoder(num_layers, d_model, num_heads, d_ff, norm_first=norm_first)
        self.head = nn.Linear(d_model, num_classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens (B, S) ids -> logits (B, num_classes)."""
        ### BEGIN SOLUTION
        is_token = tokens.ne(self.pad_id)                         # (B, S), True at real tokens
        keys_allowed = is_token.unsqueeze(1).unsqueeze(2)         # (B, 1, 1, S): every query, every head
        states = self.encoder(self.embedding(tokens), keys_allowed)
        return self.head(masked_mean_pool(states, is_token))
        ### END SOLUTION
'''

CLASSIFIER_TESTS = r'''
torch.manual_seed(4)
model = EncoderClassifier(vocab_size=12, num_classes=3, d_model=8, num_heads=2, num_layers=2, d_ff=16, max_len=10).eval()
tokens = torch.tensor([[5, 6, 7, 8], [9, 4, 0, 0]])  # the second sentence has 2 tokens, then padding
logits = model(tokens)
print("logits =\n", logits)
assert_shape(logits, (2, 3), name="EncoderClassifier(...)(tokens (2, 4))")
more_padding = torch.cat([tokens, torch.zeros(2, 3, dtype=torch.long)], dim=1)
assert_close(model(more_padding), logits, atol=1e-5, name="the logits after appending 3 more padding columns")
alone = model(torch.tensor([[9, 4]]))
assert_close(logits[1], alone[0], atol=1e-5, name="the logits of sentence 1 in the batch vs alone, without padding")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: no attention mask (real tokens attend to the
# padding); the mask inverted (True at padding); the mask on the query axis ((B, 1, S, 1)) or
# passed as (B, S), which broadcasts against (S, S) instead of the keys; pooling over the padding
# (plain mean) or the first token only; pad_id hard-coded as 0; the embedding or the head skipped;
# calling TransformerClassifier.
# Compared with transformer_lib's TransformerClassifier holding the same weights, in float64.
from coursetools.checks import assert_close, forbid, verify_untampered
verify_untampered()
from transformer_lib.models import TransformerClassifier as _Reference

_generator = torch.Generator().manual_seed(4004)
for _positional, _norm_first, _pad_id, _layers_n in [("sinusoidal", False, 0, 2), (None, True, 3, 1),
                                                     ("learned", False, 11, 2), ("sinusoidal", True, 0, 3)]:
    _config = dict(vocab_size=12, num_classes=4, d_model=8, num_heads=2, num_layers=_layers_n, d_ff=12,
                   max_len=16, pad_id=_pad_id, positional=_positional, norm_first=_norm_first)
    torch.manual_seed(_pad_id + 7 * _layers_n)
    _reference = _Reference(**_config).double().eval()
    with torch.no_grad():
        for _q in _reference.parameters():
            _q.normal_(0, 0.5, generator=_generator)
    _ours = EncoderClassifier(**_config).double().eval()
    _ours.load_state_dict(_reference.state_dict())
    _B, _S = 5, 9
    _real_ids = [_i for _i in range(12) if _i != _pad_id]
    _tokens = torch.tensor(_real_ids)[torch.randint(0, 11, (_B, _S), generator=_generator)]
    _lengths = torch.tensor([9, 1, 4, 6, 2])
    _tokens[torch.arange(_S)[None, :] >= _lengths[:, None]] = _pad_id
    _expected = _reference(_tokens)
    _case = f"EncoderClassifier(positional={_positional}, norm_first={_norm_first}, pad_id={_pad_id}, num_layers={_layers_n})"
    with forbid(_Reference):
        _result = _ours(_tokens.clone())
    assert_close(_result, _expected, atol=1e-10, name=f"{_case} vs TransformerClassifier with the same weights")
    _padded = torch.cat([_tokens, torch.full((_B, 4), _pad_id)], dim=1)
    with forbid(_Reference):
        _more = _ours(_padded)
    assert_close(_more, _expected, atol=1e-10, name=f"{_case} after appending 4 padding columns")
    for _b in (1, 3):
        with forbid(_Reference):
            _alone = _ours(_tokens[_b:_b + 1, :int(_lengths[_b])].clone())
        assert_close(_alone[0], _expected[_b], atol=1e-10, name=f"{_case}: sentence {_b} alone vs in the padded batch")
### END HIDDEN TESTS
'''

ORDER_DEMO = r'''
# Not graded: what positions are worth. Without them an encoder with mean pooling sees a bag of
# words: two sentences with the same words in another order get exactly the same logits.
words = ["<pad>", "the", "film", "plot", "was", "not", "good", "bad", "but"]
ids = {word: i for i, word in enumerate(words)}
first = "the film was not good but the plot was bad".split()
second = "the film was good but the plot was not bad".split()   # the same ten words
batch = torch.tensor([[ids[w] for w in first], [ids[w] for w in second]])
for positional in (None, "sinusoidal"):
    torch.manual_seed(0)
    model = EncoderClassifier(len(words), 2, d_model=16, num_heads=2, num_layers=2, d_ff=32, max_len=16,
                              positional=positional).eval()
    logits = model(batch)
    print(f"positional={positional!s:>10}: largest logit difference between the two sentences "
          f"{float((logits[0] - logits[1]).abs().max()):.1e}")
print("(without positions the difference is float32 rounding: the model cannot tell the two apart)")
'''

# --- free response ----------------------------------------------------------------------------

QUESTION = r'''
## Exercise 5: where the norm goes, and what order is worth (3 points, graded by hand)

Answer in a few sentences each, in the cell below. The chapter page's experiments are your
evidence.

1. In a pre-LN stack, write the output of layer $L$ as the input $x_0$ plus a sum. What path does
   the gradient of the loss have back to $x_0$ (and to every layer) that a post-LN stack lacks, and
   why does that let pre-LN train without a learning-rate warm-up, where post-LN may not?
2. Why does a pre-LN *stack* need one more layer norm after its last layer, when a post-LN stack
   does not?
3. The classifier of exercise 4, built with `positional=None`, is trained on the chapter's
   sentiment language. Which sentences must it get wrong, whatever its size and however long it is
   trained? Give a pair of sentences as an example and explain with the word "permutation".
'''

MODEL_ANSWER = r'''
**Model answer and rubric (1 point per part).**

1. Pre-LN: $x_L = x_0 + \sum_{l=1}^{L} F_l(\mathrm{LN}(x_{l-1}))$, so
   $\partial x_L / \partial x_0 = I + \sum_l (\dots)$: an identity path runs from the loss straight
   down the residual stream to every layer, untouched by any normalisation, and every layer's
   gradient keeps a comparable size. In post-LN every residual sum passes through a layer norm,
   whose Jacobian rescales (and at initialisation, for the layers near the output, shrinks or
   grows) the gradient at every layer: the gradients of the layers near the output are large at
   initialisation and the paths to the lower layers are products of $L$ such Jacobians (Xiong et
   al. 2020). A large learning rate from the first step then makes big, badly scaled updates and
   training diverges or gets stuck (on the page: the post-LN stack stayed at chance while pre-LN
   learned); warm-up keeps the first updates small until the optimiser's statistics settle. Credit
   for the identity path and the conclusion about large early updates.
2. In pre-LN the residual stream itself is never normalised: each layer adds its output to it, so
   its scale grows with depth and the last layer's output is un-normalised. The final layer norm
   gives the head (pooling, classifier, output projection) inputs of a controlled scale. In
   post-LN every layer already ends with a layer norm.
3. Without positions, embedding, self-attention and feed-forward are permutation-equivariant and
   mean pooling is permutation-invariant, so the whole model is a function of the multiset of
   tokens (a bag of words): any two sentences that are permutations of each other get the same
   logits. Whenever such a pair has different labels, it must get at least one of them wrong, e.g.
   "the film was not good but the plot was great" (positive: the clause after "but" decides) and
   "the film was good but the plot was not great" (negative). On the page, the position-blind model
   stays below the computed ceiling of any bag-of-words classifier.
'''

CLOSING = r'''
## Where this goes next

You have built the encoder: the position-wise feed-forward network, the encoder layer in both
norm placements, checked against `torch.nn.TransformerEncoderLayer` weight for weight, and an
encoder-only classifier that ignores padding. In `transformer_lib.layers` the same pieces are
`PositionwiseFeedForward`, `Residual`, `EncoderLayer` (with `from_torch`) and `Encoder`, and in
`transformer_lib.models` the classifier is `TransformerClassifier`. The next chapter builds the
decoder: masked self-attention and cross-attention to the encoder's output.
'''


def build() -> list:
    """The cells of the notebook, in order."""
    return [
        markdown(INTRO),
        instructions("grading", GRADING),
        setup("setup", SETUP),
        instructions("ffn_task", FFN_TASK),
        solution("positionwise_feed_forward", FFN_SOLUTION),
        tests("test_positionwise_feed_forward", 3, FFN_TESTS),
        instructions("layer_task", LAYER_TASK),
        solution("encoder_layer", LAYER_SOLUTION),
        tests("test_encoder_layer", 4, LAYER_TESTS),
        instructions("pool_task", POOL_TASK),
        solution("masked_mean_pool", POOL_SOLUTION),
        tests("test_masked_mean_pool", 3, POOL_TESTS),
        instructions("classifier_task", CLASSIFIER_TASK),
        solution("encoder_classifier", CLASSIFIER_SOLUTION),
        tests("test_encoder_classifier", 3, CLASSIFIER_TESTS),
        code(ORDER_DEMO),
        instructions("norm_question", QUESTION),
        free_response("norm_answer", 3, MODEL_ANSWER),
        markdown(CLOSING),
    ]


def main() -> None:
    print(f"wrote {write_chapter(ASSIGNMENT, build())}")


if __name__ == "__main__":
    main()
