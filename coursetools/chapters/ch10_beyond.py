r'''Chapter 10 exercises: sliding-window masks, one KV-cache decoding step, images as tokens.

``python -m coursetools.chapters.ch10_beyond`` writes ``solutions/ch10_beyond/ch10_beyond.ipynb``,
the nbgrader source (solutions and hidden tests); ``python -m coursetools.release ch10_beyond``
derives the student notebook. Every hidden block starts with instructor notes listing the mistakes
it is there to catch.
'''

from __future__ import annotations


from coursetools.authoring import (free_response, instructions, markdown, setup, solution, tests,
                                   write_chapter)

ASSIGNMENT = "ch10_beyond"

INTRO = r'''
# Chapter 10 exercises: beyond the basic Transformer

You will write three pieces that take the Transformer past its textbook form: a **local
attention mask** that caps what each query may see, **one decoding step with a KV cache**
that gives exactly what full recomputation gives, and the **input of a Vision Transformer**
(an image cut into patches, embedded, with a class token and positions).

**Learning objectives.** After these exercises you can

1. build a causal sliding-window mask and say how many keys each query sees;
2. decode one token with a key/value cache: project only the new token, append its key and
   value, attend over everything cached, and check the result against full causal attention;
3. cut images into patches and put them back together (`patchify` / `unpatchify`);
4. turn an image into the `(B, 1 + N, d_model)` input of a Transformer encoder, and show that
   the linear patch embedding is a strided convolution;
5. estimate the memory of a KV cache and of attention weights for a real model size.

The chapter page *Beyond the basic Transformer* explains all of this; keep it open.
'''

GRADING = r'''
## How grading works

* In each answer cell, replace the lines `# YOUR CODE HERE` and `raise NotImplementedError()`
  with your code; keep the function names, signatures and docstrings.
* After each answer, run the test cell below it. The **visible tests** check a small worked
  example and tell you what is wrong. When you submit, **hidden tests** in the same cells check
  many more cases in float64, compare your answers with `transformer_lib` and with PyTorch's
  own implementations (`F.scaled_dot_product_attention`, `F.unfold`/`F.fold`, `F.conv2d`), and
  give the cell's points only if everything passes.
* Each exercise says what you may not use: calling a ready-made implementation of the very thing
  you are asked to write earns no points.
* Do not edit or delete the locked cells, and do not reassign functions of `torch`, Python's
  builtins or `transformer_lib`: the tests detect it and the cell scores zero.
* Before submitting: *Kernel → Restart & Run All*, and check that every test cell runs without an
  error. Each cell must finish within 30 seconds (the solutions take well under one second).

| exercise | points |
|---|---|
| 1. A sliding-window mask | 3 |
| 2. One decoding step with a KV cache | 4 |
| 3. Patches and back | 3 |
| 4. The input of a Vision Transformer | 3 |
| 5. Question: what the cache and the window cost (graded by hand) | 3 |
| **total** | **16** |
'''

SETUP = r'''
import math
import warnings

import torch
import torch.nn.functional as F

from transformer_lib.attention import causal_mask, scaled_dot_product_attention
from transformer_lib.tokens import patchify as lib_patchify
from coursetools.checks import assert_close, assert_equal, assert_shape, forbid, verify_untampered

warnings.filterwarnings("ignore")  # a warning printed by torch must not cost points
torch.manual_seed(0)
print("causal_mask(4) =\n", causal_mask(4).int())
'''

# --- exercise 1: sliding-window mask ---------------------------------------------------------

WINDOW_TASK = r'''
## Exercise 1: a sliding-window mask (3 points)

Full causal attention lets query `t` see all keys `0..t`, so its cost grows with `T^2`. A
**causal sliding window** of width `w` lets query `t` see only the `w` most recent positions,
itself included: keys `t - w + 1, ..., t` (fewer near the start, where there are not `w` of them).

Write `sliding_window_mask(size, window)` returning a `(size, size)` tensor of dtype
**`torch.bool`** with the course's convention, **True = may attend**:

* `mask[t, s]` is True exactly when `t - window < s <= t`;
* so every query sees at least itself (no row is all False), row `t` has `min(t + 1, window)`
  True entries, and a window `>= size` gives the plain causal mask `causal_mask(size)`;
* raise a `ValueError` if `size < 1` or `window < 1`.

Anything from torch is allowed (`torch.arange` and a comparison, `torch.tril`/`torch.triu`...).
'''

WINDOW_SOLUTION = r'''
def sliding_window_mask(size: int, window: int) -> torch.Tensor:
    """(size, size) boolean mask, True where query t may attend key s: t - window < s <= t."""
    ### BEGIN SOLUTION
    if size < 1 or window < 1:
        raise ValueError(f"need size >= 1 and window >= 1, got size={size}, window={window}")
    steps_back = torch.arange(size)[:, None] - torch.arange(size)[None, :]  # t - s
    return (steps_back >= 0) & (steps_back < window)
    ### END SOLUTION
'''

WINDOW_TESTS = r'''
mask = sliding_window_mask(5, 2)
print("sliding_window_mask(5, 2) =\n", mask.int())
assert_equal(mask.dtype, torch.bool, name="the dtype of sliding_window_mask(5, 2)")
assert_equal(mask, torch.tensor([[1, 0, 0, 0, 0],
                                 [1, 1, 0, 0, 0],
                                 [0, 1, 1, 0, 0],
                                 [0, 0, 1, 1, 0],
                                 [0, 0, 0, 1, 1]], dtype=torch.bool), name="sliding_window_mask(5, 2)")
assert_equal(sliding_window_mask(4, 9), causal_mask(4), name="sliding_window_mask(4, 9) (window >= size: causal)")
assert_equal(sliding_window_mask(3, 1), torch.eye(3, dtype=torch.bool), name="sliding_window_mask(3, 1) (only itself)")
try:
    sliding_window_mask(4, 0)
except ValueError as error:
    print("ValueError, as expected:", error)
else:
    raise AssertionError("sliding_window_mask(4, 0) should raise a ValueError (window < 1)")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: a symmetric band |t - s| < w (sees the future);
# an off-by-one window of w + 1 keys (t - s <= w) or w - 1 keys; the query not seeing itself
# (s < t: row 0 all False, NaN or zero outputs); the anti-causal band (s >= t); polarity inverted
# (True = masked); an int/float mask instead of bool; the band measured from the start (s < w)
# instead of from the query; no ValueError for window 0 or size 0.
from coursetools.checks import assert_close, assert_equal, expect_raises, forbid, verify_untampered
verify_untampered()
import transformer_lib.attention as _attention

_generator = torch.Generator().manual_seed(10)
for _size in (1, 2, 5, 8, 13):
    for _window in (1, 2, 3, 5, 8, 20):
        with forbid(_attention.scaled_dot_product_attention):
            _mask = sliding_window_mask(_size, _window)
        _expected = torch.zeros(_size, _size, dtype=torch.bool)
        for _t in range(_size):
            for _s in range(max(0, _t - _window + 1), _t + 1):
                _expected[_t, _s] = True
        assert_equal(_mask, _expected, name=f"sliding_window_mask({_size}, {_window})")
# In attention: the output at t does not change when a token outside its window changes.
_T, _w = 9, 3
_x = torch.randn(1, _T, 4, dtype=torch.float64, generator=_generator)
_out, _ = _attention.scaled_dot_product_attention(_x, _x, _x, sliding_window_mask(_T, _w))
_x2 = _x.clone()
_x2[0, 2] += 5.0  # position 2 lies in the windows of queries 2, 3, 4 only
_out2, _ = _attention.scaled_dot_product_attention(_x2, _x2, _x2, sliding_window_mask(_T, _w))
_changed = (_out2 - _out).abs().amax(dim=-1)[0] > 1e-12
assert_equal(_changed, torch.tensor([False, False, True, True, True, False, False, False, False]),
             name="which outputs change when token 2 changes (window 3)")
for _size, _window in [(4, 0), (4, -2), (0, 3)]:
    with expect_raises(ValueError, f"sliding_window_mask({_size}, {_window}) should raise a ValueError"):
        sliding_window_mask(_size, _window)
### END HIDDEN TESTS
'''

# --- exercise 2: one decoding step with a KV cache --------------------------------------------

CACHE_TASK = r'''
## Exercise 2: one decoding step with a KV cache (4 points)

A decoder generates one token at a time. With a causal mask, the keys and values of the tokens
already processed never change, so they can be kept in a **cache** and only the new token has to
be projected. Write one step of multi-head self-attention with a cache:

`attention_with_kv_cache(x_t, W_q, W_k, W_v, cache_k, cache_v, num_heads) -> (out_t, cache_k, cache_v)`

* `x_t`: `(B, 1, d_model)`, the new token's vector (at position `S`, after the `S` tokens seen);
* `W_q`, `W_k`, `W_v`: `(d_model, d_model)`, applied on the right: `q = x_t @ W_q` (no bias);
  with `h = num_heads` and `d_k = d_model // h`, head `i` uses the features
  `i * d_k ... (i + 1) * d_k - 1` (split `(B, 1, d_model)` into `(B, h, 1, d_k)`);
* `cache_k`, `cache_v`: `(B, h, S, d_k)`, the keys and values of the `S` earlier tokens, in
  position order; `S` may be 0 (the first step);
* return `out_t`: `(B, 1, d_model)`, the new token's attention output with its `h` heads
  concatenated (no output projection `W_O`), where the new query attends, with the scaling
  `1 / sqrt(d_k)`, to **all `S` cached keys and to its own key**; and the new caches
  `(B, h, S + 1, d_k)`: the old ones with the new key and value **appended at the end**.

Run step by step over a sequence, the outputs must equal full causal self-attention over the
whole sequence. Do not change the input tensors in place. You may use `torch.softmax` or
`F.scaled_dot_product_attention`; you may not use `transformer_lib`'s `KVCache`,
`MultiHeadAttention`, `scaled_dot_product_attention` or `masked_softmax`.
'''

CACHE_SOLUTION = r'''
def attention_with_kv_cache(x_t: torch.Tensor, W_q: torch.Tensor, W_k: torch.Tensor, W_v: torch.Tensor,
                            cache_k: torch.Tensor, cache_v: torch.Tensor,
                            num_heads: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One step of cached multi-head self-attention.

    Args:
        x_t: (B, 1, d_model), the new token.
        W_q, W_k, W_v: (d_model, d_model), used as x_t @ W.
        cache_k, cache_v: (B, h, S, d_k), keys and values of the S earlier tokens (S may be 0).
        num_heads: h; d_k = d_model // h.

    Returns:
        (out_t, cache_k, cache_v): out_t (B, 1, d_model), the heads concatenated; the caches
        (B, h, S + 1, d_k) with the new key and value appended at the end.
    """
    ### BEGIN SOLUTION
    B, _, d_model = x_t.shape
    d_head = d_model // num_heads

    def heads(projected):  # (B, 1, d_model) -> (B, h, 1, d_k)
        return projected.reshape(B, 1, num_heads, d_head).transpose(1, 2)

    q_new = heads(x_t @ W_q)
    k_all = torch.cat([cache_k, heads(x_t @ W_k)], dim=2)   # (B, h, S + 1, d_k)
    v_all = torch.cat([cache_v, heads(x_t @ W_v)], dim=2)
    # the newest query may see every position so far: no mask is needed
    probabilities = torch.softmax(q_new @ k_all.transpose(2, 3) / math.sqrt(d_head), dim=-1)  # (B, h, 1, S + 1)
    mixed = probabilities @ v_all                                                          # (B, h, 1, d_k)
    return mixed.transpose(1, 2).reshape(B, 1, d_model), k_all, v_all
    ### END SOLUTION
'''

CACHE_TESTS = r'''
torch.manual_seed(1)
B, T, d_model, h = 2, 5, 8, 2
d_k = d_model // h
X = torch.randn(B, T, d_model)
W_q, W_k, W_v = (torch.randn(d_model, d_model) / math.sqrt(d_model) for _ in range(3))

# decode step by step, starting from an empty cache (S = 0)
cache_k, cache_v = torch.zeros(B, h, 0, d_k), torch.zeros(B, h, 0, d_k)
outputs = []
for t in range(T):
    out_t, cache_k, cache_v = attention_with_kv_cache(X[:, t:t + 1], W_q, W_k, W_v, cache_k, cache_v, h)
    assert_shape(out_t, (B, 1, d_model), name=f"out_t at step {t}")
    assert_shape(cache_k, (B, h, t + 1, d_k), name=f"cache_k after step {t}")
    assert_shape(cache_v, (B, h, t + 1, d_k), name=f"cache_v after step {t}")
    outputs.append(out_t)
stepwise = torch.cat(outputs, dim=1)                                        # (B, T, d_model)


def split(x):  # (B, T, d_model) -> (B, h, T, d_k)
    return x.reshape(B, T, h, d_k).transpose(1, 2)


# the full recomputation: causal attention over the whole sequence at once
full, _ = scaled_dot_product_attention(split(X @ W_q), split(X @ W_k), split(X @ W_v), causal_mask(T))
full = full.transpose(1, 2).reshape(B, T, d_model)
print("largest difference, step by step vs full:", (stepwise - full).abs().max().item())
assert_close(stepwise[:, 0], full[:, 0], atol=1e-5, name="the output of the first step (S = 0)")
assert_close(stepwise, full, atol=1e-5, name="the step-by-step outputs (vs full causal attention)")
assert_close(cache_k, split(X @ W_k), atol=1e-5, name="cache_k after the last step (every key, in order)")
assert_close(cache_v, split(X @ W_v), atol=1e-5, name="cache_v after the last step (every value, in order)")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: is_causal=True in F.scaled_dot_product_attention
# with one query (its causal mask is aligned top-left: the new token sees only key 0); the new
# token not attending to its own key (only the cache: fails at S = 0); the new key/value put
# first instead of appended (attention is unchanged, the cache order is wrong); the cache not
# grown (only the new key returned); scaling by sqrt(d_model) instead of sqrt(d_k); one head
# instead of num_heads; W applied transposed (W @ x); softmax over the wrong axis; the heads
# merged in the wrong order; the input cache modified in place; calling transformer_lib's
# KVCache, MultiHeadAttention, scaled_dot_product_attention or masked_softmax.
from coursetools.checks import assert_close, assert_equal, forbid, verify_untampered
verify_untampered()
import transformer_lib.attention as _attention
import transformer_lib.multihead as _multihead

_generator = torch.Generator().manual_seed(2019)
_forbidden = (_multihead.KVCache.extend, _multihead.KVCache.__init__, _multihead.MultiHeadAttention,
              _attention.scaled_dot_product_attention, _attention.masked_softmax)
for _B, _T, _d_model, _h, _prefix in [(2, 6, 8, 2, 0), (1, 7, 12, 3, 0), (3, 5, 6, 1, 0), (2, 9, 8, 4, 4),
                                      (1, 4, 5, 5, 1)]:
    _d_k = _d_model // _h
    _X = torch.randn(_B, _T, _d_model, dtype=torch.float64, generator=_generator)
    _Ws = [torch.randn(_d_model, _d_model, dtype=torch.float64, generator=_generator) / _d_model ** 0.5
           for _ in range(3)]

    def _split(x):
        return x.reshape(x.shape[0], x.shape[1], _h, _d_k).transpose(1, 2)

    _Q, _K, _V = (_split(_X @ _W) for _W in _Ws)
    _expected = F.scaled_dot_product_attention(_Q, _K, _V, is_causal=True)  # PyTorch's own, (B, h, T, d_k)
    _expected = _expected.transpose(1, 2).reshape(_B, _T, _d_model)
    # the library's MultiHeadAttention with W_O = identity agrees (in_proj holds W^T)
    _mha = _multihead.MultiHeadAttention(_d_model, _h, bias=False).double()
    with torch.no_grad():
        _mha.in_proj.weight.copy_(torch.cat([_W.T for _W in _Ws]))
        _mha.out_proj.weight.copy_(torch.eye(_d_model, dtype=torch.float64))
    assert_close(_mha(_X, _X, _X, _attention.causal_mask(_T))[0], _expected, atol=1e-10)
    # start from a prefilled cache of the first _prefix tokens (or an empty one)
    _cache_k, _cache_v = _K[:, :, :_prefix].clone(), _V[:, :, :_prefix].clone()
    _outputs = []
    for _t in range(_prefix, _T):
        _x_t = _X[:, _t:_t + 1].clone()
        _old_k, _old_v = _cache_k.clone(), _cache_v.clone()
        _given_k, _given_v = _cache_k, _cache_v
        with forbid(*_forbidden):
            _out, _cache_k, _cache_v = attention_with_kv_cache(_x_t, *[_W.clone() for _W in _Ws],
                                                               _given_k, _given_v, _h)
        _case = f"(B={_B}, d_model={_d_model}, num_heads={_h}) at step t={_t}"
        assert_close(_given_k, _old_k, atol=0, rtol=0, name=f"the cache_k passed in (must not change) {_case}")
        assert_close(_given_v, _old_v, atol=0, rtol=0, name=f"the cache_v passed in (must not change) {_case}")
        assert_close(_cache_k, _K[:, :, :_t + 1], atol=1e-10, name=f"cache_k returned {_case}")
        assert_close(_cache_v, _V[:, :, :_t + 1], atol=1e-10, name=f"cache_v returned {_case}")
        assert_close(_out, _expected[:, _t:_t + 1], atol=1e-10, name=f"out_t {_case}")
        _outputs.append(_out)
    assert_close(torch.cat(_outputs, dim=1), _expected[:, _prefix:], atol=1e-10,
                 name=f"all step-by-step outputs (B={_B}, T={_T}, d_model={_d_model}, num_heads={_h})")
### END HIDDEN TESTS
'''

# --- exercise 3: patchify and unpatchify ------------------------------------------------------

PATCH_TASK = r'''
## Exercise 3: patches and back (3 points)

Chapter 1 cut an image into patches. Here you write it again, as the first half of a pair, and
then its inverse (a model that *generates* images, or a masked autoencoder, predicts patches
and has to put them back together).

* `patchify(images, patch_size)`: `images` `(B, C, H, W)` -> `(B, N, C * p * p)` with `p` the
  patch size and `N = (H // p) * (W // p)`, in the order of `transformer_lib.tokens.patchify`
  (imported above as `lib_patchify`): patch `n = r * (W // p) + c` is the patch in grid row `r`,
  column `c` (row-major), and entry `k * p * p + i * p + j` of its vector is
  `images[b, k, r * p + i, c * p + j]`. Raise a `ValueError` if `p` does not divide both `H` and `W`.
* `unpatchify(patches, patch_size, height, width)`: the inverse, `(B, N, C * p * p)` ->
  `(B, C, height, width)`, so that `unpatchify(patchify(x, p), p, H, W)` equals `x`. The number of
  channels is `C = D // (p * p)` for `D = patches.shape[-1]`. Raise a `ValueError` if `D` is not a
  multiple of `p * p`, if `p` does not divide `height` and `width`, or if `N` is not
  `(height // p) * (width // p)`.

Use `reshape` and `permute`. You may not use `F.unfold`/`F.fold` (`nn.Unfold`/`nn.Fold`) or
`lib_patchify`: the hidden tests compare your answers with them.
'''

PATCH_SOLUTION = r'''
def patchify(images: torch.Tensor, patch_size: int) -> torch.Tensor:
    """images (B, C, H, W) -> patches (B, N, C * p * p), N = (H // p) * (W // p), row-major grid."""
    ### BEGIN SOLUTION
    n_img, channels, rows_px, cols_px = images.shape
    p = patch_size
    if rows_px % p or cols_px % p:
        raise ValueError(f"the patch size p={p} must divide H={rows_px} and W={cols_px}")
    six_axes = images.reshape(n_img, channels, rows_px // p, p, cols_px // p, p)
    return six_axes.permute(0, 2, 4, 1, 3, 5).reshape(n_img, -1, channels * p * p)
    ### END SOLUTION


def unpatchify(patches: torch.Tensor, patch_size: int, height: int, width: int) -> torch.Tensor:
    """patches (B, N, C * p * p) -> images (B, C, height, width); the inverse of patchify."""
    ### BEGIN SOLUTION
    n_img, n_patches, size = patches.shape
    p = patch_size
    if size % (p * p) or height % p or width % p or n_patches != (height // p) * (width // p):
        raise ValueError(f"cannot place {n_patches} patches of size {size} (p={p}) "
                         f"on a {height} x {width} image")
    channels = size // (p * p)
    six_axes = patches.reshape(n_img, height // p, width // p, channels, p, p)   # (B, r, c, C, i, j)
    return six_axes.permute(0, 3, 1, 4, 2, 5).reshape(n_img, channels, height, width)
    ### END SOLUTION
'''

PATCH_TESTS = r'''
image = torch.arange(2 * 4 * 6.0).reshape(1, 2, 4, 6)   # B = 1, C = 2, H = 4, W = 6
patches = patchify(image, 2)
print("patch 0 =", patches[0, 0].tolist(), " patch 1 =", patches[0, 1].tolist())
assert_shape(patches, (1, 6, 8), name="patchify(image (1, 2, 4, 6), 2)")
assert_close(patches[0, 0], torch.tensor([0.0, 1, 6, 7, 24, 25, 30, 31]),
             name="patch 0 (channel 0's 2 x 2 pixels, then channel 1's)")
assert_close(patches[0, 1], torch.tensor([2.0, 3, 8, 9, 26, 27, 32, 33]), name="patch 1 (grid row 0, column 1)")
assert_close(patches[0, 3], torch.tensor([12.0, 13, 18, 19, 36, 37, 42, 43]), name="patch 3 (grid row 1, column 0)")
back = unpatchify(patches, 2, 4, 6)
assert_shape(back, (1, 2, 4, 6), name="unpatchify(patches, 2, 4, 6)")
assert_close(back, image, name="unpatchify(patchify(image, 2), 2, 4, 6)")
for args in [(patches, 2, 4, 8), (patches, 3, 4, 6), (patches[:, :, :6], 2, 4, 6)]:
    try:
        unpatchify(*args)
    except ValueError as error:
        print("ValueError, as expected:", error)
    else:
        raise AssertionError(f"unpatchify(patches {tuple(args[0].shape)}, {args[1]}, {args[2]}, {args[3]}) "
                             "should raise a ValueError")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: a reshape without permute (pixels of different
# patches mixed); channels last inside a vector; the grid read column by column; H and W swapped
# (visible on non-square images and grids); unpatchify permuting with the wrong inverse (it works
# only on square grids or with C = 1); C taken as D // p instead of D // p^2; no ValueError when N
# does not fit the image; calling F.unfold, F.fold or transformer_lib's patchify.
from coursetools.checks import assert_close, expect_raises, forbid, verify_untampered
verify_untampered()
import transformer_lib.tokens as _tokens

_forbidden = (_tokens.patchify, F.unfold, F.fold)
_generator = torch.Generator().manual_seed(16)
for _shape, _p in [((2, 3, 8, 12), 4), ((1, 2, 6, 4), 2), ((3, 1, 5, 5), 1), ((1, 3, 6, 6), 6),
                   ((2, 2, 4, 6), 2), ((1, 4, 9, 6), 3)]:
    _images = torch.randn(*_shape, dtype=torch.float64, generator=_generator)
    _B, _C, _H, _W = _shape
    _expected = F.unfold(_images, kernel_size=_p, stride=_p).transpose(1, 2)  # PyTorch's own
    assert_close(_tokens.patchify(_images, _p), _expected)
    with forbid(*_forbidden):
        _result = patchify(_images.clone(), _p)
        _noise = torch.randn(_expected.shape, dtype=torch.float64, generator=_generator)
        _placed = unpatchify(_noise.clone(), _p, _H, _W)
        _round_trip = unpatchify(_expected.clone(), _p, _H, _W)
    assert_close(_result, _expected, atol=0, rtol=0, name=f"patchify(images {_shape}, {_p})")
    assert_close(_round_trip, _images, atol=0, rtol=0, name=f"unpatchify(patchify(images {_shape}, {_p}))")
    _fold = F.fold(_noise.transpose(1, 2), output_size=(_H, _W), kernel_size=_p, stride=_p)
    assert_close(_placed, _fold, atol=0, rtol=0, name=f"unpatchify(patches {tuple(_noise.shape)}, {_p}, {_H}, {_W})")
_bad_patchify = [((1, 1, 6, 4), 4), ((1, 1, 4, 6), 4), ((2, 3, 9, 9), 2)]
_bad_unpatchify = [((1, 6, 8), 2, 4, 8), ((1, 6, 8), 3, 4, 6), ((1, 6, 6), 2, 4, 6), ((2, 6, 12), 2, 6, 6),
                   ((1, 4, 9), 3, 6, 7)]
for _shape, _p in _bad_patchify:
    with expect_raises(ValueError, f"patchify(images {_shape}, {_p}) should raise a ValueError"), \
            forbid(*_forbidden):
        patchify(torch.zeros(_shape), _p)
for _shape, _p, _H, _W in _bad_unpatchify:
    with expect_raises(ValueError, f"unpatchify(patches {_shape}, {_p}, {_H}, {_W}) should raise a ValueError"), \
            forbid(*_forbidden):
        unpatchify(torch.zeros(_shape), _p, _H, _W)
### END HIDDEN TESTS
'''

# --- exercise 4: the input of a Vision Transformer ---------------------------------------------

VIT_TASK = r'''
## Exercise 4: the input of a Vision Transformer (3 points)

The Vision Transformer reads an image as a sequence: `N` patches, each flattened and mapped
linearly to `d_model`, preceded by one learned **class token** whose final vector is used for
classification, and with a learned **position embedding** added to every one of the `1 + N`
rows. Write

`image_tokens(images, patch_size, weight, bias, cls_token, pos_embedding) -> (B, 1 + N, d_model)`

* `images`: `(B, C, H, W)`; `p` is `patch_size`, `N = (H // p) * (W // p)` and `D = C * p * p`;
* `weight`: `(d_model, D)` and `bias`: `(d_model,)`, a linear layer as in `nn.Linear`: patch
  vector `x` becomes `x @ weight.T + bias`;
* `cls_token`: `(d_model,)`, the same for every image; `pos_embedding`: `(1 + N, d_model)`;
* row 0 of each image's output is `cls_token + pos_embedding[0]`, row `n + 1` is the embedding
  of patch `n` (the patch order of exercise 3) plus `pos_embedding[n + 1]`.

The result must stay differentiable with respect to `weight`, `bias`, `cls_token` and
`pos_embedding` (they are trained). You may use `lib_patchify` (imported above) or your own
`patchify`; you may not use `F.conv2d`/`nn.Conv2d` (the hidden tests compare with them: the
patch embedding *is* a convolution with kernel size and stride `p`).
'''

VIT_SOLUTION = r'''
def image_tokens(images: torch.Tensor, patch_size: int, weight: torch.Tensor, bias: torch.Tensor,
                 cls_token: torch.Tensor, pos_embedding: torch.Tensor) -> torch.Tensor:
    """images (B, C, H, W) -> tokens (B, 1 + N, d_model): [class token; embedded patches] + positions."""
    ### BEGIN SOLUTION
    embedded = lib_patchify(images, patch_size) @ weight.T + bias          # (B, N, d_model)
    first = cls_token.reshape(1, 1, -1).expand(images.shape[0], 1, -1)     # (B, 1, d_model)
    return torch.cat([first, embedded], dim=1) + pos_embedding             # (B, 1 + N, d_model)
    ### END SOLUTION
'''

VIT_TESTS = r'''
torch.manual_seed(2)
images = torch.randn(2, 3, 8, 12)                     # B = 2, C = 3, H = 8, W = 12
p, d_model = 4, 10                                    # N = 2 * 3 = 6 patches, D = 3 * 16 = 48
weight, bias = torch.randn(d_model, 48), torch.randn(d_model)
cls_token, pos_embedding = torch.randn(d_model), torch.randn(7, d_model)
tokens = image_tokens(images, p, weight, bias, cls_token, pos_embedding)
print("tokens:", tuple(tokens.shape))
assert_shape(tokens, (2, 7, d_model), name="image_tokens(images (2, 3, 8, 12), 4, ...)")
assert_close(tokens[:, 0], (cls_token + pos_embedding[0]).expand(2, d_model), atol=1e-5,
             name="row 0 (the class token plus position 0), for both images")
first_patch = images[1, :, 0:4, 0:4].reshape(-1)     # image 1, grid row 0, column 0
assert_close(tokens[1, 1], first_patch @ weight.T + bias + pos_embedding[1], atol=1e-4,
             name="row 1 of image 1 (patch 0 embedded, plus position 1)")
second_row_patch = images[0, :, 4:8, 0:4].reshape(-1)  # image 0, grid row 1, column 0 = patch 3
assert_close(tokens[0, 4], second_row_patch @ weight.T + bias + pos_embedding[4], atol=1e-4,
             name="row 4 of image 0 (patch 3: grid row 1, column 0)")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: weight not transposed (silently "works" when
# d_model = D, as in one case here); the bias forgotten; the class token appended last instead of
# first; the class token added to the patches instead of concatenated; positions added to the
# patches only, or shifted by one (pos_embedding[:N] on the patches); the same position for all
# rows; a class token for the first image only; the result detached (no gradient reaches the
# parameters); calling F.conv2d / nn.Conv2d.
from coursetools.checks import assert_close, verify_untampered
verify_untampered()
from torch.overrides import TorchFunctionMode as _TorchFunctionMode


class _CallRecorder(_TorchFunctionMode):
    """Records the names of the torch functions called."""

    def __init__(self):
        super().__init__()
        self.names = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.names.append(getattr(func, "__name__", ""))
        return func(*args, **(kwargs or {}))


_generator = torch.Generator().manual_seed(21)
for _B, _C, _H, _W, _p, _d_model in [(2, 3, 8, 12, 4, 10), (1, 1, 6, 6, 3, 9), (3, 2, 4, 8, 2, 5),
                                     (2, 3, 10, 5, 5, 16)]:
    _N, _D = (_H // _p) * (_W // _p), _C * _p * _p

    def _param(*shape):
        return torch.randn(*shape, dtype=torch.float64, generator=_generator).requires_grad_()

    _images = torch.randn(_B, _C, _H, _W, dtype=torch.float64, generator=_generator)
    _weight, _bias, _cls, _pos = _param(_d_model, _D), _param(_d_model), _param(_d_model), _param(1 + _N, _d_model)
    # PyTorch's own patch embedding: a convolution with kernel size = stride = p
    _conv = F.conv2d(_images, _weight.reshape(_d_model, _C, _p, _p), _bias, stride=_p)  # (B, d_model, H/p, W/p)
    _patches = _conv.flatten(2).transpose(1, 2)                                         # (B, N, d_model)
    _expected = torch.cat([_cls.expand(_B, 1, _d_model), _patches], dim=1) + _pos
    with _CallRecorder() as _calls:
        _result = image_tokens(_images.clone(), _p, _weight, _bias, _cls, _pos)
    assert "conv2d" not in _calls.names, "image_tokens must use patches and a matrix product, not F.conv2d"
    _case = f"(B={_B}, C={_C}, H={_H}, W={_W}, p={_p}, d_model={_d_model})"
    assert_close(_result, _expected, atol=1e-10, name=f"image_tokens {_case}")
    assert _result.requires_grad, "the result must stay connected to the parameters (no .detach() / no_grad)"
    _upstream = torch.randn(_B, 1 + _N, _d_model, dtype=torch.float64, generator=_generator)
    _got = torch.autograd.grad((_result * _upstream).sum(), [_weight, _bias, _cls, _pos])
    _want = torch.autograd.grad((_expected * _upstream).sum(), [_weight, _bias, _cls, _pos])
    for _name, _g, _w in zip(["weight", "bias", "cls_token", "pos_embedding"], _got, _want):
        assert_close(_g, _w, atol=1e-9, name=f"the gradient with respect to {_name} {_case}")
### END HIDDEN TESTS
'''

# --- free response -----------------------------------------------------------------------------

QUESTION = r'''
## Exercise 5: what the cache and the window cost (3 points, graded by hand)

A decoder-only model has `L = 24` layers, `d_model = 2048`, `h = 16` heads, stores activations in
16-bit floats (2 bytes each), and generates for one user (`B = 1`) with a context of `T = 4096`
tokens. Answer in a few sentences, with numbers, in the cell below:

1. How many bytes does its KV cache hold when the context is full? How many bytes would the
   attention weights of **one** layer take if the explicit path materialised them (all heads)?
2. Why can a decoder-only model cache keys and values during generation, but an encoder-only
   model (bidirectional attention, like BERT) cannot reuse them when a token is appended?
3. With a causal sliding window of `w = 512` in every layer, how far back can information from
   the input reach the last layer's output at position `t`, and what happens to the cache size?
'''

MODEL_ANSWER = r'''
**Model answer and rubric (1 point per part).**

1. Each layer caches a key and a value of `d_model` numbers per token: `2 x L x T x d_model x 2
   bytes = 2 x 24 x 4096 x 2048 x 2 = 805,306,368 bytes`, about 0.8 GB (768 MiB). The weights of one
   layer are `h x T x T x 2 bytes = 16 x 4096^2 x 2 = 536,870,912 bytes` (512 MiB) for that layer
   alone, which is why fused kernels never store them. (Full credit for both numbers or correct
   formulas with the right orders of magnitude.)
2. With a causal mask the representation of position `s` depends only on tokens `0..s`, so in every
   layer its key and value never change when later tokens arrive: they can be computed once and
   reused. With bidirectional attention every position attends to every other, so appending a
   token changes the outputs of all earlier positions from the first layer on, and so the keys and
   values of all later layers: everything must be recomputed.
3. Each layer moves information back by at most `w - 1` positions, so after `L` layers the output
   at `t` can depend on inputs as far back as `t - L (w - 1)`, i.e. `24 x 511 = 12,264` positions
   (the receptive field grows linearly with depth, like stacked convolutions). The cache only needs
   the last `w = 512` keys and values per layer (a rolling buffer), so it stops growing with `T`:
   `512 / 4096` = one eighth of the full cache here.
'''

CLOSING = r'''
## Where this goes next

You have written a local attention pattern, the cached decoding step that every large language
model runs billions of times a day, and the input layer that lets a Transformer read images. In
`transformer_lib` the cache is `KVCache` (used by `MultiHeadAttention(..., cache=...)` and
`GPT.generate(use_cache=True)`), and patches come from `tokens.patchify`; audio is cut into frames
by `tokens.frame_signal`. Everything else in a Transformer stays the same whatever the tokens are.
'''


def build() -> list:
    """The cells of the notebook, in order."""
    return [
        markdown(INTRO),
        instructions("grading", GRADING),
        setup("setup", SETUP),
        instructions("window_task", WINDOW_TASK),
        solution("sliding_window_mask", WINDOW_SOLUTION),
        tests("test_sliding_window_mask", 3, WINDOW_TESTS),
        instructions("cache_task", CACHE_TASK),
        solution("attention_with_kv_cache", CACHE_SOLUTION),
        tests("test_attention_with_kv_cache", 4, CACHE_TESTS),
        instructions("patch_task", PATCH_TASK),
        solution("patchify_unpatchify", PATCH_SOLUTION),
        tests("test_patchify_unpatchify", 3, PATCH_TESTS),
        instructions("vit_task", VIT_TASK),
        solution("image_tokens", VIT_SOLUTION),
        tests("test_image_tokens", 3, VIT_TESTS),
        instructions("cost_question", QUESTION),
        free_response("cost_answer", 3, MODEL_ANSWER),
        markdown(CLOSING),
    ]


def main() -> None:
    print(f"wrote {write_chapter(ASSIGNMENT, build())}")


if __name__ == "__main__":
    main()
