r'''Chapter 6 exercises: sinusoidal encodings, learned position embeddings, the relative-position map,
and a check of permutation equivariance.

``python -m coursetools.chapters.ch06_positional`` writes ``solutions/ch06_positional/ch06_positional.ipynb``,
the nbgrader source (solutions and hidden tests); ``make release`` derives the student notebook.
Every hidden block starts with instructor notes listing the mistakes it is there to catch.
'''

from __future__ import annotations


from coursetools.authoring import (code, free_response, instructions, markdown, setup, solution, tests,
                                   write_chapter)

ASSIGNMENT = "ch06_positional"

INTRO = r'''
# Chapter 6 exercises: positional encoding

Self-attention reads its input as a *set*: shuffle the tokens and its outputs are shuffled the same
way. You will write the two standard ways of telling a Transformer where each token sits, prove
numerically the property that makes the fixed sinusoids special, and write the test that tells
whether a module can see order at all.

**Learning objectives.** After these exercises you can

1. compute the sinusoidal encoding `PE` of Vaswani et al. (2017) exactly, including its
   frequencies and an odd `d_model`;
2. write a learned position embedding as a PyTorch module that adds one trained vector per position;
3. build the matrix `M_k` with `PE[pos + k] = PE[pos] @ M_k.T` for every position: a shift in
   position is a rotation of each (sin, cos) pair;
4. check numerically whether a module is permutation-equivariant, and say which modules are;
5. argue why positions are *added* to the token embeddings rather than concatenated.

The chapter page *Positional encoding* explains all of this; keep it open.
'''

GRADING = r'''
## How grading works

* In each answer cell, replace the lines `# YOUR CODE HERE` and `raise NotImplementedError()`
  with your code; keep the function names, signatures and docstrings.
* After each answer, run the test cell below it. The **visible tests** check a small worked
  example and tell you what is wrong. When you submit, **hidden tests** in the same cells check
  many more cases, compare your answers with reference implementations, and give the cell's
  points only if everything passes.
* Each exercise says what you may not use: calling a ready-made implementation of the very thing
  you are asked to write earns no points.
* Do not edit or delete the locked cells, and do not reassign functions of `torch`, Python's
  builtins or `transformer_lib`: the tests detect it and the cell scores zero.
* Before submitting: *Kernel → Restart & Run All*, and check that every test cell runs without an
  error. Each cell must finish within 30 seconds (the solutions take well under one second).

| exercise | points |
|---|---|
| 1. The sinusoidal encoding | 3 |
| 2. A learned position embedding | 3 |
| 3. A shift in position is a linear map | 4 |
| 4. Testing permutation equivariance | 4 |
| 5. Question: adding or concatenating, learned or fixed (graded by hand) | 3 |
| **total** | **17** |
'''

SETUP = r'''
import math
import warnings

import torch
from torch import nn

from transformer_lib.multihead import MultiHeadAttention
from coursetools.checks import assert_close, assert_equal, assert_shape, forbid, verify_untampered

warnings.filterwarnings("ignore")  # a warning printed by torch must not cost points
torch.manual_seed(0)
print("torch", torch.__version__)
'''

# --- exercise 1: the sinusoidal encoding -------------------------------------------------------

SINUSOID_TASK = r'''
## Exercise 1: the sinusoidal encoding (3 points)

Write `sinusoidal_positional_encoding(max_len, d_model)`, returning the table `PE` of shape
`(max_len, d_model)` whose row `p` is added to the token at position `p`:

$$
\mathrm{PE}[p, 2i] = \sin\!\left(\frac{p}{10000^{2i/d_{\text{model}}}}\right), \qquad
\mathrm{PE}[p, 2i+1] = \cos\!\left(\frac{p}{10000^{2i/d_{\text{model}}}}\right).
$$

Precisely:

* positions start at **0**: `p = 0, 1, ..., max_len - 1` (so row 0 is `[0, 1, 0, 1, ...]`);
* even columns `2i` hold the **sine**, odd columns `2i + 1` the **cosine** of the *same* angle
  (interleaved, not "all sines, then all cosines");
* the exponent is `2i / d_model`, where `2i` is the even column index of the pair (so the angle
  of the pair `(2i, 2i+1)` is `p * 10000 ** (-2i / d_model)`), and the base is `10000`;
* an **odd** `d_model` is allowed: the last column `d_model - 1` is even, so it holds
  `sin(p / 10000 ** ((d_model - 1) / d_model))` and has no cosine partner; the denominator of the
  exponent is still `d_model` itself (do not compute the table for `d_model + 1` and cut it);
* compute in `torch.float64` and return a **`torch.float32`** tensor (as `transformer_lib` does).

A loop over `i` is fine, broadcasting (positions `(max_len, 1)` times frequencies) is neater.
You may not use anything from `transformer_lib.positional`.
'''

SINUSOID_SOLUTION = r'''
def sinusoidal_positional_encoding(max_len: int, d_model: int) -> torch.Tensor:
    """The fixed table PE (max_len, d_model), float32: sin in even columns, cos in odd columns."""
    ### BEGIN SOLUTION
    pair_index = torch.arange((d_model + 1) // 2, dtype=torch.float64)        # i = 0 .. ceil(d/2) - 1
    omega = 10000.0 ** (-2.0 * pair_index / d_model)                          # one frequency per pair
    theta = torch.arange(max_len, dtype=torch.float64).unsqueeze(1) * omega   # (max_len, ceil(d/2))
    table = torch.zeros(max_len, d_model, dtype=torch.float64)
    table[:, 0::2] = theta.sin()
    table[:, 1::2] = theta[:, : d_model // 2].cos()
    return table.to(torch.float32)
    ### END SOLUTION
'''

SINUSOID_TESTS = r'''
pe = sinusoidal_positional_encoding(6, 4)
print("sinusoidal_positional_encoding(6, 4) =\n", pe)
assert_shape(pe, (6, 4), name="sinusoidal_positional_encoding(6, 4)")
assert_equal(pe.dtype, torch.float32, name="the dtype of the table")
assert_close(pe[0], torch.tensor([0.0, 1.0, 0.0, 1.0]), name="row 0 (position 0: sin 0 = 0, cos 0 = 1)")
# d_model = 4: the pair i = 0 turns at 1 radian per position, the pair i = 1 at 10000 ** (-2/4) = 0.01
assert_close(pe[:, 0], torch.sin(torch.arange(6.0)), name="column 0 (sin p)")
assert_close(pe[:, 1], torch.cos(torch.arange(6.0)), name="column 1 (cos p)")
assert_close(pe[5, 2:], torch.tensor([math.sin(0.05), math.cos(0.05)]), name="row 5, columns 2 and 3 (angle 5 * 0.01)")
odd = sinusoidal_positional_encoding(3, 5)
assert_shape(odd, (3, 5), name="sinusoidal_positional_encoding(3, 5) (odd d_model)")
assert_close(odd[2, 4], torch.tensor(math.sin(2 / 10000 ** (4 / 5))), name="PE[2, 4] for d_model = 5 (a lone sine)")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: sin and cos swapped; the pair index i used in the
# exponent instead of 2i (10000 ** (i / d_model)); another base (1000, e); positions starting at 1;
# sines in the first half and cosines in the second half (concatenated, not interleaved); an odd
# d_model crashing, or computed as d_model + 1 columns then cut (wrong exponent denominator), or
# with a cosine in the last column; float64 returned; calling transformer_lib.positional.
from coursetools.checks import assert_close, assert_equal, forbid, verify_untampered
verify_untampered()
import math as _math
import transformer_lib.positional as _positional

for _max_len, _d_model in [(1, 1), (1, 2), (7, 1), (5, 2), (50, 16), (33, 7), (100, 64), (20, 3), (40, 128), (9, 10)]:
    with forbid(_positional.sinusoidal_positional_encoding, _positional.PositionalEncoding,
                _positional.make_positional):
        _table = sinusoidal_positional_encoding(_max_len, _d_model)
    assert_equal(_table.dtype, torch.float32, name=f"the dtype of sinusoidal_positional_encoding({_max_len}, {_d_model})")
    _expected = _positional.sinusoidal_positional_encoding(_max_len, _d_model)
    assert_close(_table, _expected, atol=5e-5, rtol=0, name=f"sinusoidal_positional_encoding({_max_len}, {_d_model})")
    # the same from the formula, entry by entry, independently of the library
    _p, _c = _max_len - 1, _d_model - 1
    _angle = _p / 10000 ** ((_c - _c % 2) / _d_model)
    _want = _math.sin(_angle) if _c % 2 == 0 else _math.cos(_angle)
    assert abs(float(_table[_p, _c]) - _want) < 5e-5, (
        f"PE[{_p}, {_c}] for d_model = {_d_model} should be {_want:.6f}, got {float(_table[_p, _c]):.6f}")
### END HIDDEN TESTS
'''

TRY_IT = r'''
# A scratch cell: look at your table. Low columns turn fast, high columns barely move.
table = sinusoidal_positional_encoding(8, 8)
torch.set_printoptions(precision=3, sci_mode=False)
print(table)
'''

# --- exercise 2: the learned position embedding ------------------------------------------------

LEARNED_TASK = r'''
## Exercise 2: a learned position embedding (3 points)

GPT and BERT do not use a formula: they learn one vector per position, a table `P` of shape
`(max_len, d_model)` trained with the rest of the model. Write the module
`LearnedPositionalEmbedding(max_len, d_model)`:

* `__init__` stores the table in the attribute **`self.embedding`**, an `nn.Embedding` with
  `max_len` rows of size `d_model` (the tests load weights into it; keep PyTorch's default
  initialisation), and creates no other parameter;
* `forward(x, start=0)` takes `x` of shape `(B, T, d_model)` and returns `x + P[start + t]` at
  position `t`, for `t = 0 .. T - 1`: the same vector for every sequence of the batch, the dtype
  of `x` kept. `start > 0` is used when the first `start` tokens were seen earlier (generation
  with a cache); positions start at **0** when `start = 0`;
* it raises a `ValueError` whose message names `max_len` and the shape of `x` when
  `start + T > max_len` (there is no learned vector beyond the table: `nn.Embedding` alone
  would raise an `IndexError`), and a `ValueError` naming the expected and received shape when
  `x` is not 3-dimensional or its last size is not `d_model`. `start + T == max_len` is fine.

You may not use anything from `transformer_lib.positional`.
'''

LEARNED_SOLUTION = r'''
class LearnedPositionalEmbedding(nn.Module):
    """Adds a trained vector per position: x (B, T, d_model) -> x + P[start : start + T]."""

    def __init__(self, max_len: int, d_model: int) -> None:
        super().__init__()
        self.max_len, self.d_model = max_len, d_model
        ### BEGIN SOLUTION
        self.embedding = nn.Embedding(num_embeddings=max_len, embedding_dim=d_model)  # the table P
        ### END SOLUTION

    def forward(self, x: torch.Tensor, start: int = 0) -> torch.Tensor:
        ### BEGIN SOLUTION
        if x.dim() != 3 or x.shape[-1] != self.d_model:
            raise ValueError(f"x must have shape (B, T, d_model={self.d_model}), got {tuple(x.shape)}")
        n_positions = x.shape[1]
        if start + n_positions > self.max_len:
            raise ValueError(f"only max_len={self.max_len} positions are learned; x of shape "
                             f"{tuple(x.shape)} from position {start} needs {start + n_positions}")
        rows = self.embedding.weight[start : start + n_positions]   # (T, d_model)
        return x + rows.to(x.dtype).unsqueeze(0)              # broadcast over the batch
        ### END SOLUTION
'''

LEARNED_TESTS = r'''
torch.manual_seed(1)
learned = LearnedPositionalEmbedding(max_len=10, d_model=4)
assert_equal(sorted(name for name, _ in learned.named_parameters()), ["embedding.weight"],
             name="the parameters of the module")
assert_shape(learned.embedding.weight, (10, 4), name="embedding.weight")
with torch.no_grad():
    learned.embedding.weight.copy_(torch.arange(40.0).reshape(10, 4))  # row p = [4p, 4p+1, 4p+2, 4p+3]
x = torch.zeros(2, 3, 4)
out = learned(x)
print("learned(zeros(2, 3, 4)) =\n", out)
assert_shape(out, (2, 3, 4), name="learned(x)")
assert_close(out[0], torch.arange(12.0).reshape(3, 4), name="learned(zeros)[0] (rows 0, 1, 2 of the table)")
assert_close(out[1], out[0], name="learned(zeros)[1] (every sequence gets the same positions)")
assert_close(learned(torch.ones(1, 2, 4), start=8)[0], torch.arange(32.0, 40.0).reshape(2, 4) + 1,
             name="learned(ones(1, 2, 4), start=8)[0] (rows 8 and 9, plus 1)")
try:
    learned(torch.zeros(1, 11, 4))
except ValueError as error:
    print("ValueError, as expected:", error)
else:
    raise AssertionError("a sequence of 11 tokens with max_len = 10 should raise a ValueError")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: positions starting at 1 (arange(1, T + 1)), which
# also breaks start + T == max_len; start ignored; positions indexed by the batch axis; the table
# concatenated to x or multiplied instead of added; a parameter under another name or an extra
# one; no ValueError (IndexError from nn.Embedding) or a ValueError already at start + T == max_len;
# a wrong last dimension not reported; the gradient reaching rows that were not used;
# calling transformer_lib.positional.
from coursetools.checks import assert_close, expect_raises, forbid, verify_untampered
verify_untampered()
import transformer_lib.positional as _positional

_forbidden = (_positional.LearnedPositionalEmbedding, _positional.PositionalEncoding,
              _positional.make_positional, _positional.sinusoidal_positional_encoding)
_generator = torch.Generator().manual_seed(6)
for _max_len, _d_model, _B, _T, _start in [(12, 6, 3, 5, 0), (12, 6, 2, 4, 8), (7, 3, 4, 7, 0),
                                            (9, 8, 1, 1, 8), (16, 5, 5, 9, 3)]:
    torch.manual_seed(_max_len)
    with forbid(*_forbidden):
        _module = LearnedPositionalEmbedding(_max_len, _d_model).double()
    _names = sorted(name for name, _ in _module.named_parameters())
    assert _names == ["embedding.weight"], f"the only parameter must be embedding.weight, found {_names}"
    _reference = _positional.LearnedPositionalEmbedding(_max_len, _d_model).double()
    _weight = torch.randn(_max_len, _d_model, dtype=torch.float64, generator=_generator)
    with torch.no_grad():
        _module.embedding.weight.copy_(_weight)
        _reference.embedding.weight.copy_(_weight)
    _x = torch.randn(_B, _T, _d_model, dtype=torch.float64, generator=_generator)
    _upstream = torch.randn(_B, _T, _d_model, dtype=torch.float64, generator=_generator)
    with forbid(*_forbidden):
        _out = _module(_x.clone(), start=_start)
    _expected = _reference(_x, start=_start)
    assert_close(_out, _expected, atol=1e-12, name=f"forward(x {(_B, _T, _d_model)}, start={_start}) with max_len={_max_len}")
    (_grad,) = torch.autograd.grad((_out * _upstream).sum(), _module.embedding.weight)
    (_want_grad,) = torch.autograd.grad((_expected * _upstream).sum(), _reference.embedding.weight)
    assert_close(_grad, _want_grad, atol=1e-12, name="the gradient of embedding.weight")
    for _bad in [torch.zeros(1, _max_len - _start + 1, _d_model, dtype=torch.float64),
                 torch.zeros(2, 1, _d_model + 1, dtype=torch.float64), torch.zeros(_T, _d_model, dtype=torch.float64)]:
        with expect_raises(ValueError, f"forward(x {tuple(_bad.shape)}, start={_start}) with max_len={_max_len}, "
                           f"d_model={_d_model} should raise a ValueError"), forbid(*_forbidden):
            _module(_bad, start=_start)
### END HIDDEN TESTS
'''

# --- exercise 3: the relative-position map -----------------------------------------------------

SHIFT_TASK = r'''
## Exercise 3: a shift in position is a linear map (4 points)

Vaswani et al. chose sinusoids because, for any fixed offset `k`, `PE[pos + k]` is a linear
function of `PE[pos]`, the same for every position. Write `relative_position_map(k, d_model)`
returning the matrix `M` (shape `(d_model, d_model)`, dtype **`torch.float64`**) such that

$$
\mathrm{PE}[pos + k] = \mathrm{PE}[pos]\, M^\top \quad\text{for every position } pos
$$

(rows as in the course: `PE[pos]` is a row vector, so `PE[pos + k] = PE[pos] @ M.T`, and for the
whole table `PE[k:] = PE[:-k] @ M.T` when `k > 0`).

* Work it out for one pair of columns with the angle-sum formulas
  `sin(a + b) = sin a cos b + cos a sin b`, `cos(a + b) = cos a cos b - sin a sin b`, with
  `a = pos * omega_i` and `b = k * omega_i`, `omega_i = 10000 ** (-2i / d_model)`.
  `M` is block-diagonal: one `2 x 2` block per pair of columns `(2i, 2i + 1)`, zeros elsewhere.
* `k` is any integer, negative and zero included.
* If `d_model` is **odd**, raise a `ValueError` (the lone sine in the last column has no cosine
  partner, and no such `M` exists).
* Build `M` from the formula (cosines and sines of `k * omega_i`). You may not use anything from
  `transformer_lib.positional`, and do not fit `M` to a table by least squares.
'''

SHIFT_SOLUTION = r'''
def relative_position_map(k: int, d_model: int) -> torch.Tensor:
    """M (d_model, d_model), float64, with PE[pos + k] = PE[pos] @ M.T for every position."""
    ### BEGIN SOLUTION
    if d_model % 2:
        raise ValueError(f"relative_position_map needs an even d_model (sin/cos pairs), got d_model={d_model}")
    rotation = torch.zeros(d_model, d_model, dtype=torch.float64)
    for pair in range(d_model // 2):
        phase = k * 10000.0 ** (-2.0 * pair / d_model)
        c, s = math.cos(phase), math.sin(phase)
        even, odd = 2 * pair, 2 * pair + 1
        # new sin = sin * cos(phase) + cos * sin(phase); new cos = cos * cos(phase) - sin * sin(phase)
        rotation[even, even], rotation[even, odd] = c, s
        rotation[odd, even], rotation[odd, odd] = -s, c
    return rotation  # block-diagonal: one 2 x 2 rotation per (sin, cos) pair
    ### END SOLUTION
'''

SHIFT_TESTS = r'''
M = relative_position_map(1, 2)
print("relative_position_map(1, 2) =\n", M)
assert_shape(M, (2, 2), name="relative_position_map(1, 2)")
assert_equal(M.dtype, torch.float64, name="the dtype of M")
# d_model = 2: PE[pos] = [sin pos, cos pos]; shifting by 1 is a rotation by 1 radian
assert_close(M, torch.tensor([[math.cos(1), math.sin(1)], [-math.sin(1), math.cos(1)]], dtype=torch.float64),
             atol=1e-12, name="relative_position_map(1, 2)")
assert_close(relative_position_map(0, 6), torch.eye(6, dtype=torch.float64), atol=1e-12,
             name="relative_position_map(0, 6) (no shift)")
from transformer_lib.positional import sinusoidal_positional_encoding as reference_table  # to check M only
table = reference_table(20, 8).double()
assert_close(table[3:], table[:-3] @ relative_position_map(3, 8).T, atol=1e-5,
             name="PE[3:] against PE[:-3] @ relative_position_map(3, 8).T")
try:
    relative_position_map(2, 5)
except ValueError as error:
    print("ValueError, as expected:", error)
else:
    raise AssertionError("relative_position_map(2, 5) should raise a ValueError (odd d_model)")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: M instead of its transpose (the signs of the sines
# swapped, i.e. a shift by -k); k ignored or used as |k|; the frequencies with i instead of 2i in
# the exponent; blocks on the wrong pairs of columns (2i - 1, 2i) or on the diagonal of a 2 x 2
# grid of halves; float32; no ValueError for an odd d_model; M fitted to a float32 table
# (inexact); calling transformer_lib.positional.
from coursetools.checks import assert_close, assert_equal, expect_raises, forbid, verify_untampered
verify_untampered()
import math as _math
import transformer_lib.positional as _positional


def _pe64(_max_len, _d_model):
    _angle = torch.arange(_max_len, dtype=torch.float64)[:, None] * 10000.0 ** (
        -torch.arange(0, _d_model, 2, dtype=torch.float64) / _d_model)
    return torch.stack([_angle.sin(), _angle.cos()], dim=-1).reshape(_max_len, _d_model)


_forbidden = (_positional.sinusoidal_positional_encoding, _positional.PositionalEncoding, _positional.make_positional)
for _k, _d_model in [(1, 4), (5, 16), (-3, 8), (17, 64), (0, 2), (-40, 32), (250, 10)]:
    with forbid(*_forbidden):
        _M = relative_position_map(_k, _d_model)
    assert_equal(_M.dtype, torch.float64, name=f"the dtype of relative_position_map({_k}, {_d_model})")
    _want = torch.zeros(_d_model, _d_model, dtype=torch.float64)
    for _i in range(_d_model // 2):
        _phase = _k * 10000.0 ** (-2 * _i / _d_model)
        _want[2 * _i: 2 * _i + 2, 2 * _i: 2 * _i + 2] = torch.tensor(
            [[_math.cos(_phase), _math.sin(_phase)], [-_math.sin(_phase), _math.cos(_phase)]], dtype=torch.float64)
    assert_close(_M, _want, atol=1e-10, rtol=0, name=f"relative_position_map({_k}, {_d_model})")
    _table = _pe64(300, _d_model)
    _first = max(0, -_k)
    _pos = torch.arange(_first, _first + 20)
    assert_close(_table[_pos] @ _M.T, _table[_pos + _k], atol=1e-9, rtol=0,
                 name=f"PE[pos] @ M.T against PE[pos + {_k}] (d_model = {_d_model})")
    assert_close(_M @ _M.T, torch.eye(_d_model, dtype=torch.float64), atol=1e-10, name="M @ M.T (a rotation)")
    _lib = _positional.sinusoidal_positional_encoding(300, _d_model).double()
    assert_close(_lib[_pos] @ _M.T, _lib[_pos + _k], atol=1e-5, name="the shift on transformer_lib's table")
for _d_model in (1, 3, 9):
    with expect_raises(ValueError, f"relative_position_map(2, {_d_model}) should raise a ValueError"), \
            forbid(*_forbidden):
        relative_position_map(2, _d_model)
### END HIDDEN TESTS
'''

# --- exercise 4: testing permutation equivariance ---------------------------------------------

EQUIVARIANCE_TASK = r'''
## Exercise 4: testing permutation equivariance (4 points)

A function `f` from sequences `(B, T, d_model)` to sequences `(B, T, d_out)` is
**permutation-equivariant** when permuting the input positions permutes the output positions in
the same way and changes nothing else. With a permutation `perm` (a `torch.long` tensor holding
`0 .. T - 1` in some order) and `x[:, perm]` the sequences reordered so that new position `t`
holds old token `perm[t]`:

$$
f(x[:, \mathrm{perm}]) = f(x)[:, \mathrm{perm}] .
$$

Write two functions:

* `equivariance_error(f, x, perm) -> float`: the largest absolute difference between
  `f(x[:, perm])` and `f(x)[:, perm]`, over all entries of the whole batch, as a Python `float`;
* `is_permutation_equivariant(f, x, perms, atol=1e-5) -> bool`: `True` if and only if
  `equivariance_error(f, x, perm) <= atol` for **every** `perm` in the list `perms`, as a Python
  `bool`. Floating-point sums in another order differ in the last digits: compare with the
  tolerance, never with exact equality.

Mind the difference with *invariance* (`f(x[:, perm]) = f(x)`, true of a sum over positions but
not of self-attention), and permute the **sequence** axis (axis 1), never the batch axis. Run
`f` without gradients (`torch.no_grad()`).
'''

EQUIVARIANCE_SOLUTION = r'''
def equivariance_error(f, x: torch.Tensor, perm: torch.Tensor) -> float:
    """max |f(x[:, perm]) - f(x)[:, perm]| over the whole batch, as a float."""
    ### BEGIN SOLUTION
    with torch.no_grad():  # f is only evaluated here
        permuted_then_f = f(x[:, perm])
        f_then_permuted = f(x)[:, perm]
    return (permuted_then_f - f_then_permuted).abs().max().item()
    ### END SOLUTION


def is_permutation_equivariant(f, x: torch.Tensor, perms: list[torch.Tensor], atol: float = 1e-5) -> bool:
    """True if and only if equivariance_error(f, x, perm) <= atol for every perm in perms."""
    ### BEGIN SOLUTION
    return all(equivariance_error(f, x, perm) <= atol for perm in perms)
    ### END SOLUTION
'''

EQUIVARIANCE_TESTS = r'''
torch.manual_seed(2)
attention = MultiHeadAttention(d_model=8, num_heads=2).eval()
self_attention = lambda x: attention(x, x, x)[0]           # (B, T, 8) -> (B, T, 8)
running_sum = lambda x: x.cumsum(dim=1)                    # position t sees tokens 0 .. t
x = torch.randn(3, 5, 8)
swap = torch.tensor([1, 0, 2, 3, 4])
error = equivariance_error(self_attention, x, swap)
print(f"self-attention: error {error:.2e}; running sum: error {equivariance_error(running_sum, x, swap):.2f}")
assert_equal(type(error), float, name="the type returned by equivariance_error")
assert error < 1e-5, f"self-attention is permutation-equivariant, but the error is {error:.3g}"
assert equivariance_error(running_sum, x, swap) > 0.1, "a running sum over positions is not equivariant"
assert_equal(is_permutation_equivariant(self_attention, x, [swap]), True, name="is_permutation_equivariant(self-attention)")
assert_equal(is_permutation_equivariant(running_sum, x, [swap]), False, name="is_permutation_equivariant(running sum)")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: testing invariance (f(x[:, perm]) against f(x));
# the batch axis permuted instead of the sequence axis; the inverse permutation applied to the
# output (invisible with a swap, caught with 3-cycles); exact equality (torch.equal) instead of the
# tolerance, or a strict < atol; only the first sequence of the batch, or only the first perm,
# checked; the mean error instead of the largest; a tensor or numpy value returned instead of a
# Python float / bool.
from coursetools.checks import assert_equal, verify_untampered
verify_untampered()
from transformer_lib.layers import Encoder as _Encoder
from transformer_lib.positional import PositionalEncoding as _PositionalEncoding


def _reference_error(_f, _x, _perm):
    with torch.no_grad():  # the reference error
        return float((_f(_x[:, _perm]) - _f(_x)[:, _perm]).abs().max())


_ = torch.manual_seed(12)
_T, _d = 6, 8
_attention = MultiHeadAttention(_d, 2).eval()
_encoder = _Encoder(2, _d, 2, 16).eval()
_pe = _PositionalEncoding(_d, max_len=16)
_causal = torch.ones(_T, _T).tril().bool()
_x = torch.randn(7, _T, _d)   # B = 7 > T, so that the batch axis can be indexed by a perm
_modules = {
    "self-attention": (lambda x: _attention(x, x, x)[0], True),
    "an encoder without positions": (lambda x: _encoder(x), True),
    "a position-wise map": (lambda x: torch.tanh(2 * x + 1), True),
    "the mean over positions, repeated": (lambda x: x.mean(dim=1, keepdim=True).expand_as(x).clone(), True),
    "causal self-attention": (lambda x: _attention(x, x, x, _causal)[0], False),
    "an encoder after sinusoidal positions": (lambda x: _encoder(_pe(x)), False),
    "a running sum": (lambda x: x.cumsum(dim=1), False),
    "a shift by one position": (lambda x: x.roll(1, dims=1), False),
    "a change to the last sequence only": (lambda x: torch.cat([x[:-1], x[-1:].roll(1, dims=1)]), False),
}
_cycle = torch.tensor([1, 2, 0, 3, 5, 4])          # a 3-cycle and a swap: not its own inverse
_reverse = torch.arange(_T - 1, -1, -1)
_perms = [_cycle, torch.randperm(_T, generator=torch.Generator().manual_seed(3)), _reverse]
for _name, (_f, _equivariant) in _modules.items():
    for _perm in _perms:
        _got = equivariance_error(_f, _x.clone(), _perm.clone())
        assert type(_got) is float, f"equivariance_error must return a Python float, got {type(_got)!r}"
        _want = _reference_error(_f, _x, _perm)
        assert abs(_got - _want) <= 1e-6 + 1e-4 * _want, (
            f"equivariance_error({_name}, x, perm={_perm.tolist()}) should be {_want:.4g}, got {_got:.4g}")
    _verdict = is_permutation_equivariant(_f, _x.clone(), [p.clone() for p in _perms])
    assert type(_verdict) is bool, f"is_permutation_equivariant must return a Python bool, got {type(_verdict)!r}"
    assert _verdict == _equivariant, f"is_permutation_equivariant({_name}) should be {_equivariant}, got {_verdict}"
# flipping the sequence commutes with the reversal, not with the cycle
_flip = lambda x: x.flip(1)
assert_equal(is_permutation_equivariant(_flip, _x, [_reverse]), True, name="is_permutation_equivariant(flip, [reverse])")
assert_equal(is_permutation_equivariant(_flip, _x, [_reverse, _cycle]), False,
             name="is_permutation_equivariant(flip, [reverse, cycle]) (every perm must pass)")
# the tolerance is inclusive, and it is the caller's: this f's error is exactly 0.5 for the cycle
_ramp = lambda x: torch.zeros_like(x) + 0.25 * torch.arange(_T, dtype=x.dtype)[None, :, None]
assert_equal(is_permutation_equivariant(_ramp, _x, [_cycle], atol=0.5), True,
             name="is_permutation_equivariant(f, x, [cycle], atol=0.5) for an f whose error is 0.5")
assert_equal(is_permutation_equivariant(_ramp, _x, [_cycle], atol=0.3), False,
             name="is_permutation_equivariant(f, x, [cycle], atol=0.3) for an f whose error is 0.5")
### END HIDDEN TESTS
'''

# --- free response ---------------------------------------------------------------------------

QUESTION = r'''
## Exercise 5: adding or concatenating, learned or fixed (3 points, graded by hand)

Answer in a few sentences each, in the cell below.

1. The Transformer **adds** `PE[p]` to the token embedding `x_p` instead of concatenating the two.
   Write the attention score between positions `p` and `q` for the sum, `(x_p + PE[p]) W_Q` against
   `(x_q + PE[q]) W_K`, as four terms, and say what each term lets the model compare. What would
   concatenation cost, and why does adding not simply scramble token and position?
2. A model is trained on sequences of at most 64 tokens and then given one of 100 tokens. What
   happens with a learned table of `max_len = 64`, and what with sinusoids? Would you expect the
   sinusoidal model to work well at positions 64 to 99? Why or why not?
3. Name one thing that the learned table can do and the fixed sinusoids cannot.
'''

MODEL_ANSWER = r'''
**Model answer and rubric (1 point per part).**

1. The score is `(x_p + PE[p]) W_Q W_K^T (x_q + PE[q])^T = x_p W_Q W_K^T x_q^T` (content with
   content) `+ x_p W_Q W_K^T PE[q]^T` (this token with that position) `+ PE[p] W_Q W_K^T x_q^T`
   (this position with that token) `+ PE[p] W_Q W_K^T PE[q]^T` (position with position: with
   sinusoids this depends on `q - p` through rotations, so a head can attend "3 to the left").
   Concatenating `[x_p, PE[p]]` would widen every vector, so every projection and the
   feed-forward grow (or the token part must shrink to keep `d_model`). Adding does not scramble:
   in a high-dimensional space the learned projections can put token and position information into
   nearly orthogonal subspaces, and the model learns embeddings that leave room for it; the
   concatenation is the special case where the subspaces are the coordinate blocks.
2. The learned table has no row 64 or beyond: the model cannot run at all (an index error, or
   a `ValueError` as in exercise 2) unless the table is extended with untrained rows. Sinusoids
   are defined for every position, so the model runs, but the vectors of positions 64-99 (and
   the relative offsets > 63) were never seen in training, so the attention patterns learned for
   them are untested: in practice accuracy often drops (length extrapolation is poor); relative
   schemes (Shaw et al., RoPE, ALiBi) were designed for this.
3. The learned table can fit any position-dependent pattern the data needs (a special first
   position, sentence-boundary effects, an absolute position that matters for the task), and its
   vectors need not have the sinusoids' structure; the sinusoids are fixed and use no parameters.
   (Any one correct difference earns the point.)
'''

CLOSING = r'''
## Where this goes next

`transformer_lib.positional` holds the same pieces as `sinusoidal_positional_encoding`,
`PositionalEncoding` (adds the table, then dropout) and `LearnedPositionalEmbedding`;
`make_positional("sinusoidal" | "learned" | None, max_len, d_model)` picks one, and the models of
the next chapters take `positional=` to switch positions on and off. With positions added, the
encoder of chapter 7 is no longer permutation-equivariant: it can learn tasks where order matters.
'''


def build() -> list:
    """The cells of the notebook, in order."""
    return [
        markdown(INTRO),
        instructions("grading", GRADING),
        setup("setup", SETUP),
        instructions("sinusoid_task", SINUSOID_TASK),
        solution("sinusoidal_positional_encoding", SINUSOID_SOLUTION),
        tests("test_sinusoidal_positional_encoding", 3, SINUSOID_TESTS),
        code(TRY_IT),
        instructions("learned_task", LEARNED_TASK),
        solution("learned_positional_embedding", LEARNED_SOLUTION),
        tests("test_learned_positional_embedding", 3, LEARNED_TESTS),
        instructions("shift_task", SHIFT_TASK),
        solution("relative_position_map", SHIFT_SOLUTION),
        tests("test_relative_position_map", 4, SHIFT_TESTS),
        instructions("equivariance_task", EQUIVARIANCE_TASK),
        solution("permutation_equivariance", EQUIVARIANCE_SOLUTION),
        tests("test_permutation_equivariance", 4, EQUIVARIANCE_TESTS),
        instructions("positions_question", QUESTION),
        free_response("positions_answer", 3, MODEL_ANSWER),
        markdown(CLOSING),
    ]


def main() -> None:
    print(f"wrote {write_chapter(ASSIGNMENT, build())}")


if __name__ == "__main__":
    main()
