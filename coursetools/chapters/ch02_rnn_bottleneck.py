r'''Chapter 2 exercises: the recurrent step, the unrolled loop, teacher forcing, the context vector.

``python -m coursetools.chapters.ch02_rnn_bottleneck`` writes
``solutions/ch02_rnn_bottleneck/ch02_rnn_bottleneck.ipynb``, the nbgrader source (solutions and
hidden tests); ``python -m coursetools.release ch02_rnn_bottleneck`` derives the student notebook.
Every hidden block starts with instructor notes listing the mistakes it is there to catch.
'''

from __future__ import annotations


from coursetools.authoring import (free_response, instructions, markdown, setup, solution, tests,
                                   write_chapter)

ASSIGNMENT = "ch02_rnn_bottleneck"

INTRO = r'''
# Chapter 2 exercises: recurrent networks and the bottleneck

You will write, from scratch, the recurrent network that sequence-to-sequence models were built
on before attention: one step, the loop over time, the decoder inputs of teacher forcing, and the
single context vector that an encoder hands to its decoder.

**Learning objectives.** After these exercises you can

1. compute one step of a tanh RNN, `h_t = tanh(x_t W_xh + h_{t-1} W_hh + b_h)`, and match PyTorch's
   `nn.RNNCell` given the same weights;
2. unroll it over a batch of sequences `(B, T, D)`, and see why the loop over `t` cannot run in parallel;
3. build a decoder's inputs for teacher forcing by shifting the targets one position to the right;
4. read off the context vector of a padded batch: the state after each sequence's last real token;
5. explain what that one vector must hold and why longer inputs make it fail.

The chapter page *The RNN bottleneck* explains all of this; keep it open.
'''

GRADING = r'''
## How grading works

* In each answer cell, replace the lines `# YOUR CODE HERE` and `raise NotImplementedError()`
  with your code; keep the function names, signatures and docstrings.
* After each answer, run the test cell below it. The **visible tests** check a small worked
  example and tell you what is wrong. When you submit, **hidden tests** in the same cells check
  many more cases (other shapes, float64, padding), compare your answers with reference
  implementations and with PyTorch's `nn.RNN`, and give the cell's points only if everything passes.
* Each exercise says what you may not use: calling a ready-made implementation of the very thing
  you are asked to write earns no points.
* Do not edit or delete the locked cells, and do not reassign functions of `torch`, Python's
  builtins or `transformer_lib`: the tests detect it and the cell scores zero.
* Before submitting: *Kernel → Restart & Run All*, and check that every test cell runs without an
  error. Each cell must finish within 30 seconds (the solutions take well under one second).

| exercise | points |
|---|---|
| 1. One step of a tanh RNN | 2 |
| 2. Unrolling the loop over time | 4 |
| 3. Teacher forcing: shifting the targets | 3 |
| 4. The context vector of a padded batch | 3 |
| 5. Question: what the context vector must hold (graded by hand) | 3 |
| **total** | **15** |
'''

SETUP = r'''
import warnings

import torch
import torch.nn as nn

from transformer_lib.data import BOS_ID, EOS_ID, PAD_ID
from coursetools.checks import assert_close, assert_equal, assert_shape, forbid, verify_untampered

warnings.filterwarnings("ignore")  # a warning printed by torch must not cost points
torch.manual_seed(0)
torch.set_printoptions(precision=4, sci_mode=False)
print("special ids: <pad> =", PAD_ID, " <bos> =", BOS_ID, " <eos> =", EOS_ID)
'''

# --- exercise 1: one step --------------------------------------------------------------------

STEP_TASK = r'''
## Exercise 1: one step of a tanh RNN (2 points)

A recurrent network reads a sequence one vector at a time and keeps a *hidden state* of `H`
numbers that summarises what it has read so far. Write `rnn_step(x_t, h_prev, W_xh, W_hh, b_h)`,
one step of the tanh RNN, with this exact weight layout (rows are batch elements, as everywhere in
the course):

$$h_t = \tanh\left(x_t W_{xh} + h_{t-1} W_{hh} + b_h\right)$$

| argument | shape | meaning |
|---|---|---|
| `x_t` | `(B, D)` | the inputs at time `t`, one row per sequence of the batch |
| `h_prev` | `(B, H)` | the previous hidden state `h_{t-1}` |
| `W_xh` | `(D, H)` | input-to-hidden weights |
| `W_hh` | `(H, H)` | hidden-to-hidden weights |
| `b_h` | `(H,)` | the bias, added to every row |

Return `h_t` of shape `(B, H)` in the dtype of the inputs. Use `@` (or `torch.matmul`) and
`torch.tanh`. You may not use `torch.nn.RNN`, `nn.RNNCell`, `nn.GRU`, `nn.GRUCell` or
`torch.rnn_tanh_cell`: the hidden tests compare your answer with them.
'''

STEP_SOLUTION = r'''
def rnn_step(x_t: torch.Tensor, h_prev: torch.Tensor, W_xh: torch.Tensor, W_hh: torch.Tensor,
             b_h: torch.Tensor) -> torch.Tensor:
    """One tanh RNN step: x_t (B, D), h_prev (B, H) -> h_t (B, H) = tanh(x_t W_xh + h_prev W_hh + b_h)."""
    ### BEGIN SOLUTION
    return torch.tanh(x_t @ W_xh + h_prev @ W_hh + b_h)
    ### END SOLUTION
'''

STEP_TESTS = r'''
x_t = torch.tensor([[1.0, 0.0]])                # B = 1, D = 2
h_prev = torch.tensor([[0.0, 1.0, 2.0]])        # H = 3
W_xh = torch.tensor([[1.0, 2.0, 0.0], [5.0, 5.0, 5.0]])
W_hh = torch.tensor([[9.0, 9.0, 9.0], [0.5, -1.0, 0.0], [0.0, 0.0, 0.25]])
b_h = torch.tensor([0.1, 0.2, -0.3])
h_t = rnn_step(x_t, h_prev, W_xh, W_hh, b_h)
print("h_t =", h_t)
# x_t W_xh = [1, 2, 0]; h_prev W_hh = [0.5, -1, 0.5]; + b_h = [1.6, 1.2, 0.2]; then tanh
assert_shape(h_t, (1, 3), name="rnn_step(x_t (1, 2), h_prev (1, 3), ...)")
assert_close(h_t, torch.tanh(torch.tensor([[1.6, 1.2, 0.2]])), atol=1e-6, name="rnn_step(x_t, h_prev, W_xh, W_hh, b_h)")
assert_shape(rnn_step(torch.randn(4, 5), torch.randn(4, 6), torch.randn(5, 6), torch.randn(6, 6), torch.randn(6)),
             (4, 6), name="rnn_step with B=4, D=5, H=6")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: the bias forgotten; the tanh forgotten (or
# sigmoid/relu instead); the bias added after the tanh; W_hh transposed (h_prev @ W_hh.T, which
# runs because W_hh is square); W_xh and W_hh swapped; the result cast to float32; calling
# nn.RNNCell, nn.RNN or torch.rnn_tanh_cell. The reference is PyTorch's nn.RNNCell loaded with the
# transposed weights and the bias split between bias_ih and bias_hh.
from coursetools.checks import assert_close, assert_equal, forbid, refuse, verify_untampered
verify_untampered()


_generator = torch.Generator().manual_seed(202)
for _B, _D, _H, _scale in [(3, 4, 5, 0.7), (1, 2, 2, 1.5), (5, 7, 3, 0.4), (2, 1, 6, 1.0)]:
    _x = torch.randn(_B, _D, dtype=torch.float64, generator=_generator)
    _h = torch.randn(_B, _H, dtype=torch.float64, generator=_generator)
    _W_xh = _scale * torch.randn(_D, _H, dtype=torch.float64, generator=_generator)
    _W_hh = _scale * torch.randn(_H, _H, dtype=torch.float64, generator=_generator)
    _b = torch.randn(_H, dtype=torch.float64, generator=_generator)
    _cell = nn.RNNCell(_D, _H, nonlinearity="tanh").double()
    with torch.no_grad():  # nn.RNNCell loaded with our weights
        _cell.weight_ih.copy_(_W_xh.T)
        _cell.weight_hh.copy_(_W_hh.T)
        _cell.bias_ih.copy_(0.25 * _b)
        _cell.bias_hh.copy_(0.75 * _b)
        _expected = _cell(_x, _h)
    with refuse(torch, "rnn_tanh_cell", "this exercise asks you to write the step yourself: your solution "
                "called torch.rnn_tanh_cell"), forbid(nn.RNNCell, nn.RNN, nn.GRUCell, nn.GRU):
        _result = rnn_step(_x.clone(), _h.clone(), _W_xh.clone(), _W_hh.clone(), _b.clone())
    assert_equal(_result.dtype, torch.float64, name="the dtype of rnn_step on float64 inputs")
    assert_close(_result, _expected, atol=1e-10, name=f"rnn_step with B={_B}, D={_D}, H={_H} (vs nn.RNNCell)")
### END HIDDEN TESTS
'''

# --- exercise 2: the unrolled loop -----------------------------------------------------------

UNROLL_TASK = r'''
## Exercise 2: unrolling the loop over time (4 points)

Write `rnn_unroll(xs, h0, W_xh, W_hh, b_h) -> (hs, h_last)`, the same RNN run over whole sequences:

* `xs` has shape `(B, T, D)`: `B` sequences of `T` input vectors (batch first: **time is axis 1**);
* `h0` has shape `(B, H)`: the state before the first input; the weights are as in exercise 1;
* `hs` has shape `(B, T, H)`: `hs[:, t]` is the state **after** reading `xs[:, t]`, that is
  $h_{t+1} = \tanh(x_{t} W_{xh} + h_{t} W_{hh} + b_h)$ in 0-based code indices (`h0` itself is not in `hs`);
* `h_last` has shape `(B, H)`: the state after the last input, `hs[:, -1]`.

Each step needs the state of the step before, so this is a Python loop over `t` (you may call your
`rnn_step`); collect the states and stack them along axis 1. With the same weights the result must
equal `torch.nn.RNN(D, H, batch_first=True, nonlinearity="tanh")`, whose `weight_ih_l0` is `W_xh.T`,
`weight_hh_l0` is `W_hh.T` and whose two biases add up to `b_h`. You may not use `nn.RNN`,
`nn.RNNCell`, `nn.GRU`, `nn.GRUCell`, `torch.rnn_tanh` or `torch.rnn_tanh_cell`.
'''

UNROLL_SOLUTION = r'''
def rnn_unroll(xs: torch.Tensor, h0: torch.Tensor, W_xh: torch.Tensor, W_hh: torch.Tensor,
               b_h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Run the tanh RNN over xs (B, T, D) from h0 (B, H): every state hs (B, T, H) and the last (B, H)."""
    ### BEGIN SOLUTION
    h = h0
    states = []
    for t in range(xs.shape[1]):
        h = rnn_step(xs[:, t], h, W_xh, W_hh, b_h)
        states.append(h)
    return torch.stack(states, dim=1), h
    ### END SOLUTION
'''

UNROLL_TESTS = r'''
# D = H = 1: W_xh = 1, W_hh = 0.5, no bias; one input of 0.5, then zeros. The state fades.
xs = torch.tensor([[[0.5], [0.0], [0.0]]])      # (B=1, T=3, D=1)
h0 = torch.zeros(1, 1)
hs, h_last = rnn_unroll(xs, h0, torch.tensor([[1.0]]), torch.tensor([[0.5]]), torch.zeros(1))
print("hs =", hs.flatten(), " h_last =", h_last.flatten())
h1 = torch.tanh(torch.tensor(0.5))
h2 = torch.tanh(0.5 * h1)
h3 = torch.tanh(0.5 * h2)
assert_shape(hs, (1, 3, 1), name="hs")
assert_shape(h_last, (1, 1), name="h_last")
assert_close(hs.flatten(), torch.stack([h1, h2, h3]), atol=1e-6, name="hs (the states after each step)")
assert_close(h_last.flatten(), h3.reshape(1), atol=1e-6, name="h_last (the state after the LAST step)")
hs, h_last = rnn_unroll(torch.randn(2, 5, 3), torch.zeros(2, 4), torch.randn(3, 4), torch.randn(4, 4), torch.randn(4))
assert_shape(hs, (2, 5, 4), name="hs for B=2, T=5, D=3, H=4")
assert_close(h_last, hs[:, -1], name="h_last compared with hs[:, -1]")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: h_last is the first state (hs[:, 0]) instead of
# the last; unrolling over the batch axis (for x in xs, xs[t] instead of xs[:, t]; silent when B == T,
# so one case has B == T); every step started from h0 (state not carried); h0 included in hs
# (T + 1 states) or the last state dropped; states stacked along axis 0 ((T, B, H)); the bias or
# the tanh forgotten; W_hh transposed; calling nn.RNN or torch.rnn_tanh. The reference is
# nn.RNN(batch_first=True, nonlinearity="tanh") loaded with the transposed weights and a split bias.
from coursetools.checks import assert_close, assert_equal, forbid, refuse, verify_untampered
verify_untampered()


_generator = torch.Generator().manual_seed(2)
for _B, _T, _D, _H in [(3, 6, 4, 5), (4, 4, 2, 3), (1, 1, 3, 2), (2, 9, 1, 4), (5, 3, 6, 6)]:
    _xs = torch.randn(_B, _T, _D, dtype=torch.float64, generator=_generator)
    _h0 = 0.5 * torch.randn(_B, _H, dtype=torch.float64, generator=_generator)
    _W_xh = 0.8 * torch.randn(_D, _H, dtype=torch.float64, generator=_generator)
    _W_hh = 0.8 * torch.randn(_H, _H, dtype=torch.float64, generator=_generator)
    _b = torch.randn(_H, dtype=torch.float64, generator=_generator)
    _rnn = nn.RNN(_D, _H, batch_first=True, nonlinearity="tanh").double()
    with torch.no_grad():  # nn.RNN loaded with our weights
        _rnn.weight_ih_l0.copy_(_W_xh.T)
        _rnn.weight_hh_l0.copy_(_W_hh.T)
        _rnn.bias_ih_l0.copy_(0.4 * _b)
        _rnn.bias_hh_l0.copy_(0.6 * _b)
        _expected_hs, _expected_last = _rnn(_xs, _h0[None])
    with refuse(torch, ("rnn_tanh", "rnn_tanh_cell"), "this exercise asks you to write the loop yourself: your "
                "solution called torch's RNN kernel"), forbid(nn.RNN, nn.RNNCell, nn.GRU, nn.GRUCell):
        _hs, _h_last = rnn_unroll(_xs.clone(), _h0.clone(), _W_xh.clone(), _W_hh.clone(), _b.clone())
    _case = f"rnn_unroll with B={_B}, T={_T}, D={_D}, H={_H}"
    assert_equal(tuple(_hs.shape), (_B, _T, _H), name=f"the shape of hs from {_case}")
    assert_close(_hs, _expected_hs, atol=1e-10, name=f"hs from {_case} (vs nn.RNN)")
    assert_close(_h_last, _expected_last[0], atol=1e-10, name=f"h_last from {_case} (vs nn.RNN's h_n)")
    # Causality: changing the last input changes only the last state.
    _changed = _xs.clone()
    _changed[:, -1] += 1.0
    _hs_changed, _ = rnn_unroll(_changed, _h0.clone(), _W_xh, _W_hh, _b)
    assert_close(_hs_changed[:, :-1], _hs[:, :-1], atol=1e-12, name="the states before a changed last input")
### END HIDDEN TESTS
'''

# --- exercise 3: teacher forcing -------------------------------------------------------------

SHIFT_TASK = r'''
## Exercise 3: teacher forcing, shifting the targets (3 points)

A decoder is trained with **teacher forcing**: at step `t` it is fed the *true* previous target
token, not its own guess, and must predict target token `t`. So its inputs are the targets
shifted one position to the right, with `<bos>` in front.

Write `shift_right(targets, bos_id) -> decoder_inputs`:

* `targets` is a `torch.long` tensor `(B, T)`: each row holds the target tokens, then `<eos>`,
  then `<pad>` up to `T` (padding on the right, as in chapter 1);
* `decoder_inputs` has the same shape `(B, T)` and dtype: column 0 is `bos_id`, and column `t >= 1`
  is `targets[:, t - 1]`; the **last** column of `targets` is dropped (nothing is ever predicted
  from it). The padding of each row is kept, one position later;
* do not modify `targets` in place, and use the `bos_id` you are given (not a constant).

Example, `bos_id = 1`: targets `[[5, 6, 7, 2], [8, 2, 0, 0]]` give `[[1, 5, 6, 7], [1, 8, 2, 0]]`.
You may not use `transformer_lib.data.collate_pairs`, which builds these inputs for you.
'''

SHIFT_SOLUTION = r'''
def shift_right(targets: torch.Tensor, bos_id: int) -> torch.Tensor:
    """targets (B, T) -> decoder inputs (B, T): bos_id, then targets[:, :-1]."""
    ### BEGIN SOLUTION
    bos = torch.full_like(targets[:, :1], bos_id)  # (B, 1), same dtype and device
    return torch.cat([bos, targets[:, :-1]], dim=1)
    ### END SOLUTION
'''

SHIFT_TESTS = r'''
targets = torch.tensor([[5, 6, 7, EOS_ID], [8, EOS_ID, PAD_ID, PAD_ID]])
decoder_inputs = shift_right(targets, BOS_ID)
print("targets        =", targets.tolist())
print("decoder inputs =", decoder_inputs.tolist())
assert_equal(decoder_inputs, torch.tensor([[BOS_ID, 5, 6, 7], [BOS_ID, 8, EOS_ID, PAD_ID]]),
             name="shift_right(targets, BOS_ID)")
assert_equal(targets, torch.tensor([[5, 6, 7, EOS_ID], [8, EOS_ID, PAD_ID, PAD_ID]]),
             name="targets after the call (must be unchanged)")
assert_equal(shift_right(torch.tensor([[4, 9]]), 7), torch.tensor([[7, 4]]), name="shift_right([[4, 9]], bos_id=7)")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: dropping the first token instead of the last
# (targets[:, 1:]); torch.roll without overwriting column 0 (the last token wraps to the front);
# <bos> appended at the end; shifting along the batch axis (dim=0); bos_id hard-coded to 1;
# an output of width T + 1; targets modified in place; a float or int32 result (torch.full without
# a dtype); calling collate_pairs. The reference is the library's collate_pairs: its tgt rows are
# <bos> y <eos> <pad>..., so shift_right(tgt[:, 1:]) must equal tgt[:, :-1].
from coursetools.checks import assert_equal, forbid, verify_untampered
verify_untampered()
import random as _random
import transformer_lib.data as _data
import transformer_lib.tokens as _tokens

_rng = _random.Random(22)
for _trial in range(12):
    _pairs = [([3], [_rng.randint(4, 30) for _ in range(_rng.randint(0, 7))]) for _ in range(_rng.randint(1, 6))]
    _tgt = _data.collate_pairs(_pairs)["tgt"]          # (B, T + 1): <bos> y <eos> <pad>...
    _targets, _expected = _tgt[:, 1:].clone(), _tgt[:, :-1].clone()
    with forbid(_data.collate_pairs, _tokens.pad_batch):
        _result = shift_right(_targets, _data.BOS_ID)
    assert_equal(_result, _expected, name=f"shift_right({_targets.tolist()}, {_data.BOS_ID})")
    assert_equal(_targets, _tgt[:, 1:], name="targets after the call (must be unchanged)")
    # Padding kept: a padded target position reappears as padding one step later.
    assert bool((_result[:, 1:][_targets[:, :-1] == _data.PAD_ID] == _data.PAD_ID).all()), "padding must be kept"
_generator = torch.Generator().manual_seed(5)
for _B, _T, _bos in [(3, 5, 1), (1, 1, 4), (6, 2, 9), (4, 4, 0)]:
    _targets = torch.randint(2, 50, (_B, _T), generator=_generator)
    _expected = torch.cat([torch.full((_B, 1), _bos, dtype=torch.long), _targets[:, :-1]], dim=1)
    with forbid(_data.collate_pairs, _tokens.pad_batch):
        _result = shift_right(_targets.clone(), _bos)
    assert_equal(_result, _expected, name=f"shift_right(targets ({_B}, {_T}), bos_id={_bos})")
### END HIDDEN TESTS
'''

# --- exercise 4: the context vector ----------------------------------------------------------

LAST_TASK = r'''
## Exercise 4: the context vector of a padded batch (3 points)

In an encoder-decoder without attention, the decoder sees the source only through **one** vector:
the encoder's state after the last source token, called the *context vector*. In a padded batch
"the last token" is at a different place in every row. The RNN of exercise 2 also reads the
`<pad>` positions after it, so `hs[:, -1]` is **not** the context vector of a short row.

Write `last_states(hs, lengths) -> context`:

* `hs` `(B, T, H)`: the states of exercise 2 for a right-padded batch (`hs[b, t]` after reading token `t`);
* `lengths` `(B,)`, `torch.long`: the number of real tokens of each row, `1 <= lengths[b] <= T`;
* `context` `(B, H)`: row `b` is `hs[b, lengths[b] - 1]`, the state after row `b`'s last real token.

Index with tensors (for example `hs[torch.arange(B), lengths - 1]`) or use `torch.gather`; a loop
over the batch also works. You may not use `torch.nn.utils.rnn.pack_padded_sequence` or
`transformer_lib`'s `Seq2SeqRNN.encode`.
'''

LAST_SOLUTION = r'''
def last_states(hs: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """hs (B, T, H), lengths (B,) -> (B, H): row b is hs[b, lengths[b] - 1]."""
    ### BEGIN SOLUTION
    return hs[torch.arange(hs.shape[0]), lengths - 1]
    ### END SOLUTION
'''

LAST_TESTS = r'''
hs = torch.arange(24.0).reshape(2, 4, 3)    # B = 2, T = 4, H = 3: hs[b, t] = [12b + 3t, ... + 1, ... + 2]
lengths = torch.tensor([2, 4])              # row 0 has 2 real tokens, row 1 has 4
context = last_states(hs, lengths)
print("context =", context)
assert_shape(context, (2, 3), name="last_states(hs (2, 4, 3), lengths)")
assert_close(context, torch.tensor([[3.0, 4.0, 5.0], [21.0, 22.0, 23.0]]), name="last_states(hs, tensor([2, 4]))")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: hs[:, -1] for every row (the state after reading
# padding); lengths used as the index without the - 1 (off by one, or an IndexError for full rows);
# hs[:, lengths - 1] (shape (B, B, H)); gather along the wrong axis; the first state hs[:, 0];
# calling pack_padded_sequence or Seq2SeqRNN.encode. References: nn.RNN's h_n on the packed batch,
# and the library's GRU encoder, whose `final` is the state after each row's last real token.
from coursetools.checks import assert_close, forbid, verify_untampered
verify_untampered()
import torch.nn.utils.rnn as _rnn_utils
from transformer_lib.rnn import Seq2SeqRNN as _Seq2SeqRNN

_forbidden = (_rnn_utils.pack_padded_sequence, _rnn_utils.pad_packed_sequence, _Seq2SeqRNN.encode)
_generator = torch.Generator().manual_seed(9)
for _lengths in ([3, 1, 5, 5, 2], [1], [4, 4], [2, 6, 1, 3]):
    _lengths = torch.tensor(_lengths)
    _B, _T, _D, _H = len(_lengths), int(_lengths.max()), 3, 4
    _xs = torch.randn(_B, _T, _D, dtype=torch.float64, generator=_generator)
    _xs[torch.arange(_T)[None, :] >= _lengths[:, None]] = 0.0      # padding
    _rnn = nn.RNN(_D, _H, batch_first=True).double()
    with torch.no_grad():  # the states, and h_n of the packed batch
        _hs, _ = _rnn(_xs)
        _, _expected = _rnn(_rnn_utils.pack_padded_sequence(_xs, _lengths, batch_first=True, enforce_sorted=False))
    with forbid(*_forbidden):
        _context = last_states(_hs.clone(), _lengths.clone())
    assert_close(_context, _expected[0], atol=1e-10, name=f"last_states for lengths {_lengths.tolist()} (vs nn.RNN on the packed batch)")
# The library's encoder: its context vector is last_states of its own states.
torch.manual_seed(3)
_model = _Seq2SeqRNN(12, 12, embed_dim=5, hidden_dim=6).double()
_src = torch.tensor([[4, 5, 6, 7], [8, 9, 0, 0], [10, 0, 0, 0]])
with torch.no_grad():  # the library encoder's states and context
    _source = _model.encode(_src)
with forbid(*_forbidden):
    _context = last_states(_source.states.clone(), _source.mask.sum(dim=1))
assert_close(_context, _source.final, atol=1e-10, name="last_states of the library encoder's states (vs its final state)")
### END HIDDEN TESTS
'''

# --- free response ---------------------------------------------------------------------------

QUESTION = r'''
## Exercise 5: what the context vector must hold (3 points, graded by hand)

A GRU encoder-decoder with hidden size `H = 64` is trained to **copy** strings of 4 to 20 letters
drawn from 10 symbols; its decoder sees the source only through the context vector `c` (exercise 4).
On the chapter page its exact match on held-out strings falls as the strings get longer. Answer in a
few sentences, in the cell below:

1. What must `c` hold for the decoder to copy a string of length `L`? Count it in bits for `L = 20`.
2. Give two reasons why, at a fixed `H`, longer inputs make the model fail (think of how `c` is
   written, step by step, and of how training reaches the first tokens).
3. Which part of a long output would you expect to go wrong first for the copy task, and why?
   Name one change to the model that removes the bottleneck itself (not just a bigger `H`).
'''

MODEL_ANSWER = r'''
**Model answer and rubric (1 point per part).**

1. Every symbol and its position: the decoder has no other access to the source, so `c` must
   determine the whole string. With 10 symbols that is `L log2 10` bits, about 66 bits for
   `L = 20` (and the length itself); the amount grows linearly with `L` while `c` stays 64 numbers.
2. Any two of: (a) `c` is written by a chain of `L` updates that each mix new input into the same
   `H` numbers, so later tokens overwrite earlier ones; squashing (tanh/gates) and finite
   precision make an ever-denser code of more symbols harder to store and to read back;
   (b) the gradient that teaches the encoder to keep token 1 must flow back through `L` steps and
   shrinks (or explodes) on the way, so long-range dependencies are learned slowly (vanishing
   gradients); (c) exact match needs all `L` tokens right, so even a constant per-token error rate
   `e` gives `(1 - e)^L`, and the per-token error itself grows with `L`; (d) the decoder must also
   count positions from `c` alone over more steps.
3. The beginning of the output: for a copy, the first target tokens are the first source tokens,
   which were read longest ago (furthest from `c` in the encoder's chain) and are needed first,
   so they are the most overwritten. (Reversing the source, as Sutskever et al. did, shortens these
   distances.) The change that removes the bottleneck: **attention**, letting every decoder step
   read all encoder states `hs` and build its own context (Bahdanau et al.; chapter 3). A bigger
   `H` or reversed input only moves the point where accuracy collapses.
'''

CLOSING = r'''
## Where this goes next

You have written a recurrent network from its step up, the inputs of teacher forcing, and the
context vector that is all a decoder without attention knows of its source. In `transformer_lib.rnn`
the same model, with GRU cells, is `Seq2SeqRNN`: its `encode` returns the states, the context vector
(`final`) and the mask, and its decoder is fed `tgt[:, :-1]`, the shifted targets. Chapter 3 keeps
everything but the context: each decoder step attends over all of `hs` instead.
'''


def build() -> list:
    """The cells of the notebook, in order."""
    return [
        markdown(INTRO),
        instructions("grading", GRADING),
        setup("setup", SETUP),
        instructions("step_task", STEP_TASK),
        solution("rnn_step", STEP_SOLUTION),
        tests("test_rnn_step", 2, STEP_TESTS),
        instructions("unroll_task", UNROLL_TASK),
        solution("rnn_unroll", UNROLL_SOLUTION),
        tests("test_rnn_unroll", 4, UNROLL_TESTS),
        instructions("shift_task", SHIFT_TASK),
        solution("shift_right", SHIFT_SOLUTION),
        tests("test_shift_right", 3, SHIFT_TESTS),
        instructions("last_task", LAST_TASK),
        solution("last_states", LAST_SOLUTION),
        tests("test_last_states", 3, LAST_TESTS),
        instructions("context_question", QUESTION),
        free_response("context_answer", 3, MODEL_ANSWER),
        markdown(CLOSING),
    ]


def main() -> None:
    print(f"wrote {write_chapter(ASSIGNMENT, build())}")


if __name__ == "__main__":
    main()
