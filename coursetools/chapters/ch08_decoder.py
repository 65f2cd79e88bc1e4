r'''Chapter 8 exercises: the decoder's masks, the decoder layer, sampling, generation.

``python -m coursetools.chapters.ch08_decoder`` writes ``solutions/ch08_decoder/ch08_decoder.ipynb``,
the nbgrader source (solutions and hidden tests); ``python -m coursetools.release ch08_decoder``
derives the student notebook. Every hidden block starts with instructor notes listing the
mistakes it is there to catch.
'''

from __future__ import annotations


from coursetools.authoring import (code, free_response, instructions, markdown, setup, solution, tests,
                                   write_chapter)

ASSIGNMENT = "ch08_decoder"

INTRO = r'''
# Chapter 8 exercises: the decoder

You will write the parts that make a Transformer *generate*: the masks of a decoder, the decoder
layer (masked self-attention, cross-attention, feed-forward), and the loop that turns a language
model's next-token scores into text, with temperature and top-k sampling. Your layer will give
the same numbers as `torch.nn.TransformerDecoderLayer` once it holds the same weights.

**Learning objectives.** After these exercises you can

1. build the two masks of a decoder: causal-and-padding for its self-attention, padding for its
   cross-attention, in the course's convention (True = may attend);
2. write a decoder layer, post-LN and pre-LN, that takes its queries from the target and its keys
   and values from the encoder's memory;
3. turn logits into a sampled token with a temperature and a top-k filter, reproducibly;
4. generate text autoregressively with a decoder-only model whose context is limited.

The chapter page *The decoder* explains all of this; keep it open.
'''

GRADING = r'''
## How grading works

* In each answer cell, replace the lines `# YOUR CODE HERE` and `raise NotImplementedError()`
  with your code; keep the function names, signatures and docstrings.
* After each answer, run the test cell below it. The **visible tests** check a small worked
  example and tell you what is wrong. When you submit, **hidden tests** in the same cells check
  many more cases, compare your answers with `transformer_lib` and with PyTorch's own
  `torch.nn.TransformerDecoderLayer` in float64, check properties (no token sees the future, a
  sampler draws from the right distribution), and give the cell's points only if everything passes.
* Each exercise says what you may not use: calling a ready-made implementation of the very thing
  you are asked to write earns no points.
* Do not edit or delete the locked cells, and do not reassign functions of `torch`, Python's
  builtins or `transformer_lib`: the tests detect it and the cell scores zero.
* Before submitting: *Kernel → Restart & Run All*, and check that every test cell runs without an
  error. Each cell must finish within 30 seconds (the solutions take well under one second).

| exercise | points |
|---|---|
| 1. The decoder's two masks | 2 |
| 2. `DecoderLayer` | 4 |
| 3. `sample_next_token`: temperature and top-k | 3 |
| 4. `generate`: autoregressive decoding | 3 |
| 5. Question: the mask at training and at generation time (graded by hand) | 3 |
| **total** | **15** |
'''

SETUP = r'''
import math
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

from transformer_lib.models import GPT
from transformer_lib.multihead import MultiHeadAttention
from coursetools.checks import assert_close, assert_equal, assert_shape, forbid, verify_untampered

warnings.filterwarnings("ignore")  # a warning printed by torch must not cost points
torch.manual_seed(0)
torch.set_printoptions(precision=4, sci_mode=False)


def copy_torch_decoder_weights(ours: nn.Module, theirs: nn.TransformerDecoderLayer) -> nn.Module:
    """Copy a torch.nn.TransformerDecoderLayer(batch_first=True) into a DecoderLayer of exercise 2.

    Given to you: the tests check your forward pass, not your loading. PyTorch's names -> ours:
    self_attn -> self_attention, multihead_attn -> cross_attention (both MultiHeadAttention of
    chapter 5, whose in_proj packs W_Q, W_K, W_V as PyTorch does), linear1, linear2, norm1-3 as is.
    """
    with torch.no_grad():
        for mine, torch_attention in ((ours.self_attention, theirs.self_attn),
                                      (ours.cross_attention, theirs.multihead_attn)):
            mine.in_proj.weight.copy_(torch_attention.in_proj_weight)
            mine.in_proj.bias.copy_(torch_attention.in_proj_bias)
            mine.out_proj.weight.copy_(torch_attention.out_proj.weight)
            mine.out_proj.bias.copy_(torch_attention.out_proj.bias)
        for name in ("linear1", "linear2", "norm1", "norm2", "norm3"):
            getattr(ours, name).load_state_dict(getattr(theirs, name).state_dict())
    return ours


print("MultiHeadAttention(8, 2) parameters:", [n for n, _ in MultiHeadAttention(8, 2).named_parameters()])
'''

# --- exercise 1: the decoder's masks -----------------------------------------------------------

MASKS_TASK = r'''
## Exercise 1: the decoder's two masks (2 points)

A decoder attends twice, so a padded batch needs two masks. Masks are **boolean, True = may
attend**, and broadcast over the head axis of the scores `(B, h, T, T)` and `(B, h, T, S)`.
Write `decoder_masks(tgt_lengths, src_lengths, T, S)` for a batch of `B` target sequences padded
to `T` tokens (the real ones are the first `tgt_lengths[b]`) and their `B` source sequences
padded to `S` tokens (real: the first `src_lengths[b]`). Return `(self_mask, memory_mask)`:

* `self_mask`, shape `(B, 1, T, T)`: `self_mask[b, 0, t, s]` is True exactly when target position
  `t` may attend target position `s`: **`s <= t`** (a position sees itself and the past, never the
  future: the causal part) **and** `s` is a real token of sequence `b` (the padding part). Padding
  masks the *keys* (the last axis), never the queries: a padded query row still sees the real
  tokens before it, so no row is empty;
* `memory_mask`, shape `(B, 1, 1, S)`: True at the real source tokens of sequence `b`; the
  cross-attention of every target position may look at all of them (the source is given in full,
  there is no future to hide).

`tgt_lengths` and `src_lengths` are `torch.long` tensors `(B,)` with values in `1..T` and `1..S`.
Build the masks with comparisons of `torch.arange` values (and `&`). You may not use
`transformer_lib`'s `causal_mask`, `padding_mask` or `lengths_to_mask`, or
`nn.Transformer.generate_square_subsequent_mask`.
'''

MASKS_SOLUTION = r'''
def decoder_masks(tgt_lengths: torch.Tensor, src_lengths: torch.Tensor, T: int, S: int
                  ) -> tuple[torch.Tensor, torch.Tensor]:
    """(B,), (B,) lengths -> self_mask (B, 1, T, T) causal & target padding, memory_mask (B, 1, 1, S)."""
    ### BEGIN SOLUTION
    query_pos = torch.arange(T).view(1, 1, T, 1)
    key_pos = torch.arange(T).view(1, 1, 1, T)
    real_target_key = key_pos < tgt_lengths.view(-1, 1, 1, 1)               # (B, 1, 1, T)
    no_future = key_pos <= query_pos                                         # (1, 1, T, T)
    real_source_key = torch.arange(S).view(1, 1, 1, S) < src_lengths.view(-1, 1, 1, 1)
    return no_future & real_target_key, real_source_key
    ### END SOLUTION
'''

MASKS_TESTS = r'''
self_mask, memory_mask = decoder_masks(torch.tensor([3, 2]), torch.tensor([4, 1]), T=3, S=4)
print("self_mask[0, 0] (length 3):\n", self_mask[0, 0], "\nself_mask[1, 0] (length 2):\n", self_mask[1, 0])
print("memory_mask[:, 0, 0]:\n", memory_mask[:, 0, 0])
assert_shape(self_mask, (2, 1, 3, 3), name="self_mask")
assert_shape(memory_mask, (2, 1, 1, 4), name="memory_mask")
assert_equal(self_mask.dtype, torch.bool, name="self_mask.dtype")
assert_close(self_mask[0, 0], torch.tensor([[True, False, False], [True, True, False], [True, True, True]]),
             name="self_mask[0, 0] (causal: row t is True at columns 0..t)")
assert_close(self_mask[1, 0], torch.tensor([[True, False, False], [True, True, False], [True, True, False]]),
             name="self_mask[1, 0] (length 2: column 2 is padding, row 2 still sees 0 and 1)")
assert_close(memory_mask[:, 0, 0], torch.tensor([[True, True, True, True], [True, False, False, False]]),
             name="memory_mask[:, 0, 0]")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: a causal mask that hides the diagonal (a token
# cannot see itself: row 0 is empty) or lets the next token in (tril(1)); the mask transposed
# (upper triangle: every token sees the future); padding applied to the queries (rows) instead of
# the keys (columns), or to both; < and <= confused in the padding (one pad token seen, or the
# last real token hidden); target lengths used for the memory; shapes (B, T, T) or (B, S) without
# the broadcast axes; int or float masks; calling transformer_lib's masks.
from coursetools.checks import assert_close, forbid, verify_untampered
verify_untampered()
from transformer_lib.attention import causal_mask as _causal, padding_mask as _padding
from transformer_lib.tokens import lengths_to_mask as _lengths_to_mask

_generator = torch.Generator().manual_seed(808)
for _B, _T, _S in [(1, 1, 1), (2, 5, 3), (3, 4, 7), (4, 6, 6), (5, 8, 2)]:
    _tgt = torch.randint(1, _T + 1, (_B,), generator=_generator)
    _src = torch.randint(1, _S + 1, (_B,), generator=_generator)
    _tgt[0], _src[-1] = _T, _S  # at least one full row of each
    _expected_self = _causal(_T) & _padding(_tgt, _T)[:, None, None, :]
    _expected_memory = _padding(_src, _S)[:, None, None, :]
    with forbid(_causal, _padding, _lengths_to_mask, nn.Transformer.generate_square_subsequent_mask):
        _self, _memory = decoder_masks(_tgt.clone(), _src.clone(), _T, _S)
    _case = f"decoder_masks(tgt_lengths={_tgt.tolist()}, src_lengths={_src.tolist()}, T={_T}, S={_S})"
    assert_close(_self, _expected_self, name=f"self_mask of {_case}")
    assert_close(_memory, _expected_memory, name=f"memory_mask of {_case}")
    assert bool(_self.any(-1).all()), f"{_case}: a row of self_mask is all False (a query that sees nothing)"
### END HIDDEN TESTS
'''

# --- exercise 2: the decoder layer -------------------------------------------------------------

LAYER_TASK = r'''
## Exercise 2: `DecoderLayer` (4 points)

A decoder layer has three sublayers, each inside a residual connection with a layer norm:

1. **masked self-attention**: queries, keys and values all come from the target `x`, with
   `self_mask` (causal and target padding, exercise 1);
2. **cross-attention**: queries from the decoder (the output of sublayer 1), **keys and values from
   `memory`**, the encoder's output `(B, S, d_model)`, with `memory_mask` (source padding);
3. **feed-forward**: `linear2(relu(linear1(z)))`, at every position alone.

With `norm_first=False` (**post-LN**, as in the paper) each sublayer `f` with its norm `n` maps
`x -> n(x + f(x))`; with `norm_first=True` (**pre-LN**) it maps `x -> x + f(n(x))`, and the layer
ends without a norm. Sublayer 1 uses `norm1`, sublayer 2 `norm2`, sublayer 3 `norm3`.

`__init__` is written for you (keep it: the names are those of PyTorch's layer, and the setup
cell's `copy_torch_decoder_weights` relies on them): the two attentions are the
`MultiHeadAttention` of chapter 5 from `transformer_lib`, called as
`attention(query, key, value, mask)`, which returns `(output, weights)` and takes a boolean mask,
True = may attend, broadcastable to `(B, h, T, S)`. Write `forward(x, memory, self_mask=None,
memory_mask=None)` returning `(B, T, d_model)`; a mask that is `None` masks nothing. There is no
dropout.

PyTorch's `nn.TransformerDecoderLayer` computes the same function with its masks the other way
round: its boolean masks are True = **blocked**, its causal mask is `tgt_mask`, and its padding
masks are separate arguments, `tgt_key_padding_mask` and `memory_key_padding_mask` `(B, length)`,
True at the **pad** tokens. The tests translate.

You may use `MultiHeadAttention` (the layer's own attributes), `nn.Linear`, `nn.LayerNorm` and
`F.relu`. You may not use `torch.nn.TransformerDecoderLayer` (or `TransformerDecoder`,
`Transformer`), nor anything from `transformer_lib.layers` (`DecoderLayer`, `EncoderLayer`,
`Residual`, `PositionwiseFeedForward`).
'''

LAYER_SOLUTION = r'''
class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention to the memory, feed-forward; each with residual + norm."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, norm_first: bool = False):
        super().__init__()
        self.norm_first = norm_first
        self.self_attention = MultiHeadAttention(d_model, num_heads)   # PyTorch: self_attn
        self.cross_attention = MultiHeadAttention(d_model, num_heads)  # PyTorch: multihead_attn
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)

    def forward(self, x: torch.Tensor, memory: torch.Tensor, self_mask: torch.Tensor | None = None,
                memory_mask: torch.Tensor | None = None) -> torch.Tensor:
        """x (B, T, d_model), memory (B, S, d_model); masks True = may attend -> (B, T, d_model)."""
        ### BEGIN SOLUTION
        def look_back(z):       # queries, keys, values: all from the target
            return self.self_attention(z, z, z, self_mask)[0]

        def look_at_source(z):  # queries from the target; keys and values from the memory
            return self.cross_attention(z, memory, memory, memory_mask)[0]

        def per_position(z):
            return self.linear2(F.relu(self.linear1(z)))

        target_states = x
        for sublayer, norm in ((look_back, self.norm1), (look_at_source, self.norm2), (per_position, self.norm3)):
            if self.norm_first:   # pre-LN: normalise what goes into the sublayer
                target_states = target_states + sublayer(norm(target_states))
            else:                 # post-LN: normalise the sum
                target_states = norm(target_states + sublayer(target_states))
        return target_states
        ### END SOLUTION
'''

LAYER_TESTS = r'''
torch.manual_seed(8)
B, T, S, d_model, h, d_ff = 2, 5, 7, 16, 4, 32
theirs = nn.TransformerDecoderLayer(d_model, h, d_ff, dropout=0.0, batch_first=True).double().eval()
ours = copy_torch_decoder_weights(DecoderLayer(d_model, h, d_ff).double(), theirs)
x = torch.randn(B, T, d_model, dtype=torch.float64)
memory = torch.randn(B, S, d_model, dtype=torch.float64)
causal = torch.ones(T, T, dtype=torch.bool).tril()             # True = may attend (the course)
out = ours(x, memory, causal)
assert_shape(out, (B, T, d_model), name="DecoderLayer(16, 4, 32)(x (2, 5, 16), memory (2, 7, 16), causal)")
expected = theirs(x, memory, tgt_mask=~causal)                  # True = blocked (PyTorch)
print("largest difference from nn.TransformerDecoderLayer (post-LN):", float((out - expected).abs().max()))
assert_close(out, expected, atol=1e-10, name="DecoderLayer (post-LN, causal) vs nn.TransformerDecoderLayer")
# a causal decoder: changing the last target token changes no earlier output
x_changed = x.clone()
x_changed[:, -1] = 100.0
assert_close(ours(x_changed, memory, causal)[:, :-1], out[:, :-1], atol=1e-10,
             name="outputs at positions 0..T-2 after changing the last target token")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: cross-attention taking its keys and values from
# the decoder (x or the self-attention output) instead of the memory, or its queries from the
# memory; the self-attention mask not applied (the future leaks) or the memory mask given to the
# self-attention; masks ignored when given; norm_first ignored, pre-LN with a norm also after the
# sum, or post-LN normalising before the sum; norms used in the wrong order; a residual missing
# (e.g. around the cross-attention); the cross-attention fed the original x instead of the output
# of sublayer 1; GELU instead of ReLU; attention weights instead of outputs; calling PyTorch's or
# transformer_lib's decoder layer. Compared with nn.TransformerDecoderLayer in float64.
from coursetools.checks import assert_close, forbid, verify_untampered
verify_untampered()
from transformer_lib import layers as _layers

_generator = torch.Generator().manual_seed(2017)
_forbidden = (_layers.DecoderLayer, _layers.EncoderLayer, _layers.Residual, _layers.PositionwiseFeedForward,
              nn.TransformerDecoderLayer, nn.TransformerDecoder, nn.TransformerEncoderLayer, nn.Transformer)
for _B, _T, _S, _d, _h, _ff, _norm_first in [(2, 5, 7, 16, 4, 32, False), (2, 5, 7, 16, 4, 32, True),
                                             (3, 6, 6, 12, 3, 20, False), (3, 6, 6, 12, 3, 20, True),
                                             (1, 4, 9, 8, 1, 16, True), (4, 7, 3, 8, 2, 24, False)]:
    torch.manual_seed(_T * 10 + _S)
    _theirs = nn.TransformerDecoderLayer(_d, _h, _ff, dropout=0.0, batch_first=True, norm_first=_norm_first)
    _theirs = _theirs.double().eval()
    with torch.no_grad():
        for _p in _theirs.parameters():  # non-trivial norms and biases too
            _p.add_(0.3 * torch.randn(_p.shape, dtype=torch.float64, generator=_generator))
    _ours = copy_torch_decoder_weights(DecoderLayer(_d, _h, _ff, norm_first=_norm_first).double(), _theirs)
    _x = torch.randn(_B, _T, _d, dtype=torch.float64, generator=_generator)
    _memory = torch.randn(_B, _S, _d, dtype=torch.float64, generator=_generator)
    _tgt_len = torch.randint(1, _T + 1, (_B,), generator=_generator)
    _src_len = torch.randint(1, _S + 1, (_B,), generator=_generator)
    _tgt_len[0], _src_len[-1] = _T, _S
    _tgt_keep = torch.arange(_T)[None, :] < _tgt_len[:, None]  # (B, T) True at real tokens
    _src_keep = torch.arange(_S)[None, :] < _src_len[:, None]
    _causal = torch.ones(_T, _T, dtype=torch.bool).tril()
    _case = f"B={_B}, T={_T}, S={_S}, d_model={_d}, h={_h}, d_ff={_ff}, norm_first={_norm_first}"
    with torch.no_grad():
        _expected = {
            "no masks": _theirs(_x, _memory),
            "causal": _theirs(_x, _memory, tgt_mask=~_causal),
            "causal and padding": _theirs(_x, _memory, tgt_mask=~_causal, tgt_key_padding_mask=~_tgt_keep,
                                          memory_key_padding_mask=~_src_keep),
        }
        with forbid(*_forbidden):
            _got = {
                "no masks": _ours(_x.clone(), _memory.clone()),
                "causal": _ours(_x.clone(), _memory.clone(), _causal.clone()),
                "causal and padding": _ours(_x.clone(), _memory.clone(), _causal & _tgt_keep[:, None, None, :],
                                            _src_keep[:, None, None, :]),
            }
            # properties: the future and the padded memory change nothing
            _t = int(torch.randint(0, _T - 1, (1,), generator=_generator)) if _T > 1 else 0
            _x_future = _x.clone()
            _x_future[:, _t + 1:] = torch.randn(_B, _T - _t - 1, _d, dtype=torch.float64, generator=_generator)
            _future = _ours(_x_future, _memory.clone(), _causal.clone())
            _memory_pad = torch.where(_src_keep[..., None], _memory, 50.0)
            _padded = _ours(_x.clone(), _memory_pad, _causal.clone(), _src_keep[:, None, None, :])
    for _name in _expected:
        assert_close(_got[_name], _expected[_name], atol=1e-10,
                     name=f"DecoderLayer ({_name}) vs nn.TransformerDecoderLayer, {_case}")
    assert_close(_future[:, : _t + 1], _got["causal"][:, : _t + 1], atol=1e-10,
                 name=f"outputs at positions 0..{_t} after changing target tokens {_t + 1}.., {_case}")
    assert_close(_padded, _ours(_x, _memory, _causal, _src_keep[:, None, None, :]).detach(), atol=1e-10,
                 name=f"output after changing padded memory positions, {_case}")
### END HIDDEN TESTS
'''

# --- exercise 3: sampling the next token -------------------------------------------------------

SAMPLE_TASK = r'''
## Exercise 3: `sample_next_token`: temperature and top-k (3 points)

A language model gives, at the last position, a vector of logits `z` over the `n_vocab` tokens.
Write `sample_next_token(logits, temperature=1.0, top_k=None, generator=None)`:

* `logits` has shape `(B, n_vocab)`; return the chosen token ids, shape `(B, 1)`, dtype `torch.long`;
* `temperature == 0` means **greedy**: the argmax of each row, no randomness;
* otherwise **divide the logits by the temperature first**, then, if `top_k` is not `None`, keep
  only the `top_k` largest logits of each row (set the others to `-inf`; a `top_k` larger than
  `n_vocab` keeps them all; you may assume there are no ties), then take the softmax:
  $p_i \propto \exp(z_i / \tau)$ over the kept tokens, zero elsewhere;
* draw one token per row with `torch.multinomial(probs, 1, generator=generator)`: every random
  number must come from `generator`, so that the same seed gives the same tokens;
* do not modify `logits` in place.

With `top_k=1` this is greedy at any temperature. You may use `torch.topk`, `torch.softmax`,
`masked_fill` and `torch.multinomial`. You may not use `transformer_lib`'s `sample_next_token`,
`filter_logits` or `sample_decode`.
'''

SAMPLE_SOLUTION = r'''
def sample_next_token(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None,
                      generator: torch.Generator | None = None) -> torch.Tensor:
    """(B, n_vocab) logits -> (B, 1) token ids drawn from softmax(logits / temperature) over the top_k."""
    ### BEGIN SOLUTION
    if temperature == 0:
        return torch.argmax(logits, dim=-1).unsqueeze(-1)
    scaled = logits / temperature                      # sharpen (< 1) or flatten (> 1) before the softmax
    if top_k is not None:
        keep = min(top_k, scaled.shape[-1])
        threshold = scaled.topk(keep, dim=-1).values[..., [-1]]  # the k-th largest of each row
        scaled = scaled.masked_fill(scaled < threshold, -math.inf)
    return torch.multinomial(scaled.softmax(dim=-1), num_samples=1, generator=generator)
    ### END SOLUTION
'''

SAMPLE_TESTS = r'''
logits = torch.tensor([[2.0, 1.0, 0.0, -1.0], [0.0, 3.0, 0.5, 0.2]])
greedy = sample_next_token(logits, temperature=0)
print("greedy:", greedy.tolist())
assert_equal(greedy, torch.tensor([[0], [1]]), name="sample_next_token(logits, temperature=0)")
drawn = sample_next_token(logits, generator=torch.Generator().manual_seed(0))
assert_shape(drawn, (2, 1), name="sample_next_token(logits) for B = 2")
assert_equal(drawn.dtype, torch.long, name="the dtype of the token ids")
again = sample_next_token(logits, generator=torch.Generator().manual_seed(0))
assert_equal(again, drawn, name="a second draw with the same seed (all randomness from `generator`)")
# 4000 draws from one row: frequencies close to softmax(z / 0.5) over the top 3
row = torch.tensor([[2.0, 1.0, 0.0, -1.0]])
draws = sample_next_token(row.expand(4000, 4), temperature=0.5, top_k=3, generator=torch.Generator().manual_seed(1))
frequencies = torch.bincount(draws.flatten(), minlength=4) / 4000.0
expected = torch.softmax(torch.tensor([2.0, 1.0, 0.0]) / 0.5, dim=0)
print("frequencies:", frequencies.tolist(), " expected:", expected.tolist() + [0.0])
assert_close(frequencies, torch.cat([expected, torch.zeros(1)]), atol=0.03,
             name="frequencies of 4000 draws (temperature 0.5, top_k 3)")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: the temperature applied after the softmax
# (dividing probabilities by tau changes nothing once they are renormalised) or multiplied
# instead of divided; top-k keeping k - 1 or k + 1 tokens (a "< k-th" vs "<= k-th" slip, an
# off-by-one index into topk), keeping the smallest, or masking with 0 instead of -inf; top_k >
# n_vocab crashing; temperature 0 dividing by zero; the global RNG instead of `generator`; shape
# (B,) instead of (B, 1); logits modified in place; calling transformer_lib's sampler.
# Frequencies are checked on 30,000 seeded draws (a deviation of 0.02 is more than 4 standard
# deviations).
from coursetools.checks import assert_close, assert_equal, forbid, verify_untampered
verify_untampered()
from transformer_lib import decoding as _decoding, models as _models

_forbidden = (_models.sample_next_token, _decoding.filter_logits, _decoding.sample_decode)
_N = 30000
_generator = torch.Generator().manual_seed(31)
for _V, _tau, _k in [(6, 0.5, None), (6, 2.0, None), (7, 1.0, 3), (7, 0.7, 4), (5, 1.5, 2), (8, 1.0, 8), (4, 0.8, 10)]:
    _row = torch.randperm(_V, generator=_generator).double() * 0.6 - 1.0 + 0.1 * torch.rand(_V, generator=_generator, dtype=torch.float64)
    _scaled = _row / _tau
    _expected = torch.zeros(_V, dtype=torch.float64)
    _top = _scaled.topk(min(_k or _V, _V)).indices
    _expected[_top] = torch.softmax(_scaled[_top], dim=0)
    _logits = _row.float().expand(_N, _V).clone()
    _before = _logits.clone()
    with forbid(*_forbidden):
        _draws = sample_next_token(_logits, temperature=_tau, top_k=_k, generator=torch.Generator().manual_seed(_V))
    _case = f"sample_next_token(logits (N, {_V}), temperature={_tau}, top_k={_k})"
    assert_shape(_draws, (_N, 1), name=_case)
    assert_equal(_draws.dtype, torch.long, name=f"the dtype of {_case}")
    assert_close(_logits, _before, atol=0, rtol=0, name=f"the logits after {_case} (modified in place?)")
    _frequencies = torch.bincount(_draws.flatten(), minlength=_V).double() / _N
    _kept = int((_frequencies > 0).sum())
    assert _kept == min(_k or _V, _V), f"{_case} drew {_kept} different tokens, expected exactly {min(_k or _V, _V)}"
    assert_close(_frequencies, _expected, atol=0.02, rtol=0, name=f"the frequencies of {_N} draws of {_case}")
# greedy: temperature 0, and top_k = 1 at any temperature; ids of a batch of rows
_many = torch.randn(9, 13, generator=_generator)
with forbid(*_forbidden):
    _greedy = sample_next_token(_many.clone(), temperature=0)
    _top1 = sample_next_token(_many.clone(), temperature=1.7, top_k=1, generator=torch.Generator().manual_seed(0))
assert_equal(_greedy, _many.argmax(-1, keepdim=True), name="sample_next_token(logits (9, 13), temperature=0)")
assert_equal(_top1, _many.argmax(-1, keepdim=True), name="sample_next_token(logits (9, 13), temperature=1.7, top_k=1)")
# all randomness from the generator: the global seed changes nothing, the generator's seed does
_flat = torch.zeros(500, 10)
with forbid(*_forbidden):
    torch.manual_seed(1)
    _a = sample_next_token(_flat.clone(), generator=torch.Generator().manual_seed(5))
    torch.manual_seed(2)
    _b = sample_next_token(_flat.clone(), generator=torch.Generator().manual_seed(5))
    _c = sample_next_token(_flat.clone(), generator=torch.Generator().manual_seed(6))
assert_equal(_a, _b, name="draws with the same generator seed and different global seeds")
assert not bool((_a == _c).all()), "draws with different generator seeds should differ: use `generator`"
### END HIDDEN TESTS
'''

# --- exercise 4: generation --------------------------------------------------------------------

GENERATE_TASK = r'''
## Exercise 4: `generate`: autoregressive decoding (3 points)

A decoder-only language model (`transformer_lib.models.GPT`) maps token ids `(B, T)` to logits
`(B, T, n_vocab)`: row `t` scores the token that follows position `t`. It reads at most
`model.max_len` tokens. Write `generate(model, idx, max_new_tokens, temperature=1.0, top_k=None,
generator=None)` that extends `idx` one token at a time, `max_new_tokens` times:

1. take the **last `model.max_len` tokens** of the sequence so far as the context (all of it when
   it is shorter);
2. run the model on the context and keep the logits of the **last position**, `(B, n_vocab)`;
3. choose the next token with **your `sample_next_token`** of exercise 3 (pass `temperature`,
   `top_k` and `generator` on); append it.

Return the whole sequence, `(B, T + max_new_tokens)`, the prompt `idx` unchanged at its start
(and `idx` itself not modified). Run the model under `torch.no_grad()`: nothing here is trained.
Recompute from the context at every step (no key/value cache: chapter 10 adds one).

The visible tests use your `sample_next_token`; the hidden tests replace it with a reference
sampler while they run, so that this exercise is graded on its own. You may not use
`GPT.generate`, `transformer_lib`'s `sample_next_token` or `transformer_lib.decoding`.
'''

GENERATE_SOLUTION = r'''
def generate(model: nn.Module, idx: torch.Tensor, max_new_tokens: int, temperature: float = 1.0,
             top_k: int | None = None, generator: torch.Generator | None = None) -> torch.Tensor:
    """Extend the ids idx (B, T) by max_new_tokens sampled tokens -> (B, T + max_new_tokens)."""
    ### BEGIN SOLUTION
    grown = idx  # (B, T), then one column longer per step
    with torch.no_grad():
        for _ in range(max_new_tokens):
            window = grown[:, max(0, grown.shape[1] - model.max_len):]  # what the model can read
            last_scores = model(window)[:, -1, :]                              # (B, n_vocab)
            chosen = sample_next_token(last_scores, temperature, top_k, generator)
            grown = torch.cat((grown, chosen), dim=1)
    return grown  # the prompt, then max_new_tokens new ids
    ### END SOLUTION
'''

GENERATE_TESTS = r'''
torch.manual_seed(4)
lm = GPT(vocab_size=12, d_model=16, num_heads=2, num_layers=2, d_ff=32, max_len=6).eval()
prompt = torch.tensor([[1, 5, 7], [2, 2, 9]])
out = generate(lm, prompt, max_new_tokens=5, temperature=0)
print("greedy continuation:\n", out)
assert_shape(out, (2, 8), name="generate(lm, prompt (2, 3), max_new_tokens=5)")
assert_equal(out[:, :3], prompt, name="the first 3 tokens of the output (the prompt)")
assert_equal(prompt, torch.tensor([[1, 5, 7], [2, 2, 9]]), name="the prompt after generate (do not modify it)")
# greedy step 1 by hand: the argmax of the last position's logits
assert_equal(out[:, 3], lm(prompt)[:, -1].argmax(-1), name="the first generated token (greedy)")
# 8 tokens > max_len = 6: the model only ever reads the last 6
assert_equal(out, lm.generate(prompt, 5, temperature=0, use_cache=False), name="greedy generate vs GPT.generate")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: the context not cropped (the model refuses
# more than max_len tokens) or cropped to the first max_len tokens; the logits of position 0
# instead of the last; only the newest token fed back (the model forgets the prompt); only the
# new tokens returned, or the prompt dropped; tokens appended along the wrong axis; temperature,
# top_k or generator not passed on (sampled sequences then differ from the reference); the prompt
# modified in place; calling GPT.generate. The student's sample_next_token is replaced by a
# reference sampler so that this exercise does not depend on exercise 3.
from coursetools.checks import assert_equal, forbid, verify_untampered
verify_untampered()
from transformer_lib import decoding as _decoding, models as _models


def _reference_sampler(logits, temperature=1.0, top_k=None, generator=None):
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    _z = logits / temperature
    if top_k is not None:
        _z = _z.masked_fill(_z < _z.topk(min(top_k, _z.size(-1))).values[:, -1:], float("-inf"))
    return torch.multinomial(torch.softmax(_z, dim=-1), 1, generator=generator)


_students_sampler = globals().get("sample_next_token")
globals()["sample_next_token"] = _reference_sampler
try:
    _generator = torch.Generator().manual_seed(1188)
    for _V, _L, _B, _T, _n, _tau, _k in [(11, 8, 2, 5, 7, 0, None), (11, 8, 3, 2, 9, 1.0, None),
                                         (13, 6, 2, 6, 6, 0.7, 3), (9, 10, 1, 1, 12, 1.3, 5),
                                         (7, 5, 4, 4, 0, 1.0, None)]:
        torch.manual_seed(_V * _L)
        _lm = _models.GPT(_V, 16, 2, 2, 32, _L).eval()
        with torch.no_grad():
            _lm.embedding.token.weight.mul_(0.25)  # softer logits: samples depend on every choice
        _prompt = torch.randint(0, _V, (_B, _T), generator=_generator)
        _expected = _lm.generate(_prompt.clone(), _n, temperature=_tau, top_k=_k, use_cache=False,
                                 generator=torch.Generator().manual_seed(_n))
        _given = _prompt.clone()
        with forbid(vars(_models.GPT)["generate"], _models.sample_next_token, _decoding.sample_decode,
                    _decoding.greedy_decode, _decoding.filter_logits):
            _got = generate(_lm, _given, _n, temperature=_tau, top_k=_k, generator=torch.Generator().manual_seed(_n))
        _case = f"generate(GPT(max_len={_L}), prompt {(_B, _T)}, {_n}, temperature={_tau}, top_k={_k})"
        assert_equal(_given, _prompt, name=f"the prompt after {_case}")
        assert_equal(_got, _expected, name=_case)
finally:  # the student's own sampler is put back
    globals()["sample_next_token"] = _students_sampler
### END HIDDEN TESTS
'''

DEMO = r'''
# Not graded: temperature at work. One row of logits, the distribution softmax(z / tau) for three tau.
z = torch.tensor([3.0, 2.0, 1.0, 0.5, 0.0, -1.0])
for tau in (0.5, 1.0, 1.5):
    print(f"tau = {tau}:", [round(p, 3) for p in torch.softmax(z / tau, dim=0).tolist()])
'''

# --- free response ------------------------------------------------------------------------------

QUESTION = r'''
## Exercise 5: the mask at training and at generation time (3 points, graded by hand)

Answer in a few sentences each, in the cell below.

1. A decoder-only model is trained on a window of `T` tokens in **one** forward pass: the logits at
   every position `t` are scored against token `t + 1`. What would happen to the training loss if
   the causal mask were left out, and why would the trained model then be useless for generating?
2. Your `generate` reruns the whole context at every step and keeps only the last position's
   logits, and the last position is allowed to see every token of the context anyway. Is the causal
   mask still needed at generation time? Answer for a model with at least two layers, and say what
   goes wrong without it.
3. On the chapter page, samples at temperature 0.5 repeat themselves and samples at 1.5 invent
   words. Explain both with $p_i \propto \exp(z_i / \tau)$, and say what top-k changes at a high
   temperature.
'''

MODEL_ANSWER = r'''
**Model answer and rubric (1 point per part).**

1. Without the mask, position `t` attends to token `t + 1`, the very token it must predict. The
   model learns to copy it from the next position: the training (and validation) loss falls close
   to zero, but it has learned nothing about predicting. At generation time token `t + 1` does not
   exist yet (the context ends at `t`), so the copying trick has nothing to copy and the model's
   predictions are garbage: it was trained on a task different from the one it is used for.
   (Credit for: the target leaks, the loss is misleadingly low, the future is absent at generation.)
2. Yes. With one layer, the last position's output depends only on the (all visible) context, so
   the mask changes nothing for it. With two or more layers, the last position's second-layer
   attention reads the first-layer outputs of the *earlier* positions as keys and values; during
   training those were computed causally (position `s` saw only `0..s`). Without the mask at
   generation they would have seen later tokens, a different computation from the one the weights
   were trained for, so the logits would change (a train/test mismatch). Keeping the mask makes
   every step compute exactly what training computed; it is also what makes a key/value cache
   valid, since earlier positions' keys and values never change as tokens are appended.
3. Dividing the logits by $\tau < 1$ widens the gaps between them, so the softmax concentrates on
   the most likely tokens: the text is safe and repetitive (at $\tau \to 0$ it is greedy and falls
   into loops such as repeated common words). $\tau > 1$ shrinks the gaps, flattening the
   distribution towards uniform: unlikely characters get real probability and the text becomes
   noisy, with invented words. Top-k sets every token outside the `k` most likely to probability
   zero, so at a high temperature the sampler can still be adventurous among plausible tokens but
   never picks the long tail of rubbish.
'''

CLOSING = r'''
## Where this goes next

You have built the decoder's masks, its layer (checked against PyTorch weight for weight, post-LN
and pre-LN), and the two functions that make a language model write. In `transformer_lib` the
layer is `layers.DecoderLayer` (and `Decoder`, a stack of them), the sampler
`models.sample_next_token`, and `GPT.generate` runs your loop with a key/value cache. Chapter 9
puts an encoder and a decoder together and trains the whole Transformer.
'''


def build() -> list:
    """The cells of the notebook, in order."""
    return [
        markdown(INTRO),
        instructions("grading", GRADING),
        setup("setup", SETUP),
        instructions("masks_task", MASKS_TASK),
        solution("decoder_masks", MASKS_SOLUTION),
        tests("test_decoder_masks", 2, MASKS_TESTS),
        instructions("layer_task", LAYER_TASK),
        solution("decoder_layer", LAYER_SOLUTION),
        tests("test_decoder_layer", 4, LAYER_TESTS),
        instructions("sample_task", SAMPLE_TASK),
        solution("sample_next_token", SAMPLE_SOLUTION),
        tests("test_sample_next_token", 3, SAMPLE_TESTS),
        code(DEMO),
        instructions("generate_task", GENERATE_TASK),
        solution("generate", GENERATE_SOLUTION),
        tests("test_generate", 3, GENERATE_TESTS),
        instructions("mask_question", QUESTION),
        free_response("mask_answer", 3, MODEL_ANSWER),
        markdown(CLOSING),
    ]


def main() -> None:
    print(f"wrote {write_chapter(ASSIGNMENT, build())}")


if __name__ == "__main__":
    main()
