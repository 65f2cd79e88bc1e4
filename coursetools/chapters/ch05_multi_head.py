r'''Chapter 5 exercises: splitting heads, multi-head attention, PyTorch's weight layout, cost.

``python -m coursetools.chapters.ch05_multi_head`` writes
``solutions/ch05_multi_head/ch05_multi_head.ipynb``, the nbgrader source (solutions and hidden
tests); ``python -m coursetools.release ch05_multi_head`` derives the student notebook.
Every hidden block starts with instructor notes listing the mistakes it is there to catch.
'''

from __future__ import annotations


from coursetools.authoring import (code, free_response, instructions, markdown, setup, solution, tests,
                                   write_chapter)

ASSIGNMENT = "ch05_multi_head"

INTRO = r'''
# Chapter 5 exercises: multi-head attention

You will build multi-head attention from scratch: `h` heads, each attending in its own
`d_k = d_model / h`-dimensional subspace, all of them in one batched operation, concatenated and
projected back to `d_model`. Your module will give the same numbers as
`torch.nn.MultiheadAttention` once it holds the same weights.

**Learning objectives.** After these exercises you can

1. split a `(B, T, d_model)` tensor into `h` heads `(B, h, T, d_k)` and merge them back, and say
   why a reshape alone is not enough;
2. write `MultiHeadAttention` with its four projections `W_Q, W_K, W_V, W_O`, masks shared by all
   heads, and per-head attention weights `(B, h, T, S)`;
3. read PyTorch's packed weight layout and load its weights into your module;
4. count the parameters, multiply-adds and attention weights of a layer, and say which of them
   depend on the number of heads.

The chapter page *Multi-head attention* explains all of this; keep it open.
'''

GRADING = r'''
## How grading works

* In each answer cell, replace the lines `# YOUR CODE HERE` and `raise NotImplementedError()`
  with your code; keep the function names, signatures and docstrings.
* After each answer, run the test cell below it. The **visible tests** check a small worked
  example and tell you what is wrong. When you submit, **hidden tests** in the same cells check
  many more cases, compare your answers with `transformer_lib` and with PyTorch's own
  `torch.nn.MultiheadAttention` in float64, and give the cell's points only if everything passes.
* Each exercise says what you may not use: calling a ready-made implementation of the very thing
  you are asked to write earns no points.
* Do not edit or delete the locked cells, and do not reassign functions of `torch`, Python's
  builtins or `transformer_lib`: the tests detect it and the cell scores zero.
* Before submitting: *Kernel → Restart & Run All*, and check that every test cell runs without an
  error. Each cell must finish within 30 seconds (the solutions take well under one second).

| exercise | points |
|---|---|
| 1. Split and merge heads | 3 |
| 2. `MultiHeadAttention` | 4 |
| 3. Load PyTorch's weights | 2 |
| 4. What a layer costs | 3 |
| 5. Question: one head or many? (graded by hand) | 3 |
| **total** | **15** |
'''

SETUP = r'''
import math
import warnings

import torch
import torch.nn as nn

from coursetools.checks import assert_close, assert_equal, assert_shape, forbid, verify_untampered

warnings.filterwarnings("ignore")  # a warning printed by torch must not cost points
torch.manual_seed(0)


def attention(query, key, value, mask=None):
    """Scaled dot-product attention (chapter 4) over the last two axes, given to you.

    query (..., T, d_k), key (..., S, d_k), value (..., S, d_v); mask: boolean, True = may
    attend, broadcastable to the scores (..., T, S). Returns (output (..., T, d_v),
    weights (..., T, S)). A query whose keys are all masked gets all-zero weights.
    Any leading axes (..., for example B, h) are batch axes: they are never mixed.
    """
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))  # (..., T, S)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)  # fully masked rows: zeros, not NaN
    return weights @ value, weights


print("attention(q, k, v) on (2, 3, 5, 4) tensors ->",
      tuple(attention(*(torch.randn(2, 3, 5, 4) for _ in range(3)))[0].shape))
'''

# --- exercise 1: split and merge heads ---------------------------------------------------------

SPLIT_TASK = r'''
## Exercise 1: split and merge heads (3 points)

Multi-head attention runs `h` attentions side by side. Rather than `h` separate small
projections, it makes one `d_model`-wide projection and cuts its features into `h` blocks of
`d_k = d_model / h`: **head `i` owns features `i * d_k` to `(i + 1) * d_k - 1`** of every position
(this is also the layout of `torch.nn.MultiheadAttention`). Write

* `split_heads(x, num_heads)`: `x` of shape `(B, T, D)` → `(B, h, T, D / h)` with
  `out[b, i, t, j] == x[b, t, i * d_k + j]`. If `num_heads` does not divide `D`, raise a
  `ValueError` whose message names `D` and `num_heads`.
* `merge_heads(x)`: the inverse, `(B, h, T, d_k)` → `(B, T, h * d_k)`: the concatenation of the
  heads' features at each position.

Draw the axes before you code: `reshape` alone can cut the tensor into the right *number* of
pieces but mixes positions; the head axis has to be moved with `transpose` (or `permute`).
Keep in mind that the result of a `transpose` is not contiguous, which `view` refuses and
`reshape` accepts. You may not use `transformer_lib` (its `MultiHeadAttention` has these two
steps as private methods) or `einops`.
'''

SPLIT_SOLUTION = r'''
def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(B, T, D) -> (B, h, T, D / h); head i holds features i * d_k ... (i + 1) * d_k - 1."""
    ### BEGIN SOLUTION
    batch, length, width = x.shape                                      # (B, T, D)
    if width % num_heads != 0:
        raise ValueError(f"num_heads={num_heads} must divide the feature size D={width}")
    per_head = x.reshape(batch, length, num_heads, width // num_heads)  # (B, T, h, d_k)
    return per_head.permute(0, 2, 1, 3)                                 # (B, h, T, d_k)
    ### END SOLUTION


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(B, h, T, d_k) -> (B, T, h * d_k): the heads' features concatenated at each position."""
    ### BEGIN SOLUTION
    batch, heads, length, per_head = x.shape
    return x.permute(0, 2, 1, 3).reshape(batch, length, heads * per_head)
    ### END SOLUTION
'''

SPLIT_TESTS = r'''
x = torch.arange(24.0).reshape(2, 3, 4)  # B = 2, T = 3, D = 4
heads = split_heads(x, 2)                # h = 2, d_k = 2
print("x[0] =\n", x[0], "\nsplit_heads(x, 2)[0] =\n", heads[0])
assert_shape(heads, (2, 2, 3, 2), name="split_heads(x (2, 3, 4), 2)")
assert_close(heads[0, 0], torch.tensor([[0.0, 1], [4, 5], [8, 9]]),
             name="head 0 of sequence 0 (features 0 and 1 of every position)")
assert_close(heads[0, 1], torch.tensor([[2.0, 3], [6, 7], [10, 11]]),
             name="head 1 of sequence 0 (features 2 and 3 of every position)")
merged = merge_heads(heads)
assert_shape(merged, (2, 3, 4), name="merge_heads(split_heads(x, 2))")
assert_close(merged, x, atol=0, rtol=0, name="merge_heads(split_heads(x, 2)) (should give x back)")
try:
    split_heads(torch.zeros(1, 2, 6), 4)
except ValueError as error:
    print("ValueError, as expected:", error)
else:
    raise AssertionError("split_heads(x (1, 2, 6), 4) should raise a ValueError: 4 does not divide D = 6")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: a reshape to (B, h, T, d_k) without the
# transpose (each "head" then holds pieces of several positions); features interleaved across
# heads (reshape to (B, T, d_k, h)); merge_heads without the transpose back, or with .view on the
# non-contiguous result of a transpose (RuntimeError); T and h confused when they are equal;
# no ValueError when h does not divide D; calling transformer_lib's private split/merge methods.
from coursetools.checks import assert_close, expect_raises, forbid, verify_untampered
verify_untampered()
from transformer_lib.multihead import MultiHeadAttention as _Reference

_generator = torch.Generator().manual_seed(55)
for _B, _T, _D, _h in [(2, 5, 12, 3), (1, 4, 8, 4), (3, 3, 6, 3), (2, 7, 16, 1), (1, 2, 10, 10), (4, 6, 8, 2)]:
    _x = torch.randn(_B, _T, _D, dtype=torch.float64, generator=_generator)
    _reference = _Reference(_D, _h)
    _expected = _reference._split_heads(_x)
    _y = torch.randn(_B, _h, _T, _D // _h, dtype=torch.float64, generator=_generator)
    with forbid(_Reference._split_heads, _Reference._merge_heads):
        _split = split_heads(_x.clone(), _h)
        _merged = merge_heads(_expected.clone())
        _merged_other = merge_heads(_y.clone())
    assert_close(_split, _expected, atol=0, rtol=0, name=f"split_heads(x {(_B, _T, _D)}, {_h})")
    assert_close(_merged, _x, atol=0, rtol=0, name=f"merge_heads(split_heads(x {(_B, _T, _D)}, {_h}))")
    assert_close(_merged_other, _reference._merge_heads(_y), atol=0, rtol=0,
                 name=f"merge_heads(y {(_B, _h, _T, _D // _h)})")
for _shape, _h in [((2, 3, 10), 4), ((1, 1, 6), 5), ((2, 4, 9), 2)]:
    with expect_raises(ValueError, f"split_heads(x {_shape}, {_h}) should raise a ValueError"):
        split_heads(torch.zeros(_shape), _h)
### END HIDDEN TESTS
'''

# --- exercise 2: multi-head attention ----------------------------------------------------------

MHA_TASK = r'''
## Exercise 2: `MultiHeadAttention` (4 points)

Write the module `MultiHeadAttention(d_model, num_heads)`:

$$\mathrm{MultiHead}(Q, K, V) = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h)\, W^O,
\qquad \mathrm{head}_i = \mathrm{Attention}(Q W^Q_i, K W^K_i, V W^V_i).$$

**`__init__`.** If `num_heads` does not divide `d_model`, raise a `ValueError` naming both. Store
`self.num_heads` and `self.d_k = d_model // num_heads`, and create exactly four layers, with
exactly these names, and no other parameter:

* `self.W_q`, `self.W_k`, `self.W_v`, `self.W_o`, each `nn.Linear(d_model, d_model)` (with bias).

The `h` heads' projections live together in one `nn.Linear`: head `i` uses output features
`i * d_k ... (i + 1) * d_k - 1` of `W_q`, `W_k`, `W_v` (your `split_heads` of exercise 1 cuts them
out). This is the layout of `torch.nn.MultiheadAttention`, so the two modules compute the same
function when they hold the same weights (exercise 3 copies them).

**`forward(query, key, value, mask=None) -> (output, weights)`.**

* `query` is `(B, T, d_model)`, `key` and `value` are `(B, S, d_model)`; for self-attention the
  three are the same tensor, for cross-attention `S` may differ from `T`.
* `mask` is `None` or boolean with True = may attend, **the same for every head**, of shape
  `(T, S)` (one mask for every sequence, e.g. causal) or `(B, T, S)` / `(B, 1, S)` (one per
  sequence, e.g. padding). The scores have shape `(B, h, T, S)`: a 3-D mask needs a head axis
  inserted before it broadcasts correctly (`mask.unsqueeze(-3)` works for both kinds).
* Project with `W_q`, `W_k`, `W_v`; split into heads; attend in **one batched call** over all
  heads (the `attention` function of the setup cell treats `(B, h)` as batch axes and scales by
  the last axis of its query, here `d_k`); merge the heads; apply `W_o`.
* Return `output` `(B, T, d_model)` and the per-head `weights` `(B, h, T, S)` (not averaged over
  heads).

Use the `attention` of the setup cell or your own code for it; you may not use
`torch.nn.MultiheadAttention`, `torch.nn.functional.multi_head_attention_forward` or
`transformer_lib`'s `MultiHeadAttention`.
'''

MHA_SOLUTION = r'''
class MultiHeadAttention(nn.Module):
    """h heads of scaled dot-product attention, each of width d_k = d_model / h."""

    def __init__(self, d_model: int, num_heads: int):
        super().__init__()
        ### BEGIN SOLUTION
        if d_model % num_heads:  # h must divide d_model
            raise ValueError(f"num_heads={num_heads} must divide d_model={d_model}")
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)  # the h heads' W^Q_i side by side
        self.W_k = nn.Linear(d_model, d_model)  # the h heads' W^K_i side by side
        self.W_v = nn.Linear(d_model, d_model)  # the h heads' W^V_i side by side
        self.W_o = nn.Linear(d_model, d_model)  # mixes the concatenated heads
        ### END SOLUTION

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """query (B, T, d_model), key/value (B, S, d_model), mask (T, S), (B, T, S) or (B, 1, S)
        -> output (B, T, d_model), weights (B, h, T, S)."""
        ### BEGIN SOLUTION
        q_heads = split_heads(self.W_q(query), self.num_heads)  # (B, h, T, d_k)
        k_heads = split_heads(self.W_k(key), self.num_heads)    # (B, h, S, d_k)
        v_heads = split_heads(self.W_v(value), self.num_heads)  # (B, h, S, d_k)
        if mask is not None and mask.dim() == 3:
            mask = mask[:, None]                                # (B, 1, T or 1, S): same for all heads
        per_head, weights = attention(q_heads, k_heads, v_heads, mask)
        return self.W_o(merge_heads(per_head)), weights
        ### END SOLUTION
'''

MHA_TESTS = r'''
torch.manual_seed(1)
mha = MultiHeadAttention(8, 2)
names = sorted(name for name, _ in mha.named_parameters())
print("parameters:", names)
assert_equal(names, ["W_k.bias", "W_k.weight", "W_o.bias", "W_o.weight", "W_q.bias", "W_q.weight",
                     "W_v.bias", "W_v.weight"], name="the parameter names of MultiHeadAttention(8, 2)")
assert_equal((mha.num_heads, mha.d_k), (2, 4), name="(num_heads, d_k) of MultiHeadAttention(8, 2)")
q, kv = torch.randn(3, 5, 8), torch.randn(3, 7, 8)   # B = 3, T = 5, S = 7
out, w = mha(q, kv, kv)
assert_shape(out, (3, 5, 8), name="output of MultiHeadAttention(8, 2)(q (3, 5, 8), kv (3, 7, 8), kv)")
assert_shape(w, (3, 2, 5, 7), name="weights (B, h, T, S)")
assert_close(w.sum(-1), torch.ones(3, 2, 5), name="the weights summed over the keys")
# with one head, multi-head attention is single-head attention between two projections
one = MultiHeadAttention(8, 1)
single, _ = attention(one.W_q(q), one.W_k(kv), one.W_v(kv))
assert_close(one(q, kv, kv)[0], one.W_o(single), atol=1e-5, name="MultiHeadAttention(8, 1) vs W_o(attention(...))")
# a per-sequence mask (B, T, S) is the same for every head
mask = torch.rand(3, 5, 7) > 0.5
mask[..., 0] = True
_, w = MultiHeadAttention(8, 4)(q, kv, kv, mask)
assert_shape(w, (3, 4, 5, 7), name="weights with a (3, 5, 7) mask and 4 heads")
assert_close(w * ~mask[:, None], torch.zeros(3, 4, 5, 7), name="the weights where the mask is False")
try:
    MultiHeadAttention(10, 4)
except ValueError as error:
    print("ValueError, as expected:", error)
else:
    raise AssertionError("MultiHeadAttention(10, 4) should raise a ValueError: 4 does not divide 10")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: a reshape without the transpose (heads mixing
# positions); forgetting the output projection W_o; scaling by sqrt(d_model) instead of
# sqrt(d_k); a (B, T, S) mask not broadcast over heads (wrong silently when B == h, an error
# otherwise), or unsqueezed the wrong way for a (T, S) mask; keys and values projected from the
# query (wrong for cross-attention, S != T); W_k and W_v swapped; weights averaged over heads;
# extra or missing parameters; NaN for fully masked rows; calling nn.MultiheadAttention,
# F.multi_head_attention_forward or transformer_lib. Compared with PyTorch and transformer_lib
# in float64, plus causal and padding properties and gradients.
from coursetools.checks import assert_close, assert_equal, forbid, verify_untampered
verify_untampered()
import torch.nn.functional as _F
from transformer_lib.multihead import MultiHeadAttention as _Reference


def _load(_ours, _theirs):
    with torch.no_grad():
        _weights, _biases = _theirs.in_proj_weight.chunk(3), _theirs.in_proj_bias.chunk(3)
        for _layer, _w, _b in zip((_ours.W_q, _ours.W_k, _ours.W_v), _weights, _biases):
            _layer.weight.copy_(_w)
            _layer.bias.copy_(_b)
        _ours.W_o.weight.copy_(_theirs.out_proj.weight)
        _ours.W_o.bias.copy_(_theirs.out_proj.bias)


_generator = torch.Generator().manual_seed(505)
_forbidden = (_Reference, nn.MultiheadAttention, _F.multi_head_attention_forward)
for _B, _T, _S, _d, _h, _mask_kind in [(2, 5, 5, 12, 3, None), (3, 4, 6, 12, 3, "per-sequence"),
                                       (2, 6, 6, 16, 4, "causal"), (2, 3, 7, 8, 4, "per-sequence"),
                                       (1, 5, 4, 6, 1, "padding"), (4, 5, 5, 8, 4, "padding"),
                                       (3, 1, 5, 10, 5, None)]:
    torch.manual_seed(_B * 100 + _d)
    _theirs = nn.MultiheadAttention(_d, _h, batch_first=True).double().eval()
    with torch.no_grad():
        for _p in _theirs.parameters():
            _p.normal_(0, 0.5, generator=_generator)
    _reference = _Reference.from_torch(_theirs).eval()
    _ours = MultiHeadAttention(_d, _h).double().eval()
    _names = sorted(_n for _n, _ in _ours.named_parameters())
    assert_equal(_names, ["W_k.bias", "W_k.weight", "W_o.bias", "W_o.weight", "W_q.bias", "W_q.weight",
                          "W_v.bias", "W_v.weight"], name=f"the parameters of MultiHeadAttention({_d}, {_h})")
    assert_equal((_ours.num_heads, _ours.d_k), (_h, _d // _h), name=f"(num_heads, d_k) for d_model={_d}, h={_h}")
    _load(_ours, _theirs)
    _query = torch.randn(_B, _T, _d, dtype=torch.float64, generator=_generator)
    _key = _query if _T == _S and _mask_kind != "per-sequence" else torch.randn(_B, _S, _d, dtype=torch.float64, generator=_generator)
    _value = _key if _key is _query else torch.randn(_B, _S, _d, dtype=torch.float64, generator=_generator)
    if _mask_kind is None:
        _mask, _torch_kwargs, _ref_mask = None, {}, None
    elif _mask_kind == "causal":
        _mask = torch.ones(_T, _S, dtype=torch.bool).tril()
        _torch_kwargs, _ref_mask = {"attn_mask": ~_mask}, _mask
    elif _mask_kind == "per-sequence":
        _mask = torch.rand(_B, _T, _S, generator=_generator) > 0.4
        _mask[..., _S - 1] = True  # no fully masked row (PyTorch would give NaN there)
        _torch_kwargs = {"attn_mask": (~_mask).repeat_interleave(_h, dim=0)}
        _ref_mask = _mask[:, None]
    else:
        _lengths = torch.randint(1, _S + 1, (_B,), generator=_generator)
        _keep = torch.arange(_S)[None, :] < _lengths[:, None]  # (B, S)
        _mask = _keep[:, None, :]                               # (B, 1, S)
        _torch_kwargs, _ref_mask = {"key_padding_mask": ~_keep}, _keep[:, None, None, :]
    _expected, _expected_weights = _theirs(_query, _key, _value, need_weights=True, average_attn_weights=False,
                                           **_torch_kwargs)
    _ref_out, _ref_weights = _reference(_query, _key, _value, _ref_mask)
    assert_close(_ref_out, _expected, atol=1e-10)  # the reference agrees with PyTorch
    with forbid(*_forbidden):
        _out, _weights = _ours(_query.clone(), _key.clone(), _value.clone(), None if _mask is None else _mask.clone())
    _case = f"B={_B}, T={_T}, S={_S}, d_model={_d}, h={_h}, mask={_mask_kind}"
    assert_close(_weights, _expected_weights, atol=1e-10, name=f"weights ({_case}) vs torch.nn.MultiheadAttention")
    assert_close(_out, _expected, atol=1e-10, name=f"output ({_case}) vs torch.nn.MultiheadAttention")

# properties: the causal mask leaks no future, padding changes nothing, a fully masked row is zero,
# and gradients reach all four projections
_ours = MultiHeadAttention(8, 2).double()
_x = torch.randn(2, 6, 8, dtype=torch.float64, generator=_generator)
_later = _x.clone()
_later[:, 4:] = torch.randn(2, 2, 8, dtype=torch.float64, generator=_generator)
_causal = torch.ones(6, 6, dtype=torch.bool).tril()
with forbid(*_forbidden):
    _a, _ = _ours(_x, _x, _x, _causal)
    _b, _ = _ours(_later, _later, _later, _causal)
assert_close(_a[:, :4], _b[:, :4], atol=1e-12, name="outputs at positions 0-3 after changing positions 4-5 (causal)")
_keep = torch.tensor([[True] * 4 + [False] * 2, [True] * 6])[:, None, :]  # (B, 1, S)
with forbid(*_forbidden):
    _a, _ = _ours(_x, _later, _later, _keep)
    _b, _ = _ours(_x, _x, _x, _keep)
assert_close(_a[0], _b[0], atol=1e-12, name="the output after changing padded keys and values")
_none = torch.zeros(2, 6, 6, dtype=torch.bool)
_none[1] = True
with forbid(*_forbidden):
    _out, _w = _ours(_x, _x, _x, _none)
assert not bool(torch.isnan(_out).any()), "a query whose keys are all masked must not give NaN"
assert_close(_w[0], torch.zeros(2, 6, 6, dtype=torch.float64), name="weights of fully masked rows")
with forbid(*_forbidden):
    _out, _ = _ours(_x, _later, _later)
_out.square().sum().backward()
for _n, _p in _ours.named_parameters():
    assert _p.grad is not None and float(_p.grad.abs().sum()) > 0, f"no gradient reaches {_n}"
### END HIDDEN TESTS
'''

# --- exercise 3: PyTorch's weight layout --------------------------------------------------------

LOAD_TASK = r'''
## Exercise 3: load PyTorch's weights (2 points)

`torch.nn.MultiheadAttention(d_model, h, batch_first=True)` stores its weights differently:

* `in_proj_weight`, shape `(3 * d_model, d_model)`: the weights of `W_Q`, `W_K` and `W_V`
  stacked **along the output features**, in that order (so one matrix product projects all
  three when query, key and value are the same tensor);
* `in_proj_bias`, shape `(3 * d_model,)`, stacked the same way;
* `out_proj`, an `nn.Linear(d_model, d_model)`: `W_O`.

Like `nn.Linear`, PyTorch stores a weight as `(out_features, in_features)` and computes
`x @ weight.T + bias`. Write `load_from_torch(ours, theirs)` that copies the values of `theirs` (an
`nn.MultiheadAttention`) into `ours` (a module with the four `nn.Linear` layers `W_q`, `W_k`, `W_v`,
`W_o` of exercise 2) and returns `ours`:

* copy **in place**, with `Tensor.copy_` (the `torch.no_grad()` block is given): the parameters of
  `ours` stay the same `nn.Parameter` objects (an optimizer built earlier still trains them) and
  share no memory with `theirs` (training one later must not change the other);
* mind which way round the weights are (a transposed square matrix has the right shape and the
  wrong values).

You may not use `transformer_lib`'s `MultiHeadAttention.from_torch`. The tests give you a module
with the four layers, so this exercise does not depend on exercise 2.
'''

LOAD_SOLUTION = r'''
def load_from_torch(ours: nn.Module, theirs: nn.MultiheadAttention) -> nn.Module:
    """Copy the weights of a torch.nn.MultiheadAttention into ours.W_q, W_k, W_v, W_o (in place)."""
    # copying weights is not part of any computation to differentiate
    with torch.no_grad():
        ### BEGIN SOLUTION
        d_model = theirs.embed_dim
        for index, layer in enumerate((ours.W_q, ours.W_k, ours.W_v)):
            rows = slice(index * d_model, (index + 1) * d_model)
            layer.weight.copy_(theirs.in_proj_weight[rows])
            layer.bias.copy_(theirs.in_proj_bias[rows])
        ours.W_o.weight.copy_(theirs.out_proj.weight)
        ours.W_o.bias.copy_(theirs.out_proj.bias)
        ### END SOLUTION
    return ours
'''

LOAD_TESTS = r'''
class FourLayers(nn.Module):
    """Just the parameters of exercise 2's module, so this test does not need your forward."""

    def __init__(self, d_model):
        super().__init__()
        self.W_q, self.W_k, self.W_v, self.W_o = (nn.Linear(d_model, d_model) for _ in range(4))


torch.manual_seed(5005)
theirs = nn.MultiheadAttention(4, 2, batch_first=True)
ours = FourLayers(4)
result = load_from_torch(ours, theirs)
assert result is ours, "load_from_torch must return `ours`"
assert_close(ours.W_q.weight, theirs.in_proj_weight[:4], name="W_q.weight (rows 0-3 of in_proj_weight)")
assert_close(ours.W_k.weight, theirs.in_proj_weight[4:8], name="W_k.weight (rows 4-7 of in_proj_weight)")
assert_close(ours.W_v.bias, theirs.in_proj_bias[8:], name="W_v.bias (entries 8-11 of in_proj_bias)")
assert_close(ours.W_o.weight, theirs.out_proj.weight, name="W_o.weight")
x = torch.randn(1, 3, 4)
assert_close(ours.W_k(x), x @ theirs.in_proj_weight[4:8].T + theirs.in_proj_bias[4:8], atol=1e-6,
             name="the keys computed by ours.W_k")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: weights transposed (square, so the shapes
# match); W_q, W_k, W_v taken in another order or cut along the wrong axis; biases or W_o not
# copied; parameters replaced by new tensors (an optimizer loses them) or sharing memory with
# `theirs`; calling transformer_lib's from_torch.
from coursetools.checks import assert_close, assert_equal, forbid, verify_untampered
verify_untampered()
from transformer_lib.multihead import MultiHeadAttention as _Reference

_generator = torch.Generator().manual_seed(33)
for _d, _h in [(6, 2), (8, 4), (5, 1)]:
    torch.manual_seed(_d)
    _theirs = nn.MultiheadAttention(_d, _h, batch_first=True).double()
    with torch.no_grad():
        for _p in _theirs.parameters():
            _p.normal_(generator=_generator)
    _ours = FourLayers(_d).double()
    _before = [id(_p) for _p in _ours.parameters()]
    with forbid(vars(_Reference)["from_torch"].__func__):
        _result = load_from_torch(_ours, _theirs)
    assert _result is _ours, "load_from_torch must return `ours`"
    assert_equal([id(_p) for _p in _ours.parameters()], _before,
                 name="the identity of the parameters (copy into them with .copy_, do not replace them)")
    _reference = _Reference.from_torch(_theirs)
    _w_q, _w_k, _w_v = _reference.in_proj.weight.chunk(3)
    _b_q, _b_k, _b_v = _reference.in_proj.bias.chunk(3)
    for _name, _got, _want in [("W_q.weight", _ours.W_q.weight, _w_q), ("W_k.weight", _ours.W_k.weight, _w_k),
                               ("W_v.weight", _ours.W_v.weight, _w_v), ("W_q.bias", _ours.W_q.bias, _b_q),
                               ("W_k.bias", _ours.W_k.bias, _b_k), ("W_v.bias", _ours.W_v.bias, _b_v),
                               ("W_o.weight", _ours.W_o.weight, _reference.out_proj.weight),
                               ("W_o.bias", _ours.W_o.bias, _reference.out_proj.bias)]:
        assert_close(_got, _want, atol=0, rtol=0, name=f"{_name} (d_model={_d})")
        assert isinstance(_got, nn.Parameter) and _got.requires_grad, f"{_name} must stay a trainable nn.Parameter"
    _snapshot = [_p.detach().clone() for _p in _ours.parameters()]
    with torch.no_grad():
        for _p in _theirs.parameters():
            _p.add_(1.0)
    for _p, _s in zip(_ours.parameters(), _snapshot):
        assert_close(_p, _s, atol=0, rtol=0, name="ours after changing theirs (they must not share memory)")
### END HIDDEN TESTS
'''

DEMO = r'''
# Not graded: once exercises 2 and 3 pass, your module and PyTorch's compute the same function.
torch.manual_seed(4)
theirs = nn.MultiheadAttention(16, 4, batch_first=True).double()
ours = load_from_torch(MultiHeadAttention(16, 4).double(), theirs)
x = torch.randn(2, 6, 16, dtype=torch.float64)
causal = torch.ones(6, 6, dtype=torch.bool).tril()
expected, expected_weights = theirs(x, x, x, attn_mask=~causal, average_attn_weights=False)  # PyTorch: True = blocked
output, weights = ours(x, x, x, causal)                                                     # here: True = may attend
print("largest difference of the outputs:", float((output - expected).abs().max()))
print("largest difference of the weights:", float((weights - expected_weights).abs().max()))
'''

# --- exercise 4: cost ---------------------------------------------------------------------------

COST_TASK = r'''
## Exercise 4: what a layer costs (3 points)

Write `mha_cost(d_model, num_heads, T, S)` that returns a dict of four Python `int`s for **one**
sequence (`B = 1`) of `T` queries attending to `S` keys, through the layer of exercise 2:

* `"parameters"`: the number of trainable numbers in `W_q`, `W_k`, `W_v`, `W_o` (weights and
  biases);
* `"projection_macs"`: the multiply-adds of the four projections (the queries, the keys, the
  values, the output); a product of a `(n, a)` by an `(a, b)` matrix costs `n * a * b`; do not
  count the additions of the biases;
* `"attention_macs"`: the multiply-adds of the scores `Q K^T` and of `weights @ V`, all heads
  together (the scaling and the softmax are not counted);
* `"weight_entries"`: how many attention weights the layer computes (and keeps in memory for the
  backward pass).

Then look at which of the four change with `num_heads`. The hidden tests compare with the
parameters of `torch.nn.MultiheadAttention`, with the attention weights that `transformer_lib`'s
layer returns, and with the multiply-adds that PyTorch's flop counter measured for the chapter
page. You may not build a module or count by running one: write the formulas.
'''

COST_SOLUTION = r'''
def mha_cost(d_model: int, num_heads: int, T: int, S: int) -> dict[str, int]:
    """Parameters, multiply-adds and attention weights of multi-head attention for one sequence."""
    ### BEGIN SOLUTION
    head_width = d_model // num_heads
    layer_costs = {"parameters": 4 * (d_model * d_model + d_model),  # four weights, four biases
                   "projection_macs": (T + S + S + T) * d_model * d_model,  # Q, K, V, output
                   "attention_macs": num_heads * (2 * T * S * head_width),  # Q K^T, weights @ V
                   "weight_entries": num_heads * T * S}
    return layer_costs
    ### END SOLUTION
'''

COST_TESTS = r'''
cost = mha_cost(8, 2, T=3, S=5)
print("mha_cost(8, 2, T=3, S=5) =", cost)
assert_equal(sorted(cost), ["attention_macs", "parameters", "projection_macs", "weight_entries"],
             name="the keys of mha_cost(...)")
assert all(type(v) is int for v in cost.values()), f"every value must be a Python int, got {cost}"
assert_equal(cost["parameters"], 288, name='mha_cost(8, 2, 3, 5)["parameters"] (four 8 x 8 weights and four biases of 8)')
assert_equal(cost["weight_entries"], 30, name='mha_cost(8, 2, 3, 5)["weight_entries"] (2 heads x 3 queries x 5 keys)')
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: biases forgotten (4 d^2); one d_model x d_model
# matrix per head (h times too many parameters or projection MACs); W_o forgotten; T used for the
# keys and values (T != S here); attention MACs per head only (d_k instead of d_model, i.e. not
# times h), or only Q K^T; weight entries without the heads; floats instead of ints; counting by
# building a module. Checked against nn.MultiheadAttention's parameters and the formulas
# that FlopCounterMode confirms (see the chapter page).
from coursetools.checks import assert_equal, forbid, verify_untampered
verify_untampered()
from transformer_lib.multihead import MultiHeadAttention as _Reference

_generator = torch.Generator().manual_seed(44)
for _d, _h, _T, _S in [(8, 2, 3, 5), (12, 3, 7, 2), (16, 16, 4, 4), (6, 1, 1, 9), (20, 4, 5, 11)]:
    _reference = _Reference(_d, _h)
    with torch.no_grad():
        _, _weights = _reference(torch.randn(1, _T, _d, generator=_generator),
                                 *[torch.randn(1, _S, _d, generator=_generator)] * 2)
    # multiply-adds as torch.utils.flop_counter.FlopCounterMode measures them (FLOPs / 2):
    # addmm of the four projections, bmm of Q K^T and weights @ V
    _expected = {"parameters": sum(_p.numel() for _p in nn.MultiheadAttention(_d, _h).parameters()),
                 "projection_macs": 2 * (_T + _S) * _d * _d, "attention_macs": 2 * _T * _S * _d,
                 "weight_entries": _weights.numel()}
    with forbid(_Reference, nn.MultiheadAttention):
        _cost = mha_cost(_d, _h, _T, _S)
    _case = f"mha_cost(d_model={_d}, num_heads={_h}, T={_T}, S={_S})"
    assert_equal(sorted(_cost), sorted(_expected), name=f"the keys of {_case}")
    for _key in _expected:
        assert type(_cost[_key]) is int, f'{_case}["{_key}"] must be a Python int, got {type(_cost[_key]).__name__}'
        assert_equal(_cost[_key], _expected[_key], name=f'{_case}["{_key}"]')
### END HIDDEN TESTS
'''

# --- free response ------------------------------------------------------------------------------

QUESTION = r'''
## Exercise 5: one head or many? (3 points, graded by hand)

By exercise 4, a layer with `h = 8` heads of `d_k = 64` and a layer with one head of
`d_k = d_model = 512` have the same number of parameters and the same multiply-adds. On the
chapter page, a small model had to report, at every position, both the **first** token of the
sequence and the **previous** token. Answer in a few sentences, in the cell below:

1. What can the eight-head layer do at a single query position that the one-head layer cannot?
   Use that task as your example.
2. Why not go all the way to `h = d_model` heads of `d_k = 1`? Think about what a score
   `q_t · k_s` can express when `q_t` and `k_s` are single numbers.
3. Which cost from exercise 4 does grow with `h`, and why can it matter in practice?
'''

MODEL_ANSWER = r'''
**Model answer and rubric (1 point per part).**

1. One head produces **one** probability distribution over the keys per query, so its output is
   one weighted average of values. To fetch both the first and the previous token it has to split
   its weight between them and blend the two values into one vector (on the chapter page the
   single head shared its weight between the two positions); anything else
   it should track at the same time competes for the same weights. Eight heads give eight
   independent distributions per query: one head can put almost all its weight on the first
   token, another on the previous token, each read in its own subspace, and the concatenation
   hands both, unblurred, to `W_O`. (Credit for "several distributions / several places at once
   / different relations in different subspaces", with the example.)
2. With `d_k = 1` a head's score `q_t k_s` is a product of two numbers: for a given query the
   ranking of the keys is fixed up to a reversal (largest `k_s` if `q_t > 0`, smallest if
   `q_t < 0`), so a head cannot match "the key that resembles this query" in any rich way; the
   score matrix of a head has rank 1. Too small a `d_k` is a low-rank bottleneck: heads become
   numerous but each is too weak. In practice `d_k` of 64 to 128 is common.
3. The attention weights: `h * T * S` per sequence (and `h` score matrices to compute, softmax
   and store for the backward pass). Their memory grows with `h` and with the square of the
   length, so more heads make long sequences more expensive in memory and in memory traffic,
   even though the multiply-adds stay `2 T S d_model` (fused kernels such as FlashAttention avoid
   storing them).
'''

CLOSING = r'''
## Where this goes next

You have written the layer at the heart of the Transformer: split into heads, attend in one
batched call, merge, project, and you have checked it against PyTorch weight for weight. In
`transformer_lib.multihead` the same layer is `MultiHeadAttention`, with the three input
projections packed into one `in_proj` as PyTorch packs them, and `from_torch` to copy a PyTorch
module. The next chapter adds what attention alone lacks: the order of the tokens.
'''


def build() -> list:
    """The cells of the notebook, in order."""
    return [
        markdown(INTRO),
        instructions("grading", GRADING),
        setup("setup", SETUP),
        instructions("split_task", SPLIT_TASK),
        solution("split_merge", SPLIT_SOLUTION),
        tests("test_split_merge", 3, SPLIT_TESTS),
        instructions("mha_task", MHA_TASK),
        solution("multi_head_attention", MHA_SOLUTION),
        tests("test_multi_head_attention", 4, MHA_TESTS),
        instructions("load_task", LOAD_TASK),
        solution("load_from_torch", LOAD_SOLUTION),
        tests("test_load_from_torch", 2, LOAD_TESTS),
        code(DEMO),
        instructions("cost_task", COST_TASK),
        solution("mha_cost", COST_SOLUTION),
        tests("test_mha_cost", 3, COST_TESTS),
        instructions("heads_question", QUESTION),
        free_response("heads_answer", 3, MODEL_ANSWER),
        markdown(CLOSING),
    ]


def main() -> None:
    print(f"wrote {write_chapter(ASSIGNMENT, build())}")


if __name__ == "__main__":
    main()
