r'''Chapter 4 exercises: parameter-free self-attention, scaled dot-product attention, masks, a module.

``python -m coursetools.chapters.ch04_self_attention`` writes
``solutions/ch04_self_attention/ch04_self_attention.ipynb``, the nbgrader source (solutions and
hidden tests); ``python -m coursetools.release ch04_self_attention`` derives the student notebook.
Every hidden block starts with instructor notes listing the mistakes it is there to catch.
'''

from __future__ import annotations


from coursetools.authoring import (code, free_response, instructions, markdown, setup, solution, tests,
                                   write_chapter)

ASSIGNMENT = "ch04_self_attention"

INTRO = r'''
# Chapter 4 exercises: self-attention

You will write, from scratch, the attention at the heart of the Transformer: every token of a
sequence looks at every other token of the *same* sequence and takes a weighted average of them.

**Learning objectives.** After these exercises you can

1. compute parameter-free self-attention, `Y = softmax(X X^T) X`, and say which axis sums to one;
2. write scaled dot-product attention, `softmax(Q K^T / sqrt(d_k)) V`, for any leading batch
   dimensions, with a boolean mask (True = may attend) applied *before* the softmax;
3. build causal and padding masks, and check that they leak no future and that padding changes nothing;
4. package attention as an `nn.Module` with learned projections `W_q`, `W_k`, `W_v`;
5. explain why the scores are divided by `sqrt(d_k)`.

The chapter page *Self-attention* explains all of this; keep it open.
'''

GRADING = r'''
## How grading works

* In each answer cell, replace the lines `# YOUR CODE HERE` and `raise NotImplementedError()`
  with your code; keep the function names, signatures and docstrings.
* After each answer, run the test cell below it. The **visible tests** check a small worked
  example and tell you what is wrong. When you submit, **hidden tests** in the same cells check
  many more cases (other shapes, batch dimensions, masks, float64), compare your answers with
  reference implementations and with PyTorch, and give the cell's points only if everything passes.
* Each exercise says what you may not use: calling a ready-made implementation of the very thing
  you are asked to write earns no points.
* Do not edit or delete the locked cells, and do not reassign functions of `torch`, Python's
  builtins or `transformer_lib`: the tests detect it and the cell scores zero.
* Before submitting: *Kernel → Restart & Run All*, and check that every test cell runs without an
  error. Each cell must finish within 30 seconds (the solutions take well under one second).

| exercise | points |
|---|---|
| 1. Self-attention with no parameters | 2 |
| 2. Scaled dot-product attention with a mask | 4 |
| 3. Causal and padding masks | 3 |
| 4. A self-attention module with `W_q`, `W_k`, `W_v` | 4 |
| 5. Question: why `1/sqrt(d_k)` (graded by hand) | 3 |
| **total** | **16** |
'''

SETUP = r'''
import math
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

import transformer_lib
from coursetools.checks import assert_close, assert_equal, assert_shape, forbid, verify_untampered

warnings.filterwarnings("ignore")  # a warning printed by torch must not cost points
torch.manual_seed(0)
torch.set_printoptions(precision=4, sci_mode=False)
'''

# --- exercise 1: parameter-free self-attention -----------------------------------------------

SIMPLE_TASK = r'''
## Exercise 1: self-attention with no parameters (2 points)

The input is a batch `x` of shape `(B, T, d_model)`: `B` sequences of `T` token vectors
`x_1, ..., x_T`. Self-attention with no parameters replaces each token by an average of all the
tokens of its sequence, weighted by how similar they are:

* raw weights, one dot product per pair of tokens: `w'_ij = x_i . x_j`;
* weights: a softmax over `j` (the tokens being looked at), so that each row sums to one:
  `w_ij = exp(w'_ij) / sum_j' exp(w'_ij')`;
* output: `y_i = sum_j w_ij x_j`.

Write `simple_self_attention(x)` returning `(y, weights)`: `y` of shape `(B, T, d_model)` and
`weights` of shape `(B, T, T)` with `weights[b, i, j] = w_ij` of sequence `b` (row `i` = the
token that looks, column `j` = the token looked at). Do it for the whole batch at once, with
matrix products (`@`, `torch.matmul`, `torch.einsum`) and `torch.softmax`; no Python loop.
There is **no scaling** here (that comes in exercise 2) and no parameter.

You may not use `transformer_lib`'s attention functions or `F.scaled_dot_product_attention`.
'''

SIMPLE_SOLUTION = r'''
def simple_self_attention(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Parameter-free self-attention.

    Args:
        x: (B, T, d_model), B sequences of T token vectors.

    Returns:
        (y, weights): y (B, T, d_model) with y_i = sum_j w_ij x_j, and weights (B, T, T) with
        weights[b, i, j] = softmax over j of x_i . x_j (each row sums to one).
    """
    ### BEGIN SOLUTION
    similarity = torch.einsum("bid,bjd->bij", x, x)      # w'_ij = x_i . x_j, (B, T, T)
    attention = similarity.softmax(dim=-1)                # over j: row i sums to one
    mixed = torch.einsum("bij,bjd->bid", attention, x)   # y_i = sum_j w_ij x_j
    return mixed, attention
    ### END SOLUTION
'''

SIMPLE_TESTS = r'''
x = torch.tensor([[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]])  # B = 1, T = 3, d_model = 2
y, weights = simple_self_attention(x)
print("weights =\n", weights, "\ny =\n", y)
assert_shape(weights, (1, 3, 3), name="weights of simple_self_attention(x (1, 3, 2))")
assert_shape(y, (1, 3, 2), name="y of simple_self_attention(x (1, 3, 2))")
assert_close(weights.sum(dim=-1), torch.ones(1, 3), name="the sum of each row of weights (over j)")
# row 0: x_0 . x_j = (1, 0, 1) -> softmax = (e, 1, e) / (2e + 1)
e = math.e
assert_close(weights[0, 0], torch.tensor([e, 1.0, e]) / (2 * e + 1), name="weights[0, 0] (token 0 looking at 0, 1, 2)")
assert_close(y[0, 0], torch.tensor([2 * e, 1 + e]) / (2 * e + 1), name="y[0, 0]")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: softmax over the wrong axis (dim=-2, or dim=0
# the batch); weights returned transposed (y = weights^T x); scores divided by sqrt(d_model) or
# d_model although this exercise has no scaling; cosine similarity instead of dot products;
# mixing sequences of a batch (x flattened to (B*T, d)); a loop only over the first sequence;
# calling transformer_lib's attention or F.scaled_dot_product_attention.
from coursetools.checks import assert_close, forbid, refuse, verify_untampered
verify_untampered()
import transformer_lib.attention as _attention
import transformer_lib.multihead as _multihead


_generator = torch.Generator().manual_seed(404)
for _B, _T, _d, _scale in [(3, 5, 4, 0.5), (2, 7, 9, 0.3), (1, 1, 3, 1.0), (4, 6, 2, 1.5)]:
    _x = _scale * torch.randn(_B, _T, _d, dtype=torch.float64, generator=_generator)
    # The reference: scaling queries and keys by d^(1/4) each cancels the 1/sqrt(d) of the library.
    _expected_y, _expected_w = _attention.scaled_dot_product_attention(_x * _d ** 0.25, _x * _d ** 0.25, _x)
    assert_close(_expected_w, torch.softmax(_x @ _x.transpose(-2, -1), dim=-1), atol=1e-10)  # the reference is right
    with refuse(F, "scaled_dot_product_attention", "this exercise asks you to write attention yourself: your "
                "solution called torch.nn.functional.scaled_dot_product_attention"), \
            forbid(_attention.scaled_dot_product_attention, _attention.masked_softmax,
                   _multihead.MultiHeadAttention, F.multi_head_attention_forward):
        _y, _w = simple_self_attention(_x.clone())
    assert_close(_w, _expected_w, atol=1e-10, name=f"weights of simple_self_attention(x {(_B, _T, _d)})")
    assert_close(_y, _expected_y, atol=1e-10, name=f"y of simple_self_attention(x {(_B, _T, _d)})")
    # It sees a set: permuting the tokens permutes the outputs (and the weights) the same way.
    _perm = torch.randperm(_T, generator=_generator)
    _y_perm, _w_perm = simple_self_attention(_x[:, _perm].clone())
    assert_close(_y_perm, _y[:, _perm], atol=1e-10, name="y of the permuted input")
    assert_close(_w_perm, _w[:, _perm][:, :, _perm], atol=1e-10, name="weights of the permuted input")
### END HIDDEN TESTS
'''

# --- exercise 2: scaled dot-product attention ------------------------------------------------

SDPA_TASK = r'''
## Exercise 2: scaled dot-product attention with a mask (4 points)

Write `scaled_dot_product_attention(query, key, value, mask=None)` returning `(output, weights)`:

* `query` has shape `(..., T, d_k)`, `key` `(..., S, d_k)`, `value` `(..., S, d_v)`, where `...`
  stands for any number of leading batch dimensions (none, `(B,)`, `(B, h)`), the same for all three;
* `weights = softmax(query key^T / sqrt(d_k))` with the softmax over the **keys** (the last
  axis): shape `(..., T, S)`, `weights[..., t, s]` is how much query `t` attends to key `s`;
* `output = weights value`, shape `(..., T, d_v)`. Note that `d_k` is the size of the queries
  and keys, not of the values.

`mask` is `None` or a **boolean** tensor broadcastable to `(..., T, S)`, for example `(T, S)`,
`(B, 1, S)` or `(B, T, S)`: **True means "may attend"**, False means "must get weight 0". Apply
it to the scores **before** the softmax (a masked score becomes `-inf`, so its weight is
exactly 0 and the other weights of the row still sum to one). If every key of a query is
masked, that query's weights (and so its output) must be **all zeros, never NaN**.

You may not use `F.scaled_dot_product_attention`, `nn.MultiheadAttention` or `transformer_lib`'s
`scaled_dot_product_attention`, `masked_softmax` or `MultiHeadAttention`.
'''

SDPA_SOLUTION = r'''
def scaled_dot_product_attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                                 mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(query key^T / sqrt(d_k)) value, with an optional boolean mask (True = may attend).

    Args:
        query: (..., T, d_k); key: (..., S, d_k); value: (..., S, d_v).
        mask: None or boolean, broadcastable to (..., T, S); False entries get weight 0.

    Returns:
        (output, weights): output (..., T, d_v); weights (..., T, S), each row sums to one,
        or is all zeros when every key of that query is masked.
    """
    ### BEGIN SOLUTION
    d_k = query.shape[-1]
    logits = torch.matmul(query, key.transpose(-1, -2)) / math.sqrt(d_k)  # (..., T, S)
    allowed = torch.ones_like(logits, dtype=torch.bool) if mask is None else mask
    logits = logits.masked_fill(allowed.logical_not(), -math.inf)        # exp(-inf) = 0
    attention = torch.nan_to_num(logits.softmax(dim=-1), nan=0.0)  # every key masked: 0 / 0 -> 0
    return torch.matmul(attention, value), attention
    ### END SOLUTION
'''

SDPA_TESTS = r'''
query = torch.tensor([[1.0, 0.0, 1.0, 0.0], [0.0, 2.0, 0.0, 0.0]])          # T = 2, d_k = 4
key = torch.tensor([[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0], [2.0, 0.0, 0.0, 0.0]])  # S = 3
value = torch.tensor([[1.0, 0.0], [0.0, 1.0], [3.0, 3.0]])                   # d_v = 2
output, weights = scaled_dot_product_attention(query, key, value)
print("weights =\n", weights, "\noutput =\n", output)
assert_shape(weights, (2, 3), name="weights for query (2, 4), key (3, 4)")
assert_shape(output, (2, 2), name="output for value (3, 2)")
# scores = query key^T / sqrt(4): row 0 = (2, 0, 2) / 2 = (1, 0, 1); row 1 = (2, 0, 0) / 2 = (1, 0, 0)
e = math.e
assert_close(weights[0], torch.tensor([e, 1.0, e]) / (2 * e + 1), name="weights[0] (is the scaling 1/sqrt(d_k)?)")
assert_close(weights[1], torch.tensor([e, 1.0, 1.0]) / (e + 2), name="weights[1]")
assert_close(output, weights @ value, name="output (should be weights @ value)")

# a mask (True = may attend), here broadcast over a batch of 2: query 0 may not look at key 2,
# query 1 may look at nothing (its weights and output must be zeros, not NaN)
mask = torch.tensor([[True, True, False], [False, False, False]])
output, weights = scaled_dot_product_attention(query.expand(2, 2, 4), key.expand(2, 3, 4), value.expand(2, 3, 2), mask)
print("masked weights =\n", weights[0])
assert_shape(weights, (2, 2, 3), name="weights for a batch of 2")
assert_close(weights[:, 0], torch.tensor([e / (e + 1), 1 / (e + 1), 0.0]).expand(2, 3),
             name="masked weights[:, 0] (masked before the softmax, the row still sums to one)")
assert_close(weights[:, 1], torch.zeros(2, 3), name="weights of a query whose keys are all masked (zeros, no NaN)")
assert_close(output[:, 1], torch.zeros(2, 2), name="output of a query whose keys are all masked")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: no scaling; scaling by d_k instead of
# sqrt(d_k), or by the size of the values d_v (the "d_model" mistake: here d_v != d_k);
# softmax over the wrong axis (queries) or over the batch; weights returned transposed (S, T);
# mask with the wrong polarity (masked_fill(mask, -inf)); the mask applied only to the weights
# after the softmax (rows no longer sum to one); -1e9 instead of -inf, or -inf left as NaN, on a
# fully masked row (uniform weights or NaN instead of zeros); a mask that does not broadcast
# ((T, S) over a batch, (B, 1, S) padding); only 3-D inputs handled (no 2-D or 4-D); d_k read from
# the wrong axis; the output detached from the graph; calling transformer_lib's attention,
# masked_softmax, F.scaled_dot_product_attention or nn.MultiheadAttention.
from coursetools.checks import assert_close, forbid, refuse, verify_untampered
verify_untampered()
import contextlib as _contextlib
import transformer_lib.attention as _attention
import transformer_lib.multihead as _multihead


@_contextlib.contextmanager
def _no_fused_attention():
    """The fused kernel (a C builtin, refused) and every library attention (forbidden) raise inside."""
    with refuse(F, "scaled_dot_product_attention", "this exercise asks you to write attention yourself: your "
                "solution called torch.nn.functional.scaled_dot_product_attention"), \
            forbid(_attention.scaled_dot_product_attention, _attention.masked_softmax,
                   _multihead.MultiHeadAttention, nn.MultiheadAttention, F.multi_head_attention_forward):
        yield


_generator = torch.Generator().manual_seed(2017)


def _bool(shape, p=0.7):
    return torch.rand(shape, generator=_generator) < p


_cases = [  # (batch shape, T, S, d_k, d_v, mask shape or None or "causal")
    ((), 5, 7, 8, 3, None), ((2,), 4, 6, 5, 9, None), ((2, 3), 4, 5, 6, 10, None),
    ((3,), 6, 6, 4, 4, None), ((2,), 6, 6, 8, 5, "causal"), ((2,), 5, 7, 4, 3, (2, 1, 7)),
    ((2,), 5, 7, 4, 3, (2, 5, 7)), ((2, 3), 4, 6, 8, 2, (2, 1, 1, 6)), ((2, 3), 4, 6, 8, 2, (4, 6)),
    ((4,), 3, 3, 16, 2, (4, 3, 3)), ((), 1, 4, 2, 2, (1, 4)),
]
for _batch, _T, _S, _d_k, _d_v, _mask_shape in _cases:
    _q = torch.randn(*_batch, _T, _d_k, dtype=torch.float64, generator=_generator)
    _k = torch.randn(*_batch, _S, _d_k, dtype=torch.float64, generator=_generator)
    _v = torch.randn(*_batch, _S, _d_v, dtype=torch.float64, generator=_generator)
    if _mask_shape is None:
        _mask = None
    elif _mask_shape == "causal":
        _mask = torch.ones(_T, _S, dtype=torch.bool).tril()
    else:
        _mask = _bool(_mask_shape)
        _mask.view(-1, _mask_shape[-1])[0] = False  # at least one query (or padding row) sees nothing
    _expected_out, _expected_w = _attention.scaled_dot_product_attention(_q, _k, _v, _mask)
    _torch_out = F.scaled_dot_product_attention(_q, _k, _v, attn_mask=_mask)
    assert_close(_expected_out, _torch_out, atol=1e-10)  # the reference agrees with PyTorch
    _q_in, _k_in, _v_in = (t.clone().requires_grad_(True) for t in (_q, _k, _v))
    _mask_in = None if _mask is None else _mask.clone()
    with _no_fused_attention():
        _out, _w = scaled_dot_product_attention(_q_in, _k_in, _v_in, _mask_in)
    _what = f"query {tuple(_q.shape)}, key {tuple(_k.shape)}, value {tuple(_v.shape)}, mask " + (
        "None" if _mask is None else f"{tuple(_mask.shape)}")
    assert_close(_w, _expected_w, atol=1e-10, name=f"weights for {_what}")
    assert_close(_out, _expected_out, atol=1e-10, name=f"output for {_what}")
    assert_close(_out, _torch_out, atol=1e-10, name=f"output (compared with PyTorch) for {_what}")
    if _mask is not None:
        assert torch.equal(_mask_in, _mask), "scaled_dot_product_attention must not change the mask in place"
    # gradients flow to query, key and value as through the reference
    assert _out.requires_grad, "the output must stay connected to query, key and value (no .detach() / torch.no_grad())"
    _upstream = torch.randn(_out.shape, dtype=torch.float64, generator=_generator)
    _grads = torch.autograd.grad((_out * _upstream).sum(), (_q_in, _k_in, _v_in))
    _q_ref, _k_ref, _v_ref = (t.clone().requires_grad_(True) for t in (_q, _k, _v))
    _ref_out, _ = _attention.scaled_dot_product_attention(_q_ref, _k_ref, _v_ref, _mask)
    _ref_grads = torch.autograd.grad((_ref_out * _upstream).sum(), (_q_ref, _k_ref, _v_ref))
    for _name, _g, _g_ref in zip(("query", "key", "value"), _grads, _ref_grads):
        assert_close(_g, _g_ref, atol=1e-8, name=f"the gradient with respect to {_name} for {_what}")
# float32 inputs stay float32
_q32 = torch.randn(2, 3, 4, generator=_generator)
with _no_fused_attention():
    _out32, _w32 = scaled_dot_product_attention(_q32, _q32, _q32)
assert _out32.dtype == torch.float32 and _w32.dtype == torch.float32, "float32 inputs must give float32 results"
### END HIDDEN TESTS
'''

TRY_SCALING = r'''
# Not graded: watch the softmax saturate. Random queries and keys with unit-variance entries;
# the mean entropy of a row of weights (in nats; log(S) would be uniform) with and without 1/sqrt(d_k).
S = 32
entropy = lambda w: float(-(w * w.clamp_min(1e-30).log()).sum(-1).mean())
for d_k in (4, 64, 1024):
    q, k = torch.randn(256, 1, d_k), torch.randn(256, S, d_k)
    _, w_scaled = scaled_dot_product_attention(q, k, k)
    w_unscaled = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
    print(f"d_k = {d_k:4d}: entropy scaled {entropy(w_scaled):.2f}, unscaled {entropy(w_unscaled):.2f} "
          f"(uniform: {math.log(S):.2f})")
'''

# --- exercise 3: masks -----------------------------------------------------------------------

MASK_TASK = r'''
## Exercise 3: causal and padding masks (3 points)

Masks are **boolean** tensors, **True where attention is allowed**. Write

* `causal_mask(size)`: a `(size, size)` mask for a sequence that must not look ahead: query `t`
  may attend keys `0, 1, ..., t` (**itself included**) and nothing after it, so `mask[t, s]` is
  True exactly when `s <= t`;
* `padding_mask(lengths, max_len=None)`: `lengths` is a `torch.long` tensor `(B,)`; return a
  `(B, max_len)` mask whose row `b` is True at the first `lengths[b]` positions (real tokens) and
  False after them (padding). With `max_len=None`, use `max_len = lengths.max()`; `max_len` may
  be larger than every length. Put the mask on the device of `lengths`.

To mask the *keys* of a padded batch in attention scores `(B, T, S)`, index the padding mask as
`mask[:, None, :]` (shape `(B, 1, S)`), which broadcasts over the queries.

You may use `torch.arange`, comparisons, `torch.ones` and `torch.tril`/`torch.triu`. You may not
use `transformer_lib`'s `causal_mask`, `padding_mask` or `lengths_to_mask`, or
`nn.Transformer.generate_square_subsequent_mask`.
'''

MASK_SOLUTION = r'''
def causal_mask(size: int) -> torch.Tensor:
    """(size, size) boolean mask, True where key s <= query t (each position sees itself and the past)."""
    ### BEGIN SOLUTION
    steps = torch.arange(size)
    return steps.unsqueeze(0) <= steps.unsqueeze(1)  # [t, s] = s <= t
    ### END SOLUTION


def padding_mask(lengths: torch.Tensor, max_len: int | None = None) -> torch.Tensor:
    """(B, max_len) boolean mask, True at the first lengths[b] positions of row b."""
    ### BEGIN SOLUTION
    width = int(lengths.max()) if max_len is None else max_len
    return torch.arange(width, device=lengths.device).unsqueeze(0) < lengths.unsqueeze(1)
    ### END SOLUTION
'''

MASK_TESTS = r'''
print("causal_mask(4) =\n", causal_mask(4))
assert_equal(causal_mask(3), torch.tensor([[True, False, False], [True, True, False], [True, True, True]]),
             name="causal_mask(3) (True on and below the diagonal)")
print("padding_mask(tensor([3, 1]), 4) =\n", padding_mask(torch.tensor([3, 1]), 4))
assert_equal(padding_mask(torch.tensor([3, 1]), 4), torch.tensor([[True, True, True, False], [True, False, False, False]]),
             name="padding_mask(tensor([3, 1]), 4) (True at real tokens)")
assert_equal(padding_mask(torch.tensor([2, 1])), torch.tensor([[True, True], [True, False]]),
             name="padding_mask(tensor([2, 1])) (max_len defaults to the longest length)")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: causal mask off by one (the diagonal excluded,
# tril(-1)); polarity inverted (triu(1): True at the future; True at padding); a float or 0/1
# integer mask, or PyTorch's additive -inf mask, instead of booleans; the causal mask transposed
# (upper triangle); padding_mask ignoring max_len, or using <= (one padding position too many);
# max_len=None not handled; a length of 0 or a batch of one breaking the code; calling
# transformer_lib's masks or nn.Transformer.generate_square_subsequent_mask. Properties: with
# these masks, attention leaks no future token, and padding changes nothing at real tokens.
from coursetools.checks import assert_close, assert_equal, forbid, verify_untampered
verify_untampered()
import transformer_lib.attention as _attention
import transformer_lib.tokens as _tokens

_forbidden = (_attention.causal_mask, _attention.padding_mask, _tokens.lengths_to_mask,
              nn.Transformer.generate_square_subsequent_mask)
for _size in range(1, 10):
    with forbid(*_forbidden):
        _mask = causal_mask(_size)
    assert_equal(_mask, _attention.causal_mask(_size), name=f"causal_mask({_size})")
    assert_equal(_mask, torch.ones(_size, _size).tril().bool(), name=f"causal_mask({_size})")
_generator = torch.Generator().manual_seed(31)
for _lengths, _max_len in [([3, 1, 2], 3), ([0, 4], 6), ([5], 5), ([2, 2, 2, 2], 7), ([1, 6, 3, 0, 4], None), ([7], None)]:
    _lengths_t = torch.tensor(_lengths)
    with forbid(*_forbidden):
        _mask = padding_mask(_lengths_t.clone(), _max_len)
    assert_equal(_mask, _attention.padding_mask(_lengths_t, _max_len), name=f"padding_mask(tensor({_lengths}), {_max_len})")

# Property 1: with the causal mask, changing the future changes nothing in the past.
_T, _d = 7, 5
with forbid(*_forbidden):
    _causal = causal_mask(_T)
_x = torch.randn(2, _T, _d, dtype=torch.float64, generator=_generator)
_out, _ = _attention.scaled_dot_product_attention(_x, _x, _x, _causal)
for _t in range(_T - 1):
    _changed = _x.clone()
    _changed[:, _t + 1:] = torch.randn(2, _T - _t - 1, _d, dtype=torch.float64, generator=_generator)
    _out_changed, _ = _attention.scaled_dot_product_attention(_changed, _changed, _changed, _causal)
    assert_close(_out_changed[:, : _t + 1], _out[:, : _t + 1], atol=1e-12,
                 name=f"outputs up to position {_t} after changing the tokens after it (the future leaked)")
# Property 2: padding changes nothing at the real tokens of a padded batch.
_lengths_t = torch.tensor([4, 2, 6])
with forbid(*_forbidden):
    _pad = padding_mask(_lengths_t, 6)
_x = torch.randn(3, 6, _d, dtype=torch.float64, generator=_generator)
_out, _ = _attention.scaled_dot_product_attention(_x, _x, _x, _pad[:, None, :])
for _b, _n in enumerate(_lengths_t.tolist()):
    _alone, _ = _attention.scaled_dot_product_attention(_x[_b, :_n], _x[_b, :_n], _x[_b, :_n])
    assert_close(_out[_b, :_n], _alone, atol=1e-12, name=f"outputs of sequence {_b} with and without its padding")
### END HIDDEN TESTS
'''

# --- exercise 4: the module ------------------------------------------------------------------

MODULE_TASK = r'''
## Exercise 4: a self-attention module with `W_q`, `W_k`, `W_v` (4 points)

In exercise 1 a token plays three roles with one vector: what it looks for, what it is matched
on, and what it passes on. Learned projections separate the roles: `Q = X W_Q`, `K = X W_K`,
`V = X W_V`, then `softmax(Q K^T / sqrt(d_k)) V`.

Write the `nn.Module` `SelfAttention(d_model, d_k)`:

* `__init__` creates three attributes `W_q`, `W_k`, `W_v`, each an `nn.Linear(d_model, d_k, bias=False)`
  (so `W_q.weight` has shape `(d_k, d_model)`: an `nn.Linear` computes `x @ weight.T`);
* `forward(x, mask=None)` takes `x` `(B, T, d_model)` and an optional boolean mask broadcastable
  to `(B, T, T)`, and returns `(output, weights)`: `output` `(B, T, d_k)` and `weights` `(B, T, T)`,
  the attention of the queries `W_q(x)` to the keys `W_k(x)`, averaging the values `W_v(x)`.

There is no output projection (that comes with multi-head attention in chapter 5), so `d_k` need
not equal `d_model`. In `forward`, call your `scaled_dot_product_attention` from exercise 2 (if
yours does not pass its tests yet, you may call `transformer_lib.scaled_dot_product_attention`,
which has the same signature). You may not use `nn.MultiheadAttention` or `transformer_lib`'s
`MultiHeadAttention`.
'''

MODULE_SOLUTION = r'''
class SelfAttention(nn.Module):
    """Single-head self-attention with learned projections W_q, W_k, W_v (no bias, no output projection)."""

    def __init__(self, d_model: int, d_k: int) -> None:
        super().__init__()
        ### BEGIN SOLUTION
        self.W_q = nn.Linear(d_model, d_k, bias=False)  # queries: what a token looks for
        self.W_k = nn.Linear(d_model, d_k, bias=False)  # keys: what it is matched on
        self.W_v = nn.Linear(d_model, d_k, bias=False)  # values: what it passes on
        ### END SOLUTION

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """x (B, T, d_model), mask broadcastable to (B, T, T) -> (output (B, T, d_k), weights (B, T, T))."""
        ### BEGIN SOLUTION
        queries, keys, values = self.W_q(x), self.W_k(x), self.W_v(x)
        return scaled_dot_product_attention(queries, keys, values, mask)
        ### END SOLUTION
'''

MODULE_TESTS = r'''
torch.manual_seed(0)
attention = SelfAttention(d_model=6, d_k=4)
print(attention)
for name in ("W_q", "W_k", "W_v"):
    layer = getattr(attention, name)
    assert isinstance(layer, nn.Linear), f"SelfAttention.{name} should be an nn.Linear, got {type(layer).__name__}"
    assert_shape(layer.weight, (4, 6), name=f"SelfAttention(6, 4).{name}.weight")
    assert layer.bias is None, f"SelfAttention.{name} should have no bias (bias=False)"
x = torch.randn(2, 5, 6)
output, weights = attention(x)
assert_shape(output, (2, 5, 4), name="output of SelfAttention(6, 4) on x (2, 5, 6)")
assert_shape(weights, (2, 5, 5), name="weights of SelfAttention(6, 4) on x (2, 5, 6)")
# with identity projections (d_k = d_model) the module is exercise 1 with the 1/sqrt(d_k) scaling
plain = SelfAttention(d_model=3, d_k=3)
for layer in (plain.W_q, plain.W_k, plain.W_v):
    layer.weight.data.copy_(torch.eye(3))  # .data: change the values without recording a gradient
x = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
output, weights = plain(x)
e_half = math.exp(1 / math.sqrt(3))
assert_close(weights[0, 0], torch.tensor([e_half, 1.0]) / (e_half + 1), name="weights[0, 0] with identity projections")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: no scaling, or scaling by sqrt(d_model) instead
# of sqrt(d_k) (here d_model != d_k); W_q and W_k swapped (the weights come out transposed);
# weights returned transposed; W_v applied to the queries' output or left out; bias=True;
# projections of the wrong size (d_model -> d_model); the mask ignored; projections stored in a
# list (not registered, so .double() and the optimiser miss them) or as bare Parameters;
# calling nn.MultiheadAttention or transformer_lib's MultiHeadAttention. The result is also
# compared with torch.nn.MultiheadAttention (one head, identity output projection).
from coursetools.checks import assert_close, forbid, verify_untampered
verify_untampered()
import transformer_lib.attention as _attention
import transformer_lib.multihead as _multihead

_generator = torch.Generator().manual_seed(1706)
for _B, _T, _d_model, _d_k, _masked in [(2, 5, 8, 3, False), (3, 4, 6, 10, True), (1, 7, 12, 4, True), (2, 6, 5, 5, False)]:
    torch.manual_seed(_d_model)
    _module = SelfAttention(_d_model, _d_k).double()
    _n_params = sum(p.numel() for p in _module.parameters())
    assert _n_params == 3 * _d_model * _d_k, (
        f"SelfAttention({_d_model}, {_d_k}) should have 3 * d_model * d_k = {3 * _d_model * _d_k} parameters, "
        f"has {_n_params}")
    _W = [torch.randn(_d_k, _d_model, dtype=torch.float64, generator=_generator) / _d_model ** 0.5 for _ in range(3)]
    for _layer, _weight in zip((_module.W_q, _module.W_k, _module.W_v), _W):
        _layer.weight.data.copy_(_weight)
    _x = torch.randn(_B, _T, _d_model, dtype=torch.float64, generator=_generator) * 2
    _mask = None
    if _masked:
        _mask = torch.ones(_T, _T, dtype=torch.bool).tril() & (torch.rand(_B, 1, _T, generator=_generator) < 0.8)
        _mask[:, :, 0] = True  # every query sees at least the first token
    _expected_out, _expected_w = _attention.scaled_dot_product_attention(_x @ _W[0].T, _x @ _W[1].T, _x @ _W[2].T, _mask)
    with forbid(_multihead.MultiHeadAttention, nn.MultiheadAttention, F.multi_head_attention_forward):
        _out, _w = _module(_x.clone(), None if _mask is None else _mask.clone())
    _what = f"SelfAttention({_d_model}, {_d_k}) on x {(_B, _T, _d_model)}" + (" with a mask" if _masked else "")
    assert_close(_w, _expected_w, atol=1e-10, name=f"weights of {_what}")
    assert_close(_out, _expected_out, atol=1e-10, name=f"output of {_what}")
    # gradients reach the three projections
    _out.pow(2).sum().backward()
    for _name in ("W_q", "W_k", "W_v"):
        _grad = getattr(_module, _name).weight.grad
        assert _grad is not None and bool(_grad.abs().sum() > 0), f"no gradient reached SelfAttention.{_name}"
    if _d_k == _d_model and not _masked:
        # PyTorch's own: one head, the same projections stacked, an identity output projection
        _torch_mha = nn.MultiheadAttention(_d_model, 1, bias=False, batch_first=True).double()
        _torch_mha.in_proj_weight.data.copy_(torch.cat(_W))
        _torch_mha.out_proj.weight.data.copy_(torch.eye(_d_model, dtype=torch.float64))
        _torch_out, _torch_w = _torch_mha(_x, _x, _x)
        assert_close(_out, _torch_out, atol=1e-10, name=f"output of {_what} compared with nn.MultiheadAttention")
        assert_close(_w, _torch_w, atol=1e-10, name=f"weights of {_what} compared with nn.MultiheadAttention")
### END HIDDEN TESTS
'''

# --- free response ---------------------------------------------------------------------------

QUESTION = r'''
## Exercise 5: why `1/sqrt(d_k)` (3 points, graded by hand)

Suppose the entries of a query `q` and of a key `k` are independent, with mean 0 and variance 1.
Answer in a few sentences, in the cell below:

1. What are the mean and the variance of the score `q . k` as a function of `d_k`, and why?
2. What happens to the softmax weights, and to the gradient that flows back through the softmax,
   when `d_k = 512` and the scores are **not** scaled? Use the chapter's experiment (or the
   ungraded cell after exercise 2) for numbers.
3. Why divide by `sqrt(d_k)` and not by `d_k`?
'''

MODEL_ANSWER = r'''
**Model answer and rubric (1 point per part).**

1. `q . k = sum_i q_i k_i` is a sum of `d_k` independent products; each product has mean
   `E[q_i] E[k_i] = 0` and variance `E[q_i^2] E[k_i^2] = 1`. So the score has mean 0 and variance
   `d_k` (standard deviation `sqrt(d_k)`): about 22.6 for `d_k = 512`.
2. Scores spread over tens of units: the largest score of a row dominates the exponentials, so
   the softmax is nearly one-hot (entropy near 0 instead of near `log S`; one weight near 1).
   The softmax's Jacobian `diag(w) - w w^T` is then close to zero, so the gradient reaching the
   scores, and through them `W_Q` and `W_K`, nearly vanishes: the attention pattern stops learning.
   (Full credit needs saturation and the vanishing gradient, with numbers from the experiment.)
3. Dividing by the standard deviation `sqrt(d_k)` gives scores of variance 1 whatever `d_k`,
   which keeps the softmax in its sensitive range. Dividing by `d_k` would give variance
   `1 / d_k`: for large `d_k` all scores are close to 0 and the weights close to uniform
   (every row an average of all values), and the gradient shrinks again, from the other side.
'''

CLOSING = r'''
## Where this goes next

You have written a whole attention layer: dot products as similarities, the softmax over the
keys, the `1/sqrt(d_k)` that keeps it from saturating, masks applied before the softmax, and
learned projections that give each token a query, a key and a value. In `transformer_lib` the
same pieces are `scaled_dot_product_attention`, `masked_softmax`, `causal_mask` and
`padding_mask` in `transformer_lib.attention`; chapter 5 runs `h` of these attentions side by
side (multi-head attention) and imports them from there.
'''


def build() -> list:
    """The cells of the notebook, in order."""
    return [
        markdown(INTRO),
        instructions("grading", GRADING),
        setup("setup", SETUP),
        instructions("simple_task", SIMPLE_TASK),
        solution("simple_self_attention", SIMPLE_SOLUTION),
        tests("test_simple_self_attention", 2, SIMPLE_TESTS),
        instructions("sdpa_task", SDPA_TASK),
        solution("scaled_dot_product_attention", SDPA_SOLUTION),
        tests("test_scaled_dot_product_attention", 4, SDPA_TESTS),
        code(TRY_SCALING),
        instructions("mask_task", MASK_TASK),
        solution("masks", MASK_SOLUTION),
        tests("test_masks", 3, MASK_TESTS),
        instructions("module_task", MODULE_TASK),
        solution("self_attention_module", MODULE_SOLUTION),
        tests("test_self_attention_module", 4, MODULE_TESTS),
        instructions("scaling_question", QUESTION),
        free_response("scaling_answer", 3, MODEL_ANSWER),
        markdown(CLOSING),
    ]


def main() -> None:
    print(f"wrote {write_chapter(ASSIGNMENT, build())}")


if __name__ == "__main__":
    main()
