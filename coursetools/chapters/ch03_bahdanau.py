r'''Chapter 3 exercises: the masked softmax, additive and dot-product attention, hard attention.

``python -m coursetools.chapters.ch03_bahdanau`` writes ``solutions/ch03_bahdanau/ch03_bahdanau.ipynb``,
the nbgrader source (solutions and hidden tests); ``python -m coursetools.release ch03_bahdanau``
derives the student notebook. Every hidden block starts with instructor notes listing the mistakes
it is there to catch.
'''

from __future__ import annotations


from coursetools.authoring import (code, free_response, instructions, markdown, setup, solution, tests,
                                   write_chapter)

ASSIGNMENT = "ch03_bahdanau"

INTRO = r'''
# Chapter 3 exercises: attention as a soft look-up

You will write, from scratch, the pieces of the attention that Bahdanau, Cho and Bengio added to
the RNN encoder-decoder: a softmax that ignores padded keys, the additive alignment model that
scores a query against every key, the dot-product score for contrast, and hard attention, which
picks one key at random instead of averaging them all.

**Learning objectives.** After these exercises you can

1. turn scores into attention weights with a softmax over the keys that gives padded keys weight 0,
   and handle a query that may see no key at all;
2. compute additive attention `e = w_v^T tanh(W_q q + W_k k)`, its weights and its context, for a
   batch of queries, with the shapes of every weight matrix;
3. compute unscaled dot-product attention with the same interface, and say what it saves;
4. sample hard attention (one location per query, drawn from the weights), and explain why it
   cannot be trained by backpropagation as it stands.

The chapter page *Attention: Bahdanau* explains all of this; keep it open.
'''

GRADING = r'''
## How grading works

* In each answer cell, replace the lines `# YOUR CODE HERE` and `raise NotImplementedError()`
  with your code; keep the function names, signatures and docstrings.
* After each answer, run the test cell below it. The **visible tests** check a small worked
  example and tell you what is wrong. When you submit, **hidden tests** in the same cells check
  many more cases (other shapes, float64, masks, gradients), compare your answers with the
  library's reference and with PyTorch, and give the cell's points only if everything passes.
* Exercises 2 and 3 call your `masked_softmax` from exercise 1: make exercise 1 pass first.
* Each exercise says what you may not use: calling a ready-made implementation of the very thing
  you are asked to write earns no points.
* Do not edit or delete the locked cells, and do not reassign functions of `torch`, Python's
  builtins or `transformer_lib`: the tests detect it and the cell scores zero.
* Before submitting: *Kernel → Restart & Run All*, and check that every test cell runs without an
  error. Each cell must finish within 30 seconds (the solutions take well under one second).

| exercise | points |
|---|---|
| 1. The masked softmax | 3 |
| 2. Additive (Bahdanau) attention | 4 |
| 3. Dot-product attention, unscaled | 3 |
| 4. Hard attention: sampling one location | 3 |
| 5. Question: soft or hard attention (graded by hand) | 3 |
| **total** | **16** |
'''

SETUP = r'''
import math
import warnings

import torch
import torch.nn.functional as F

from coursetools.checks import assert_close, assert_equal, assert_shape, forbid, verify_untampered

warnings.filterwarnings("ignore")  # a warning printed by torch must not cost points
torch.manual_seed(0)
torch.set_printoptions(precision=4, sci_mode=False)
'''

TRY_LOOKUP = r'''
# Not graded: a key-value store looked up three ways. Keys are vectors, values are numbers.
keys = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7], [-1.0, 0.0]])   # S = 4 keys of size 2
values = torch.tensor([10.0, 20.0, 30.0, 40.0])
query = torch.tensor([0.9, 0.5])
similarity = keys @ query                                                  # one score per key
print("exact match:  ", [v.item() for k, v in zip(keys, values) if torch.equal(k, query)], "(no key equals the query)")
print("nearest key:  ", values[similarity.argmax()].item())
for sharpness in (1.0, 5.0, 50.0):
    weights = torch.softmax(sharpness * similarity, dim=0)
    print(f"soft, x{sharpness:<4}: weights {weights.numpy().round(3)} -> value {(weights @ values).item():.2f}")
'''

# --- exercise 1: the masked softmax ----------------------------------------------------------

SOFTMAX_TASK = r'''
## Exercise 1: the masked softmax (3 points)

Attention turns one score per key into weights that are non-negative and sum to one. In a padded
batch some keys are padding: they must get weight **exactly 0**, and the real keys must share all
the weight among themselves.

Write `masked_softmax(scores, mask=None)`:

* `scores` is a float tensor of shape `(..., S)`: any leading dimensions, then one score per key.
  The softmax runs over the **last axis** (the keys).
* `mask` is `None` (no masking: a plain softmax) or a **boolean** tensor that broadcasts to the
  shape of `scores`, for example `(B, 1, S)` for scores `(B, T, S)`. **True means "keep"** (may
  attend); a False entry gets weight exactly 0, and the other entries of its row still sum to one.
  Apply the mask to the scores **before** the softmax, with `-inf` (or a very large negative
  number): replacing a score by 0 is not the same as removing it.
* A row whose entries are all masked has no key to attend to: its weights must be **all zeros,
  never NaN** (a softmax of a row of `-inf` is `0 / 0`).
* The result has the shape and dtype of `scores`; `scores` and `mask` must not be changed in place.
  It must also work for very large scores, such as 1000 (`torch.softmax` is safe; if you write
  `exp` yourself, subtract the row's maximum first).

You may use `torch.softmax`, `masked_fill`, `torch.where`. You may not use `transformer_lib`'s
`masked_softmax` or `scaled_dot_product_attention`.
'''

SOFTMAX_SOLUTION = r'''
def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Softmax over the last axis of scores (..., S); False entries of mask get weight 0.

    Args:
        scores: float tensor (..., S).
        mask: None, or a boolean tensor broadcastable to scores; True = keep.

    Returns:
        weights of the shape and dtype of scores; each row sums to one, or is all zeros when
        its whole row is masked.
    """
    ### BEGIN SOLUTION
    if mask is None:
        return scores.softmax(dim=-1)
    keep = mask.expand_as(scores)
    blocked = torch.where(keep, scores, torch.full_like(scores, -math.inf))
    row_has_key = keep.any(dim=-1, keepdim=True)
    safe = torch.where(row_has_key, blocked, torch.zeros_like(blocked))  # no row of only -inf
    return torch.where(keep, safe.softmax(dim=-1), torch.zeros_like(scores))
    ### END SOLUTION
'''

SOFTMAX_TESTS = r'''
scores = torch.tensor([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5], [4.0, 0.0, 4.0]])
mask = torch.tensor([[True, True, False], [False, False, False], [True, True, True]])
weights = masked_softmax(scores, mask)
print("masked_softmax(scores, mask) =\n", weights)
assert_shape(weights, (3, 3), name="masked_softmax(scores (3, 3), mask (3, 3))")
e = math.e
assert_close(weights[0], torch.tensor([1 / (1 + e), e / (1 + e), 0.0]),
             name="row 0 (key 2 masked: the other two share the weight, softmax of (1, 2))")
assert_close(weights[1], torch.zeros(3), name="row 1 (every key masked: all zeros, no NaN)")
assert_close(weights[2], torch.tensor([e**4, 1.0, e**4]) / (2 * e**4 + 1), name="row 2 (no key masked)")
assert_close(masked_softmax(scores), torch.softmax(scores, dim=-1), name="masked_softmax(scores) without a mask")
# a padding mask (B, 1, S) broadcast over the T = 2 queries of each batch element
padded = masked_softmax(torch.zeros(2, 2, 4), torch.tensor([[[True, True, True, False]], [[True, False, False, False]]]))
assert_close(padded[0], torch.tensor([[1 / 3, 1 / 3, 1 / 3, 0.0]] * 2), name="weights of batch element 0 (3 real keys)")
assert_close(padded[1], torch.tensor([[1.0, 0.0, 0.0, 0.0]] * 2), name="weights of batch element 1 (1 real key)")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: softmax over the wrong axis (dim=0, dim=-2 or
# dim=1 on 3-D scores); masked scores replaced by 0 instead of -inf (weight leaks onto padding);
# mask polarity inverted (masked_fill(mask, ...)); weights zeroed after the softmax without
# renormalising (rows no longer sum to one); a fully masked row left as NaN, or made uniform by a
# -1e9 fill; a naive exp without subtracting the maximum (inf/NaN for large scores); the mask not
# broadcast ((B, 1, S) padding masks); float64 turned into float32; scores changed in place;
# calling transformer_lib's masked_softmax.
from coursetools.checks import assert_close, assert_equal, forbid, verify_untampered
verify_untampered()
import transformer_lib.attention as _attention

_generator = torch.Generator().manual_seed(2015)
_cases = [((5, 7), (5, 7)), ((2, 4, 6), (2, 1, 6)), ((2, 4, 6), (2, 4, 6)), ((3, 5, 5), (3, 5, 5)),
          ((2, 3, 4, 9), (2, 1, 1, 9)), ((2, 3, 4, 9), (4, 9)), ((6,), (6,)), ((1, 1), (1, 1)), ((4, 3), None)]
for _shape, _mask_shape in _cases:
    for _scale, _dtype in ((1.0, torch.float64), (3.0, torch.float64), (1000.0, torch.float32)):
        _scores = _scale * torch.randn(*_shape, dtype=_dtype, generator=_generator)
        _mask = None if _mask_shape is None else torch.rand(_mask_shape, generator=_generator) < 0.6
        if _mask is not None:
            _mask.view(-1, _mask_shape[-1])[0] = False                  # one row (or broadcast row) sees nothing
            if _mask.numel() > _mask_shape[-1]:
                _mask.view(-1, _mask_shape[-1])[-1] = True              # and one sees everything
        _expected = _attention.masked_softmax(_scores, _mask)
        _scores_in = _scores.clone()
        _mask_in = None if _mask is None else _mask.clone()
        with forbid(_attention.masked_softmax, _attention.scaled_dot_product_attention):
            _weights = masked_softmax(_scores_in, _mask_in)
        _what = f"masked_softmax(scores {_shape} x {_scale:g}, {_dtype}, mask {_mask_shape})"
        assert_equal(_weights.dtype, _dtype, name=f"the dtype of {_what}")
        assert_close(_weights, _expected, atol=1e-9 if _dtype == torch.float64 else 1e-6, name=_what)
        if _mask is not None:
            _blocked = ~_mask.expand(_shape)
            assert bool((_weights[_blocked] == 0).all()), f"{_what}: a masked key got a non-zero weight"
            assert torch.equal(_mask_in, _mask), "masked_softmax must not change the mask in place"
        assert torch.equal(_scores_in, _scores), "masked_softmax must not change the scores in place"
# a masked key with a huge score still gets nothing, and the gradient flows to the kept scores
_scores = torch.tensor([[2.0, 50.0, -1.0], [0.0, 1.0, 2.0]], dtype=torch.float64, requires_grad=True)
_mask = torch.tensor([[True, False, True], [False, False, False]])
with forbid(_attention.masked_softmax):
    _weights = masked_softmax(_scores, _mask)
assert_close(_weights.detach(), torch.tensor([[1 / (1 + math.exp(-3)), 0.0, math.exp(-3) / (1 + math.exp(-3))], [0, 0, 0]],
                                             dtype=torch.float64), name="masked_softmax with a huge masked score")
assert _weights.requires_grad, "the weights must stay connected to the scores (no .detach())"
(_gradient,) = torch.autograd.grad((_weights * torch.tensor([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])).sum(), _scores)
assert not bool(torch.isnan(_gradient).any()), "the gradient of masked_softmax contains NaN (a fully masked row?)"
_s = _scores.detach().clone().requires_grad_(True)
(_expected_gradient,) = torch.autograd.grad((_attention.masked_softmax(_s, _mask) * torch.tensor([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])).sum(), _s)
assert_close(_gradient, _expected_gradient, atol=1e-9, name="the gradient of masked_softmax with respect to the scores")
### END HIDDEN TESTS
'''

# --- exercise 2: additive attention ----------------------------------------------------------

ADDITIVE_TASK = r'''
## Exercise 2: additive (Bahdanau) attention (4 points)

Bahdanau's alignment model scores a query `q` (a decoder state) against a key `k` (an encoder
state) with a one-hidden-layer network:

    e(q, k) = w_v · tanh(q W_q + k W_k)

then turns the scores of all `S` keys into weights with a softmax over the keys, and returns the
weighted average of the **values**, the context. Write
`additive_attention(query, keys, values, W_q, W_k, w_v, mask=None) -> (context, weights)` for a
batch of `T` queries at once:

| argument | shape | meaning |
|---|---|---|
| `query` | `(B, T, d_q)` | `T` queries per batch element (for the RNN decoder, `T = 1`: the state `s_{i-1}`) |
| `keys` | `(B, S, d_k)` | `S` keys per batch element (the encoder states `h_j`) |
| `values` | `(B, S, d_v)` | one value per key (in Bahdanau's model the keys again; here they differ) |
| `W_q` | `(d_q, d_a)` | projects a query to the attention's hidden size `d_a` (rows times matrix: `q W_q`) |
| `W_k` | `(d_k, d_a)` | projects a key to the same size |
| `w_v` | `(d_a,)` | turns the `tanh` features into one score |
| `mask` | `None` or boolean, broadcastable to `(B, T, S)` | True = may attend; `(B, 1, S)` for padded keys |

Return `weights` of shape `(B, T, S)` with `weights[b, t, s]` = softmax over `s` of
`e(query[b, t], keys[b, s])`, masked with **your `masked_softmax`** from exercise 1, and
`context = weights @ values` of shape `(B, T, d_v)`. Project the queries and the keys once each
(not once per pair), then combine every query with every key by broadcasting:
`(B, T, 1, d_a) + (B, 1, S, d_a) -> (B, T, S, d_a)`. Gradients must flow to all inputs.

`transformer_lib.AdditiveAttention` computes the same thing as a module; its `nn.Linear` layers
store their weights the other way round (`query_proj.weight` is `W_q` transposed,
`score_proj.weight` is `w_v` as a `(1, d_a)` row). You may not use it, nor `transformer_lib`'s
`masked_softmax` or `scaled_dot_product_attention`.
'''

ADDITIVE_SOLUTION = r'''
def additive_attention(query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, W_q: torch.Tensor,
                       W_k: torch.Tensor, w_v: torch.Tensor,
                       mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Additive attention: scores w_v . tanh(q W_q + k W_k), softmax over the keys, average of the values.

    Args:
        query: (B, T, d_q); keys: (B, S, d_k); values: (B, S, d_v).
        W_q: (d_q, d_a); W_k: (d_k, d_a); w_v: (d_a,).
        mask: None or boolean broadcastable to (B, T, S); True = may attend.

    Returns:
        (context, weights): context (B, T, d_v); weights (B, T, S).
    """
    ### BEGIN SOLUTION
    projected_queries = torch.matmul(query, W_q)              # (B, T, d_a)
    projected_keys = torch.matmul(keys, W_k)                  # (B, S, d_a)
    hidden = torch.tanh(projected_queries[:, :, None, :] + projected_keys[:, None, :, :])  # (B, T, S, d_a)
    alignment = torch.einsum("btsa,a->bts", hidden, w_v)      # (B, T, S)
    attention = masked_softmax(alignment, mask)
    return torch.bmm(attention, values), attention
    ### END SOLUTION
'''

ADDITIVE_TESTS = r'''
# a worked example: B = 1, T = 1, S = 2, d_q = d_k = d_a = 2, W_q = W_k = identity, w_v = (1, 1)
query = torch.tensor([[[0.0, 0.0]]])
keys = torch.tensor([[[1.0, 0.0], [0.0, -1.0]]])
values = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]])                      # d_v = 3
W_q, W_k, w_v = torch.eye(2), torch.eye(2), torch.ones(2)
context, weights = additive_attention(query, keys, values, W_q, W_k, w_v)
print("weights =", weights, "\ncontext =", context)
assert_shape(weights, (1, 1, 2), name="weights for query (1, 1, 2), keys (1, 2, 2)")
assert_shape(context, (1, 1, 3), name="context for values (1, 2, 3)")
# scores: tanh(0 + 1) + tanh(0 + 0) = tanh(1) for key 0; tanh(0) + tanh(-1) = -tanh(1) for key 1
t = math.tanh(1.0)
expected = torch.tensor([math.exp(t), math.exp(-t)]) / (math.exp(t) + math.exp(-t))
assert_close(weights[0, 0], expected, name="weights[0, 0] (softmax of (tanh 1, -tanh 1): is the tanh there?)")
assert_close(context[0, 0], torch.tensor([expected[0], 0.0, expected[1]]), name="context (the weighted values, not keys)")
# key 1 masked as padding: all the weight goes to key 0
context, weights = additive_attention(query, keys, values, W_q, W_k, w_v, mask=torch.tensor([[[True, False]]]))
assert_close(weights, torch.tensor([[[1.0, 0.0]]]), name="weights with key 1 masked")
assert_close(context, values[:, :1], name="context with key 1 masked")
# shapes with T != S and d_a != d_q, d_k
context, weights = additive_attention(torch.randn(2, 3, 4), torch.randn(2, 5, 6), torch.randn(2, 5, 7),
                                      torch.randn(4, 8), torch.randn(6, 8), torch.randn(8))
assert_shape(weights, (2, 3, 5), name="weights for B=2, T=3, S=5")
assert_shape(context, (2, 3, 7), name="context for B=2, T=3, S=5, d_v=7")
assert_close(weights.sum(-1), torch.ones(2, 3), name="weights.sum(-1) (each query's weights sum to one)")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: tanh missing (scores linear in q and k);
# softmax over the queries (T) instead of the keys (S), visible with T != S; weights that do not
# sum to one (sigmoid or raw scores); the context computed from the keys instead of the values
# (d_v != d_k here); W_q and W_k used transposed or swapped (d_q != d_k != d_a); w_v applied
# before the tanh; the mask ignored or inverted (padding changes the result); a loop that mixes
# batch elements; the result detached (no gradient to W_q, W_k, w_v); calling
# transformer_lib's AdditiveAttention or masked_softmax.
from coursetools.checks import assert_close, forbid, verify_untampered
verify_untampered()
import transformer_lib.attention as _attention

_generator = torch.Generator().manual_seed(1409)  # arXiv 1409.0473


def _reference(q, k, v, W_q, W_k, w_v, mask):
    """The library's module run with these weights as its parameters (nn.Linear stores W transposed)."""
    module = _attention.AdditiveAttention(W_q.shape[0], W_k.shape[0], W_q.shape[1])
    weights = {"query_proj.weight": W_q.T, "key_proj.weight": W_k.T, "score_proj.weight": w_v[None, :]}
    return torch.func.functional_call(module, weights, (q, k, v, mask))


for _B, _T, _S, _d_q, _d_k, _d_v, _d_a, _mask_kind in [(2, 3, 5, 4, 6, 7, 8, None), (3, 1, 6, 5, 5, 2, 3, "padding"),
                                                       (2, 4, 4, 3, 7, 5, 6, "full"), (1, 6, 2, 2, 3, 4, 5, "padding"),
                                                       (4, 2, 7, 8, 4, 3, 16, "full")]:
    _tensors = [torch.randn(*shape, dtype=torch.float64, generator=_generator)
                for shape in ((_B, _T, _d_q), (_B, _S, _d_k), (_B, _S, _d_v), (_d_q, _d_a), (_d_k, _d_a), (_d_a,))]
    if _mask_kind == "padding":
        _lengths = torch.randint(1, _S + 1, (_B,), generator=_generator)
        _lengths[0] = 1
        _mask = (torch.arange(_S) < _lengths[:, None])[:, None, :]          # (B, 1, S)
    elif _mask_kind == "full":
        _mask = torch.rand(_B, _T, _S, generator=_generator) < 0.6
        _mask[0, 0] = False                                                    # a query that sees nothing
    else:
        _mask = None
    _expected_context, _expected_weights = _reference(*_tensors, _mask)
    _inputs = [t.clone().requires_grad_(True) for t in _tensors]
    with forbid(_attention.AdditiveAttention, _attention.masked_softmax, _attention.scaled_dot_product_attention):
        _context, _weights = additive_attention(*_inputs, None if _mask is None else _mask.clone())
    _what = f"B={_B}, T={_T}, S={_S}, d_q={_d_q}, d_k={_d_k}, d_v={_d_v}, d_a={_d_a}, mask {_mask_kind}"
    assert_close(_weights, _expected_weights, atol=1e-10, name=f"weights for {_what}")
    assert_close(_context, _expected_context, atol=1e-10, name=f"context for {_what}")
    assert _context.requires_grad, "the context must stay connected to the inputs (no .detach() / torch.no_grad())"
    _upstream = torch.randn(_context.shape, dtype=torch.float64, generator=_generator)
    _grads = torch.autograd.grad((_context * _upstream).sum(), _inputs)
    _ref_inputs = [t.clone().requires_grad_(True) for t in _tensors]
    _ref_grads = torch.autograd.grad((_reference(*_ref_inputs, _mask)[0] * _upstream).sum(), _ref_inputs)
    for _name, _g, _g_ref in zip(("query", "keys", "values", "W_q", "W_k", "w_v"), _grads, _ref_grads):
        assert_close(_g, _g_ref, atol=1e-9, name=f"the gradient with respect to {_name} for {_what}")

# padding changes nothing: extra keys with arbitrary values, masked out, leave the result as it was
_q, _k, _v = (torch.randn(2, 3, 4, dtype=torch.float64, generator=_generator) for _ in range(3))
_W_q, _W_k, _w_v = (torch.randn(4, 5, dtype=torch.float64, generator=_generator),
                    torch.randn(4, 5, dtype=torch.float64, generator=_generator),
                    torch.randn(5, dtype=torch.float64, generator=_generator))
_k_pad = torch.cat([_k, 100 * torch.randn(2, 2, 4, dtype=torch.float64, generator=_generator)], dim=1)
_v_pad = torch.cat([_v, 100 * torch.randn(2, 2, 4, dtype=torch.float64, generator=_generator)], dim=1)
_keep = torch.tensor([True] * 3 + [False] * 2).expand(2, 1, 5)
with forbid(_attention.AdditiveAttention, _attention.masked_softmax):
    _context, _weights = additive_attention(_q, _k, _v, _W_q, _W_k, _w_v)
    _context_pad, _weights_pad = additive_attention(_q, _k_pad, _v_pad, _W_q, _W_k, _w_v, _keep)
assert_close(_context_pad, _context, atol=1e-10, name="the context with two extra padded keys (padding must change nothing)")
assert_close(_weights_pad[..., :3], _weights, atol=1e-10, name="the weights of the real keys with two padded keys")
assert_close(_weights_pad[..., 3:], torch.zeros(2, 3, 2, dtype=torch.float64), atol=0, name="the weights of the padded keys")
### END HIDDEN TESTS
'''

# --- exercise 3: dot-product attention -------------------------------------------------------

DOT_TASK = r'''
## Exercise 3: dot-product attention, unscaled (3 points)

Luong, Pham and Manning replaced the alignment network by a plain dot product: the score of a
query and a key is `q · k`, with no parameter at all (the queries and keys must then have the same
size `d`). Write `dot_product_attention(query, keys, values, mask=None) -> (context, weights)`:

* `query` `(B, T, d)`, `keys` `(B, S, d)`, `values` `(B, S, d_v)`;
* scores `query keys^T` of shape `(B, T, S)`, **unscaled** (no `1 / sqrt(d)`: chapter 4 measures
  why the Transformer adds it);
* `weights` = **your `masked_softmax`** of the scores over the keys, with `mask` as in exercise 2
  (`None` or boolean broadcastable to `(B, T, S)`, True = may attend); `context = weights @ values`,
  `(B, T, d_v)`. Gradients must flow to all inputs.

One batched matrix product computes all `B x T x S` scores at once. You may not use
`F.scaled_dot_product_attention` or `transformer_lib`'s `scaled_dot_product_attention`,
`masked_softmax` or `AdditiveAttention`.
'''

DOT_SOLUTION = r'''
def dot_product_attention(query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                          mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Unscaled dot-product attention: softmax over the keys of query keys^T, average of the values.

    Args:
        query: (B, T, d); keys: (B, S, d); values: (B, S, d_v).
        mask: None or boolean broadcastable to (B, T, S); True = may attend.

    Returns:
        (context, weights): context (B, T, d_v); weights (B, T, S).
    """
    ### BEGIN SOLUTION
    similarity = torch.einsum("btd,bsd->bts", query, keys)   # (B, T, S), no 1/sqrt(d)
    attention = masked_softmax(similarity, mask)
    return torch.einsum("bts,bsv->btv", attention, values), attention
    ### END SOLUTION
'''

DOT_TESTS = r'''
query = torch.tensor([[[1.0, 0.0, 1.0, 0.0], [0.0, 2.0, 0.0, 0.0]]])            # B = 1, T = 2, d = 4
keys = torch.tensor([[[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0], [2.0, 0.0, 0.0, 0.0]]])  # S = 3
values = torch.tensor([[[1.0, 0.0], [0.0, 1.0], [3.0, 3.0]]])                    # d_v = 2
context, weights = dot_product_attention(query, keys, values)
print("weights =\n", weights, "\ncontext =\n", context)
assert_shape(weights, (1, 2, 3), name="weights for query (1, 2, 4), keys (1, 3, 4)")
assert_shape(context, (1, 2, 2), name="context for values (1, 3, 2)")
# scores = query keys^T: row 0 = (2, 0, 2); row 1 = (2, 0, 0); no scaling
e2 = math.exp(2.0)
assert_close(weights[0, 0], torch.tensor([e2, 1.0, e2]) / (2 * e2 + 1), name="weights[0, 0] (unscaled: softmax of (2, 0, 2))")
assert_close(weights[0, 1], torch.tensor([e2, 1.0, 1.0]) / (e2 + 2), name="weights[0, 1] (softmax of (2, 0, 0))")
assert_close(context, weights @ values, name="context (should be weights @ values)")
context, weights = dot_product_attention(query, keys, values, mask=torch.tensor([[[True, True, False]]]))
assert_close(weights[0, 1], torch.tensor([e2, 1.0, 0.0]) / (e2 + 1), name="weights[0, 1] with key 2 masked")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: scaled by 1/sqrt(d) (or by d) although the
# exercise asks for the unscaled score; softmax over the queries instead of the keys (T != S);
# weights transposed (keys @ query^T gives (B, S, T)); the context computed from the keys instead
# of the values (d_v != d); the mask ignored or inverted; the result detached; calling the
# library's scaled_dot_product_attention, masked_softmax or F.scaled_dot_product_attention.
from coursetools.checks import assert_close, forbid, refuse, verify_untampered
verify_untampered()
import transformer_lib.attention as _attention

_generator = torch.Generator().manual_seed(1508)  # arXiv 1508.04025
_fused = F.scaled_dot_product_attention


for _B, _T, _S, _d, _d_v, _mask_kind in [(2, 3, 5, 4, 7, None), (3, 4, 6, 8, 2, "padding"),
                                          (2, 5, 5, 3, 6, "full"), (1, 1, 4, 16, 3, None)]:
    _q, _k, _v = (torch.randn(_B, length, size, dtype=torch.float64, generator=_generator)
                  for length, size in ((_T, _d), (_S, _d), (_S, _d_v)))
    if _mask_kind == "padding":
        _mask = (torch.arange(_S) < torch.randint(1, _S + 1, (_B,), generator=_generator)[:, None])[:, None, :]
    elif _mask_kind == "full":
        _mask = torch.rand(_B, _T, _S, generator=_generator) < 0.6
        _mask[:, :, 0] = True                                                 # every query sees a key
    else:
        _mask = None
    # the library's scaled attention with queries multiplied by sqrt(d) is the unscaled one
    _expected_context, _expected_weights = _attention.scaled_dot_product_attention(_q * math.sqrt(_d), _k, _v, _mask)
    _torch_context = _fused(_q, _k, _v, attn_mask=_mask, scale=1.0)
    assert_close(_expected_context, _torch_context, atol=1e-10)  # the reference agrees with PyTorch
    _inputs = [t.clone().requires_grad_(True) for t in (_q, _k, _v)]
    with refuse(F, "scaled_dot_product_attention", "this exercise asks you to compute the attention yourself: "
                "your solution called torch.nn.functional.scaled_dot_product_attention"), \
            forbid(_attention.scaled_dot_product_attention, _attention.masked_softmax, _attention.AdditiveAttention):
        _context, _weights = dot_product_attention(*_inputs, None if _mask is None else _mask.clone())
    _what = f"B={_B}, T={_T}, S={_S}, d={_d}, d_v={_d_v}, mask {_mask_kind}"
    assert_close(_weights, _expected_weights, atol=1e-10, name=f"weights for {_what}")
    assert_close(_context, _torch_context, atol=1e-10, name=f"context (compared with PyTorch, scale=1) for {_what}")
    assert _context.requires_grad, "the context must stay connected to the inputs (no .detach() / torch.no_grad())"
    _upstream = torch.randn(_context.shape, dtype=torch.float64, generator=_generator)
    _grads = torch.autograd.grad((_context * _upstream).sum(), _inputs)
    _ref_inputs = [t.clone().requires_grad_(True) for t in (_q, _k, _v)]
    _ref_grads = torch.autograd.grad((_fused(*_ref_inputs, attn_mask=_mask, scale=1.0) * _upstream).sum(), _ref_inputs)
    for _name, _g, _g_ref in zip(("query", "keys", "values"), _grads, _ref_grads):
        assert_close(_g, _g_ref, atol=1e-9, name=f"the gradient with respect to {_name} for {_what}")
### END HIDDEN TESTS
'''

# --- exercise 4: hard attention ---------------------------------------------------------------

HARD_TASK = r'''
## Exercise 4: hard attention: sampling one location (3 points)

Soft attention reads a weighted average of **all** the values. *Hard* attention (Xu et al.,
*Show, Attend and Tell*) reads **one** value: for each query it draws one location `s` at random,
with probability `weights[..., s]`, and returns that value alone. Write the sampling step,
`sample_hard_attention(weights, generator) -> one_hot`:

* `weights` has shape `(..., S)` (for example `(B, T, S)`); every row is non-negative and sums to
  one (masked keys have weight 0 and must never be drawn);
* return a tensor `one_hot` of **the same shape and dtype** as `weights`, with exactly one `1` in
  every row and `0` elsewhere: the `1` is at a location drawn from that row's weights, independently
  for every row (two rows with the same weights may pick different locations). Then
  `one_hot @ values` is the hard context;
* all randomness must come from `generator` (a `torch.Generator`): pass it to the sampling
  function (`torch.multinomial(..., generator=generator)`, or `torch.rand(..., generator=generator)`
  with a cumulative sum), so that the same seed always gives the same draws.

Taking the `argmax` of the weights is **not** sampling: it always picks the same location, and
the tests check the frequencies of many draws against the weights. Flatten the leading dimensions
to `(N, S)` first if that helps (`reshape`). You may not use anything from `transformer_lib`.
'''

HARD_SOLUTION = r'''
def sample_hard_attention(weights: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One location per row of weights (..., S), drawn with probability weights[..., s]; one-hot, same shape and dtype."""
    ### BEGIN SOLUTION
    n_keys = weights.shape[-1]
    rows = weights.detach().reshape(-1, n_keys)
    thresholds = torch.rand(rows.shape[0], 1, generator=generator, dtype=rows.dtype)
    cumulative = rows.cumsum(dim=-1)
    cumulative = cumulative / cumulative[:, -1:]                        # guard against rounding
    chosen = (cumulative <= thresholds).sum(dim=-1).clamp(max=n_keys - 1)  # first s with cumsum > u
    picked = torch.zeros_like(rows)
    picked[torch.arange(rows.shape[0]), chosen] = 1.0
    return picked.reshape(weights.shape)
    ### END SOLUTION
'''

HARD_TESTS = r'''
weights = torch.tensor([[0.7, 0.2, 0.1, 0.0], [0.0, 0.0, 1.0, 0.0], [0.25, 0.25, 0.25, 0.25]])
one_hot = sample_hard_attention(weights, torch.Generator().manual_seed(0))
print("one draw per row:\n", one_hot)
assert_shape(one_hot, (3, 4), name="sample_hard_attention(weights (3, 4), generator)")
assert_equal(one_hot.dtype, weights.dtype, name="the dtype of the sample")
assert_equal(one_hot.sum(dim=-1), torch.ones(3), name="one_hot.sum(-1) (exactly one 1 per row)")
assert_equal(((one_hot == 0) | (one_hot == 1)).all().item(), True, name="every entry is 0 or 1")
assert_equal(one_hot[1], torch.tensor([0.0, 0.0, 1.0, 0.0]), name="row 1 (all the weight on location 2)")
# many draws of row 0: the frequencies follow the weights (an argmax would pick location 0 every time)
draws = sample_hard_attention(weights[0].expand(4000, 4), torch.Generator().manual_seed(1))
frequencies = draws.mean(dim=0)
print("frequencies over 4000 draws of row 0:", frequencies)
assert_close(frequencies, weights[0], atol=0.04, name="the frequencies of 4000 draws (are you sampling, not taking the argmax?)")
same = sample_hard_attention(weights, torch.Generator().manual_seed(5))
again = sample_hard_attention(weights, torch.Generator().manual_seed(5))
assert_equal(again, same, name="two draws with generators of the same seed (use the generator)")
assert_shape(sample_hard_attention(torch.softmax(torch.randn(2, 3, 5), -1), torch.Generator()), (2, 3, 5),
             name="sample_hard_attention(weights (2, 3, 5), generator)")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: the argmax instead of a sample (the
# frequencies test fails); the global random generator instead of `generator` (the same seed
# gives different draws); one random number shared by all rows (rows not independent); rows mixed
# up by a wrong reshape/transpose of (B, T, S) inputs; a masked (zero-weight) key drawn (an off-by-
# one in an inverse-CDF sampler); a boolean or long result instead of the dtype of the weights;
# several 1s in a row; calling anything from transformer_lib.
from coursetools.checks import assert_close, assert_equal, verify_untampered
verify_untampered()

# 1. the frequencies of many draws match the weights, within 5 standard errors
_probabilities = torch.tensor([0.45, 0.3, 0.15, 0.0, 0.1], dtype=torch.float64)
_n = 40_000
torch.manual_seed(1123)
_draws = sample_hard_attention(_probabilities.expand(80, 500, 5).clone(), torch.Generator().manual_seed(11))
assert_equal(tuple(_draws.shape), (80, 500, 5), name="the shape of the sample for weights (80, 500, 5)")
assert_equal(_draws.dtype, torch.float64, name="the dtype of the sample for float64 weights")
assert_equal(bool(((_draws == 0) | (_draws == 1)).all()), True, name="every entry of the sample is 0 or 1")
assert_equal(_draws.sum(-1), torch.ones(80, 500, dtype=torch.float64), name="the row sums of the sample (one 1 per row)")
_frequencies = _draws.reshape(-1, 5).mean(0)
_tolerance = 5 * (_probabilities * (1 - _probabilities) / _n).sqrt() + 1e-12
_off = (_frequencies - _probabilities).abs() > _tolerance
assert not bool(_off.any()), (
    f"over {_n} draws the locations were picked with frequencies {_frequencies.tolist()}, but the weights are "
    f"{_probabilities.tolist()}: draw each location with the probability of its weight (not the argmax)")
assert_equal(float(_frequencies[3]), 0.0, name="the frequency of a location of weight 0 (masked keys are never drawn)")

# 2. rows are independent, and each uses its own weights (not the first row's, not mixed up)
_uniform = torch.full((20_000, 2, 4), 0.25)
_pairs = sample_hard_attention(_uniform, torch.Generator().manual_seed(3)).argmax(-1)
_agree = float((_pairs[:, 0] == _pairs[:, 1]).double().mean())
assert abs(_agree - 0.25) < 0.02, (
    f"two independent draws from 4 equally likely locations should agree a quarter of the time, yours agree "
    f"{_agree:.2f} of the time: draw each row separately")
_generator = torch.Generator().manual_seed(7)
_targets = torch.randint(0, 6, (3, 4, 5), generator=_generator)
_deterministic = F.one_hot(_targets, 6).float()
assert_equal(sample_hard_attention(_deterministic.clone(), torch.Generator().manual_seed(8)), _deterministic,
             name="the sample of one-hot weights (3, 4, 6) (each row must use its own weights)")
_two = torch.tensor([[0.9, 0.1], [0.1, 0.9]]).repeat(10_000, 1).reshape(2, 10_000, 2)
_two_draws = sample_hard_attention(_two, torch.Generator().manual_seed(9)).reshape(-1, 2, 2).mean(0)
assert_close(_two_draws, torch.tensor([[0.9, 0.1], [0.1, 0.9]]), atol=0.03,
             name="the frequencies of rows with different weights, interleaved")

# 3. all randomness comes from the generator
torch.manual_seed(1001)
_first = sample_hard_attention(_uniform[:200].clone(), torch.Generator().manual_seed(21))
torch.manual_seed(1002)
_second = sample_hard_attention(_uniform[:200].clone(), torch.Generator().manual_seed(21))
assert_equal(_second, _first, name="two samples with generators of the same seed (and different global seeds)")
_third = sample_hard_attention(_uniform[:200].clone(), torch.Generator().manual_seed(22))
assert not torch.equal(_third, _first), "generators with different seeds gave identical draws of 400 rows"
### END HIDDEN TESTS
'''

TRY_HARD = r'''
# Not graded: the average of many hard contexts is the soft context (when your exercises pass).
torch.manual_seed(0)
query, keys, values = torch.randn(1, 1, 4), torch.randn(1, 6, 4), torch.randn(1, 6, 3)
soft_context, weights = dot_product_attention(query, keys, values)
generator = torch.Generator().manual_seed(0)
for n in (1, 10, 100, 10_000):
    hard = sample_hard_attention(weights.expand(n, 1, 6), generator)  # (n, 1, 6) one-hot
    mean_hard_context = (hard @ values).mean(dim=0)                   # (1, 3)
    print(f"mean of {n:6d} hard contexts: {mean_hard_context[0].numpy().round(3)}   soft: {soft_context[0, 0].numpy().round(3)}")
'''

# --- free response ---------------------------------------------------------------------------

QUESTION = r'''
## Exercise 5: soft or hard attention (3 points, graded by hand)

A decoder with **hard** attention reads the value at one location `s` drawn from the weights
(exercise 4); one with **soft** attention reads `sum_s weights[s] values[s]`. The weights come
from scores `e_s` computed by trainable parameters (`W_q`, `W_k`, `w_v`). Answer in a few
sentences, in the cell below:

1. Why can backpropagation not train the scoring parameters through the hard sample, as it
   stands? Say what the derivative of the hard context with respect to a score `e_s` is.
2. The expected hard context equals the soft context (the cell above shows it numerically). Name
   one way hard attention is trained nevertheless, and its main drawback.
3. Give one advantage hard attention has over soft attention, and say why soft attention is the
   one the Transformer uses.
'''

MODEL_ANSWER = r'''
**Model answer and rubric (1 point per part).**

1. The hard context is `values[s]` for a sampled index `s`: a piecewise-constant function of the
   scores. A small change of `e_s` either leaves the drawn index the same (the output does not
   change: derivative 0) or changes it (a jump: no derivative). So the gradient with respect to
   the scores is zero almost everywhere and undefined at the jumps; sampling itself has no
   gradient (autograd stops at `multinomial` / `argmax`), and the loss cannot tell the scorer
   which locations to favour. Soft attention is a smooth function of the scores, so
   `d context / d e_s = weights[s] (values[s] - context)` exists and is informative.
2. Treat the location as a random choice and optimise the expected loss with the score-function
   (REINFORCE, Williams 1992) estimator, `grad E[L] = E[L(s) grad log p(s)]`, as Xu et al. did
   (with a baseline to reduce variance); or a relaxation (Gumbel-softmax, straight-through
   estimator). Drawback: the estimate is noisy (high variance, needs many samples or baselines),
   so training is slower and less stable; relaxations are biased.
3. Hard attention reads one value per query instead of all `S` (cheaper for very many locations,
   such as a large image or memory) and its choice is directly interpretable. Soft attention is
   deterministic, differentiable end to end (plain backpropagation, no variance), and computes all
   weights with a few matrix products that run in parallel on GPUs; that is why the Transformer
   uses it (scaled dot-product soft attention).
'''

CLOSING = r'''
## Where this goes next

You have written attention as a soft look-up: scores of a query against every key, a masked
softmax that gives padding nothing, and the weighted average of the values, with two ways of
scoring (an alignment network, and a plain dot product) and a sampled, hard variant. In
`transformer_lib` the same pieces are `masked_softmax` and `AdditiveAttention`, and
`AttentionSeq2SeqRNN` uses them in every decoder step. Chapter 4 drops the recurrence altogether:
every token of a sequence queries every other one with the dot-product score, scaled by
`1 / sqrt(d_k)`.
'''


def build() -> list:
    """The cells of the notebook, in order."""
    return [
        markdown(INTRO),
        instructions("grading", GRADING),
        setup("setup", SETUP),
        code(TRY_LOOKUP),
        instructions("softmax_task", SOFTMAX_TASK),
        solution("masked_softmax", SOFTMAX_SOLUTION),
        tests("test_masked_softmax", 3, SOFTMAX_TESTS),
        instructions("additive_task", ADDITIVE_TASK),
        solution("additive_attention", ADDITIVE_SOLUTION),
        tests("test_additive_attention", 4, ADDITIVE_TESTS),
        instructions("dot_task", DOT_TASK),
        solution("dot_product_attention", DOT_SOLUTION),
        tests("test_dot_product_attention", 3, DOT_TESTS),
        instructions("hard_task", HARD_TASK),
        solution("sample_hard_attention", HARD_SOLUTION),
        tests("test_sample_hard_attention", 3, HARD_TESTS),
        code(TRY_HARD),
        instructions("hard_question", QUESTION),
        free_response("hard_answer", 3, MODEL_ANSWER),
        markdown(CLOSING),
    ]


def main() -> None:
    print(f"wrote {write_chapter(ASSIGNMENT, build())}")


if __name__ == "__main__":
    main()
