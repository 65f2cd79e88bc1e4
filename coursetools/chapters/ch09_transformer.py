r'''Chapter 9 exercises: label smoothing, the warm-up schedule, greedy decoding, beam search.

``python -m coursetools.chapters.ch09_transformer`` writes
``solutions/ch09_transformer/ch09_transformer.ipynb``, the nbgrader source (solutions and hidden
tests); ``python -m coursetools.release ch09_transformer`` derives the student notebook.
Every hidden block starts with instructor notes listing the mistakes it is there to catch.
'''

from __future__ import annotations


from coursetools.authoring import (code, free_response, instructions, markdown, setup, solution, tests,
                                   write_chapter)

ASSIGNMENT = "ch09_transformer"

INTRO = r'''
# Chapter 9 exercises: training and decoding the Transformer

The model itself is built: `transformer_lib.models.Transformer` assembles the encoder and decoder
of the previous chapters. What turns it into a translator is the training recipe and the search
for an output. You will write four of those pieces yourself: the label-smoothed loss, the
warm-up learning-rate schedule of the paper, greedy decoding and beam search.

**Learning objectives.** After these exercises you can

1. write label-smoothed cross-entropy exactly as PyTorch defines it, padding positions ignored;
2. compute the warm-up schedule of Vaswani et al. (2017) and say where it peaks;
3. decode an encoder-decoder model greedily, one token at a time, stopping at `<eos>`;
4. write beam search that ranks hypotheses by their total log-probability, and say when it finds
   a better output than greedy decoding.

The chapter page *The Transformer, trained* explains all of this; keep it open.
'''

GRADING = r'''
## How grading works

* In each answer cell, replace the lines `# YOUR CODE HERE` and `raise NotImplementedError()`
  with your code; keep the function names, signatures and docstrings.
* After each answer, run the test cell below it. The **visible tests** check a small worked
  example and tell you what is wrong. When you submit, **hidden tests** in the same cells check
  many more cases, compare your answers with PyTorch's `F.cross_entropy` and with
  `transformer_lib`'s reference implementations (on the toy model below and on a real
  `Transformer`, in float64), and give the cell's points only if everything passes.
* Each exercise says what you may not use: calling a ready-made implementation of the very thing
  you are asked to write earns no points.
* Do not edit or delete the locked cells, and do not reassign functions of `torch`, Python's
  builtins or `transformer_lib`: the tests detect it and the cell scores zero.
* Before submitting: *Kernel → Restart & Run All*, and check that every test cell runs without an
  error. Each cell must finish within 30 seconds (the solutions take well under one second).

| exercise | points |
|---|---|
| 1. Label-smoothed cross-entropy | 3 |
| 2. The warm-up schedule | 2 |
| 3. Greedy decoding | 3 |
| 4. Beam search | 4 |
| 5. Question: smoothing, search and short outputs (graded by hand) | 3 |
| **total** | **15** |
'''

SETUP = r'''
import math
import warnings
import zlib

import torch
import torch.nn.functional as F

from coursetools.checks import assert_close, assert_equal, assert_shape, forbid, verify_untampered

warnings.filterwarnings("ignore")  # a warning printed by torch must not cost points
torch.manual_seed(0)
PAD_ID, BOS_ID, EOS_ID, UNK_ID = 0, 1, 2, 3  # the special ids of every vocabulary in the course


class ToyTranslator(torch.nn.Module):
    """A stand-in for a trained encoder-decoder whose next-token distributions are known exactly.

    It keeps the encoder-decoder protocol of `transformer_lib.models.Transformer`:

    * `encode(src)`: source ids (B, S) -> memory (B, S, 1) (here simply the source itself);
    * `decode(tgt, memory, src)`: prefixes (B, T) -> logits (B, T, n_vocab), where `logits[b, t]`
      scores the token that follows `tgt[b, :t + 1]` (so `logits[:, -1]` scores the next token).

    A prefix listed in `table` (a tuple of ids, <bos> included) gets the probabilities listed there
    (every other token about 1e-9). Any other prefix gets pseudo-random logits that depend on the
    whole source row and the whole prefix, seeded by `seed`; <eos> grows likelier as the prefix
    grows, and <pad> and <bos> are never likely.
    """

    def __init__(self, n_vocab=7, table=None, seed=0):
        super().__init__()
        self.n_vocab, self.table, self.seed = n_vocab, dict(table or {}), seed
        self._cache = {}

    def encode(self, src):
        return src.to(torch.float64)[..., None]

    def next_logits(self, source, prefix):
        """Logits (n_vocab,) of the token after `prefix`, for the source row `source` (tuples of ids)."""
        if prefix in self.table:
            probs = torch.full((self.n_vocab,), 1e-9, dtype=torch.float64)
            for token, p in self.table[prefix].items():
                probs[token] = p
            return probs.log()
        key = (source, prefix)
        if key not in self._cache:
            generator = torch.Generator().manual_seed(zlib.crc32(repr((self.seed, *key)).encode()))
            logits = 2.0 * torch.randn(self.n_vocab, generator=generator, dtype=torch.float64)
            logits[PAD_ID] = logits[BOS_ID] = -30.0
            logits[EOS_ID] += 0.8 * len(prefix) - 2.0
            self._cache[key] = logits
        return self._cache[key].clone()

    def decode(self, tgt, memory, src):
        if tuple(memory.shape[:2]) != tuple(src.shape):
            raise ValueError(f"memory must be (B, S, ...) with (B, S) = {tuple(src.shape)}, got {tuple(memory.shape)}")
        rows = []
        for source, prefix in zip(src.tolist(), tgt.tolist()):
            source = tuple(i for i in source if i != PAD_ID)
            rows.append(torch.stack([self.next_logits(source, tuple(prefix[: t + 1])) for t in range(len(prefix))]))
        return torch.stack(rows)

    def forward(self, src, tgt):
        return self.decode(tgt, self.encode(src), src)


# The worked example of exercises 3 and 4: tokens 4, 5, 6 stand for "a", "b", "c".
EXAMPLE_TABLE = {
    (BOS_ID,): {4: 0.5, 5: 0.4, EOS_ID: 0.1},
    (BOS_ID, 4): {4: 0.4, 5: 0.3, 6: 0.2, EOS_ID: 0.1},
    (BOS_ID, 4, 4): {EOS_ID: 0.45, 5: 0.35, 6: 0.2},
    (BOS_ID, 5): {EOS_ID: 0.9, 6: 0.1},
}
example_model = ToyTranslator(table=EXAMPLE_TABLE)
example_src = torch.tensor([[4, 5, 6]])
print("next-token probabilities after <bos>:", example_model(example_src, torch.tensor([[BOS_ID]]))[0, -1].softmax(-1))
'''

# --- exercise 1: label smoothing -------------------------------------------------------------

SMOOTH_TASK = r'''
## Exercise 1: label-smoothed cross-entropy (3 points)

Write `label_smoothing_loss(logits, target, smoothing, ignore_index)`. `logits` has shape
`(N, C)` (or `(B, T, C)`, which you may flatten to `(B * T, C)`), `target` the matching shape
`(N,)` (or `(B, T)`) of class ids. With $\varepsilon$ = `smoothing`, $p_i = \mathrm{softmax}(\text{logits}_i)$
and $y_i$ the target of position $i$, the loss is **exactly PyTorch's**
`F.cross_entropy(logits, target, ignore_index=ignore_index, label_smoothing=smoothing)`:

* each position $i$ whose target is **not** `ignore_index` is compared with the smoothed target
  distribution $q_i(c) = (1 - \varepsilon)\,[c = y_i] + \varepsilon / C$ for **every** class
  $c = 0, \dots, C-1$ (the pad class and the true class included: that is how PyTorch spreads the
  mass), and contributes $\ell_i = -\sum_c q_i(c) \log p_i(c)$;
* positions whose target **is** `ignore_index` (padding) contribute nothing at all, neither the
  target term nor the smoothing term;
* the result is the mean of $\ell_i$ over the non-ignored positions only: a 0-dimensional tensor,
  differentiable with respect to `logits`. You may assume at least one position is not ignored.

Compute $\log p$ stably (`F.log_softmax` or `torch.logsumexp`, not `softmax(...).log()`: the tests
use logits in the hundreds). `ignore_index` may be a value that is not a class at all, such as
`-100`: do not use it as an index. You may not use `F.cross_entropy`, `nn.CrossEntropyLoss` or
`transformer_lib` (`F.log_softmax`, `gather` and `F.nll_loss` are fine).
'''

SMOOTH_SOLUTION = r'''
def label_smoothing_loss(logits: torch.Tensor, target: torch.Tensor, smoothing: float = 0.1,
                         ignore_index: int = PAD_ID) -> torch.Tensor:
    """Mean label-smoothed cross-entropy over the positions whose target is not ignore_index.

    Args:
        logits: (N, C) or (B, T, C) unnormalised scores.
        target: (N,) or (B, T) class ids; positions equal to ignore_index are left out.
        smoothing: epsilon in [0, 1): the mass spread uniformly over all C classes.
        ignore_index: the target value of positions that do not count (padding).

    Returns:
        a 0-dimensional tensor, equal to F.cross_entropy(..., ignore_index, label_smoothing).
    """
    ### BEGIN SOLUTION
    n_classes = logits.shape[-1]
    log_probs = F.log_softmax(logits.reshape(-1, n_classes), dim=-1)   # (N, C)
    flat_target = target.reshape(-1)
    counted = flat_target != ignore_index                               # (N,)
    safe_target = flat_target.masked_fill(~counted, 0)                  # any valid id: masked below
    true_class = -log_probs.gather(1, safe_target[:, None]).squeeze(1)  # -log p(y_i)
    uniform = -log_probs.mean(dim=-1)                                   # -(1/C) sum_c log p(c)
    per_position = (1.0 - smoothing) * true_class + smoothing * uniform
    return per_position.masked_fill(~counted, 0.0).sum() / counted.sum()
    ### END SOLUTION
'''

SMOOTH_TESTS = r'''
logits = torch.tensor([[2.0, 0.5, -1.0, 0.0], [0.1, 0.2, 0.3, 0.4], [1.0, 1.0, 1.0, 5.0]])
target = torch.tensor([0, 3, 2])
loss = label_smoothing_loss(logits, target, smoothing=0.1, ignore_index=-100)
print("loss =", loss)
assert_shape(loss, (), name="label_smoothing_loss(logits (3, 4), target (3,))")
assert_close(loss, torch.tensor(1.9052919), atol=1e-5, name="label_smoothing_loss(..., smoothing=0.1, ignore_index=-100)")
assert_close(label_smoothing_loss(logits, target, smoothing=0.0, ignore_index=-100),
             -F.log_softmax(logits, dim=-1)[[0, 1, 2], [0, 3, 2]].mean(), name="with smoothing=0 (plain cross-entropy)")
# the position whose target is 0 (= ignore_index) counts for nothing: the mean is over the other two
assert_close(label_smoothing_loss(logits, target, smoothing=0.1, ignore_index=0), torch.tensor(2.6055130), atol=1e-5,
             name="label_smoothing_loss(..., smoothing=0.1, ignore_index=0)")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: positions whose target is the pad/ignore index
# still contributing their smoothing term (or their whole loss), or counted in the mean's
# denominator; smoothing spread over C - 1 classes (excluding the true class) or over the
# non-pad classes only, instead of all C as PyTorch does; (1 - eps) missing, or eps + (1 - eps)/C
# put on the true class twice; sum instead of mean; softmax(...).log() (-inf/NaN for large
# logits); indexing with ignore_index = -100; detaching (no gradient); a (B, T) input not handled;
# calling F.cross_entropy, nn.CrossEntropyLoss or transformer_lib's loss.
from coursetools.checks import assert_close, assert_shape, forbid, verify_untampered
verify_untampered()
import transformer_lib.training as _training

_forbidden = (F.cross_entropy, torch.nn.CrossEntropyLoss, _training._cross_entropy)
_generator = torch.Generator().manual_seed(9)
_cases = [((7, 5), 0.1, 0, 1.0), ((3, 6, 11), 0.1, 0, 1.0), ((40, 9), 0.3, -100, 3.0), ((2, 5, 4), 0.0, 0, 1.0),
          ((6, 8), 0.2, 3, 1.0), ((16, 13), 0.1, 0, 200.0), ((1, 4), 0.9, -100, 1.0)]
for _shape, _eps, _ignore, _scale in _cases:
    _n_classes = _shape[-1]
    _logits = (_scale * torch.randn(*_shape, dtype=torch.float64, generator=_generator)).requires_grad_()
    _target = torch.randint(0, _n_classes, _shape[:-1], generator=_generator)
    _drop = torch.rand(_shape[:-1], generator=_generator) < 0.35
    _drop.view(-1)[0] = False  # at least one position counts
    _target = _target.masked_fill(_drop, _ignore)
    _expected = F.cross_entropy(_logits.reshape(-1, _n_classes), _target.reshape(-1), ignore_index=_ignore,
                                label_smoothing=_eps)
    with forbid(*_forbidden):
        _result = label_smoothing_loss(_logits, _target.clone(), _eps, _ignore)
    _what = f"label_smoothing_loss(logits {_shape}, smoothing={_eps}, ignore_index={_ignore})"
    assert_shape(_result, (), name=_what)
    assert_close(_result, _expected, atol=1e-9, rtol=1e-9, name=_what)
    assert _result.requires_grad, "the loss must stay connected to logits (no .detach(), no torch.no_grad())"
    (_gradient,) = torch.autograd.grad(_result, _logits)
    (_expected_gradient,) = torch.autograd.grad(_expected, _logits)
    assert_close(_gradient, _expected_gradient, atol=1e-9, rtol=1e-7, name=f"the gradient of {_what}")
    # padding positions change nothing, whatever their logits
    _noisy = _logits.detach() + 50.0 * _drop[..., None] * torch.randn(*_shape, dtype=torch.float64, generator=_generator)
    with forbid(*_forbidden):
        _again = label_smoothing_loss(_noisy, _target.clone(), _eps, _ignore)
    assert_close(_again, _expected.detach(), atol=1e-9, rtol=1e-9, name=f"{_what} with other logits at ignored positions")
### END HIDDEN TESTS
'''

# --- exercise 2: the warm-up schedule --------------------------------------------------------

NOAM_TASK = r'''
## Exercise 2: the warm-up schedule (2 points)

The paper trains with Adam and a learning rate that rises linearly for `warmup` steps and then
decays as the inverse square root of the step (Vaswani et al. 2017, section 5.3, equation 3):

$$\text{lr}(\text{step}) = d_\text{model}^{-0.5} \cdot \min\left(\text{step}^{-0.5},\ \text{step} \cdot \text{warmup}^{-1.5}\right), \qquad \text{step} = 1, 2, 3, \dots$$

Write `noam_lr(step, d_model, warmup)` returning this learning rate as a Python `float`. Steps
count from **1** (the first optimiser step is step 1); for `step < 1` raise a `ValueError`.
Where does the schedule peak, and at what value? Check it in the plot cell below the tests.

You may not use `transformer_lib.training.lr_factor` or any scheduler; `math` is all you need.
'''

NOAM_SOLUTION = r'''
def noam_lr(step: int, d_model: int, warmup: int) -> float:
    """The learning rate of Vaswani et al. (2017), equation 3, at optimiser step `step` (from 1)."""
    ### BEGIN SOLUTION
    if step < 1:
        raise ValueError(f"steps count from 1, got step={step}")
    rising = step * warmup ** -1.5
    falling = step ** -0.5
    return float(d_model ** -0.5 * min(falling, rising))
    ### END SOLUTION
'''

NOAM_TESTS = r'''
print("noam_lr(1, 512, 4000) =", noam_lr(1, 512, 4000))
print("noam_lr(4000, 512, 4000) =", noam_lr(4000, 512, 4000))
assert_equal(type(noam_lr(10, 512, 4000)), float, name="the type returned by noam_lr")
assert_close(torch.tensor(noam_lr(1, 512, 4000)), torch.tensor(512 ** -0.5 * 4000 ** -1.5), rtol=1e-12, atol=0,
             name="noam_lr(1, 512, 4000) (the first step)")
assert_close(torch.tensor(noam_lr(4000, 512, 4000)), torch.tensor(6.987712429686844e-04), rtol=1e-9, atol=0,
             name="noam_lr(4000, 512, 4000) (the peak)")
assert_close(torch.tensor(noam_lr(16000, 512, 4000)), torch.tensor(3.493856214843422e-04), rtol=1e-9, atol=0,
             name="noam_lr(16000, 512, 4000) (four times later: half the peak)")
try:
    noam_lr(0, 512, 4000)
except ValueError as error:
    print("ValueError, as expected:", error)
else:
    raise AssertionError("noam_lr(0, 512, 4000) should raise a ValueError: steps count from 1")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: the schedule peaking at the wrong step
# (warmup^-0.5 instead of warmup^-1.5, max instead of min, steps counted from 0 so that the
# peak moves by one or step 0 divides by zero); d_model^-0.5 missing or d_model^0.5; integer
# arithmetic; no ValueError for step < 1; a tensor or numpy scalar returned; calling lr_factor.
from coursetools.checks import assert_close, assert_equal, expect_raises, forbid, verify_untampered
verify_untampered()
from transformer_lib.training import TrainConfig as _TrainConfig, lr_factor as _lr_factor

for _d_model, _warmup in [(512, 4000), (64, 100), (128, 7), (1024, 1), (32, 250)]:
    _config = _TrainConfig(schedule="inverse_sqrt", warmup_steps=_warmup, lr=1.0)
    _steps = sorted({1, 2, 3, max(1, _warmup - 1), _warmup, _warmup + 1, 2 * _warmup, 10 * _warmup + 3})
    with forbid(_lr_factor):
        _got = [noam_lr(_s, _d_model, _warmup) for _s in _steps]
        _curve = [noam_lr(_s, _d_model, _warmup) for _s in range(1, 3 * _warmup + 2)]
        for _bad in (0, -1, -_warmup):
            with expect_raises(ValueError, f"noam_lr({_bad}, {_d_model}, {_warmup}) should raise a ValueError"):
                noam_lr(_bad, _d_model, _warmup)
    for _s, _value in zip(_steps, _got):
        assert_equal(type(_value), float, name=f"the type of noam_lr({_s}, {_d_model}, {_warmup})")
        _expected = _d_model ** -0.5 * _warmup ** -0.5 * _lr_factor(_s, _config)  # the library's rescaled schedule
        assert_close(torch.tensor(_value, dtype=torch.float64), torch.tensor(_expected, dtype=torch.float64),
                     rtol=1e-9, atol=0, name=f"noam_lr({_s}, d_model={_d_model}, warmup={_warmup})")
    _peak = max(range(len(_curve)), key=lambda i: _curve[i]) + 1
    assert_equal(_peak, _warmup, name=f"the step where noam_lr(step, {_d_model}, {_warmup}) peaks")
### END HIDDEN TESTS
'''

NOAM_DEMO = r'''
# Your schedule for the paper's base model (d_model = 512, warmup = 4000) and for a small model.
import matplotlib.pyplot as plt

steps = range(1, 20001)
for d_model, warmup in [(512, 4000), (64, 1000)]:
    plt.plot(list(steps), [noam_lr(s, d_model, warmup) for s in steps], label=f"d_model={d_model}, warmup={warmup}")
plt.xlabel("step")
plt.ylabel("learning rate")
plt.legend()
plt.show()
'''

# --- exercise 3: greedy decoding -------------------------------------------------------------

GREEDY_TASK = r'''
## Exercise 3: greedy decoding (3 points)

Write `greedy_decode(model, src, max_len, bos_id, eos_id)` for any model with the encoder-decoder
protocol (the `ToyTranslator` of the setup cell, or `transformer_lib.models.Transformer`):

1. encode once: `memory = model.encode(src)`, with `src` of shape `(B, S)`;
2. start every row with the prefix `[bos_id]`, so `ys` has shape `(B, 1)`;
3. repeat: `logits = model.decode(ys, memory, src)` has shape `(B, t, n_vocab)`; the next token of
   each row is the argmax of the **last** position, `logits[:, -1]`; append it to `ys` (the whole
   prefix is fed again at the next step);
4. a row that has produced `eos_id` is finished: from then on it gets `PAD_ID` (0) instead of the
   model's choice;
5. stop as soon as every row is finished, or after `max_len` new tokens.

Return the new tokens without the `<bos>` column: a `torch.long` tensor `(B, L)` in which each row
is its tokens up to and including its first `eos_id`, then `PAD_ID`; `L` is the length of the
longest row (at most `max_len`); a row that did not finish has `max_len` tokens and no `eos_id`.
Work under `torch.no_grad()`.

You may not use `transformer_lib.decoding` (its `greedy_decode` is the reference the hidden tests
compare with) or a model's `generate` method.
'''

GREEDY_SOLUTION = r'''
@torch.no_grad()
def greedy_decode(model, src: torch.Tensor, max_len: int, bos_id: int = BOS_ID, eos_id: int = EOS_ID) -> torch.Tensor:
    """Most likely next token at every step. src (B, S) -> generated ids (B, L), no <bos>, <pad> after <eos>."""
    ### BEGIN SOLUTION
    encoded = model.encode(src)
    prefix = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        choice = model.decode(prefix, encoded, src)[:, -1].argmax(dim=-1)
        choice = torch.where(done, torch.full_like(choice, PAD_ID), choice)
        prefix = torch.cat([prefix, choice[:, None]], dim=1)
        done = done | (choice == eos_id)
        if bool(done.all()):
            break
    return prefix[:, 1:]
    ### END SOLUTION
'''

GREEDY_TESTS = r'''
out = greedy_decode(example_model, example_src, max_len=10, bos_id=BOS_ID, eos_id=EOS_ID)
print("greedy:", out)
# after <bos> the most likely token is 4 ("a", p = 0.5), then 4 again (0.4), then <eos> (0.45)
assert_equal(out, torch.tensor([[4, 4, EOS_ID]]), name="greedy_decode(example_model, example_src, max_len=10)")
assert_equal(greedy_decode(example_model, example_src, max_len=2, bos_id=BOS_ID, eos_id=EOS_ID),
             torch.tensor([[4, 4]]), name="greedy_decode(..., max_len=2) (stopped by max_len, no <eos>)")
toy = ToyTranslator(seed=1)
batch = torch.tensor([[4, 5, 6, 0], [6, 6, 0, 0], [5, 4, 4, 6]])
out = greedy_decode(toy, batch, max_len=8, bos_id=BOS_ID, eos_id=EOS_ID)
print("greedy on a batch of 3:\n", out)
assert_equal(out.dtype, torch.long, name="the dtype of greedy_decode's result")
assert out.shape[0] == 3 and out.shape[1] <= 8, f"expected shape (3, L <= 8), got {tuple(out.shape)}"
for row in out.tolist():
    if EOS_ID in row:
        after = row[row.index(EOS_ID) + 1:]
        assert all(token == PAD_ID for token in after), f"row {row}: only <pad> (0) may follow the first <eos>"
assert (out[:, -1] != PAD_ID).any(), "the result has a column of padding only: stop as soon as every row has finished"
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: decoding that does not stop at EOS (tokens
# after EOS instead of <pad>, or going on to max_len when every row has finished, or stopping
# when the first row finishes); feeding the wrong previous token (only the last token instead of
# the whole prefix, argmax of logits[:, 0] instead of logits[:, -1], no <bos> first, the <bos>
# column returned); max_len off by one; float ids; a batch decoded as if it were one row;
# calling transformer_lib.decoding or a model's generate.
from coursetools.checks import assert_equal, forbid, verify_untampered
verify_untampered()
import transformer_lib.decoding as _decoding
from transformer_lib.models import Transformer as _Transformer

_forbidden = (_decoding.greedy_decode, _decoding._decode_loop, _decoding.beam_search, _decoding.sample_decode)
_generator = torch.Generator().manual_seed(3)
for _seed in range(6):
    _model = ToyTranslator(n_vocab=7 + _seed % 3, seed=100 + _seed)
    _B, _S = 2 + _seed % 4, 3 + _seed % 3
    _src = torch.randint(4, _model.n_vocab, (_B, _S), generator=_generator)
    _src[0, -1] = PAD_ID  # a padded source row
    for _max_len in (1, 3, 12):
        _expected = _decoding.greedy_decode(_model, _src, _max_len, bos_id=BOS_ID, eos_id=EOS_ID, pad_id=PAD_ID)
        with forbid(*_forbidden):
            _result = greedy_decode(_model, _src.clone(), _max_len, bos_id=BOS_ID, eos_id=EOS_ID)
        assert_equal(_result, _expected, name=f"greedy_decode(ToyTranslator(seed={100 + _seed}), src {tuple(_src.shape)}, max_len={_max_len})")

# a real Transformer (random weights, float64), other special ids
torch.manual_seed(0)
_net = _Transformer(12, 12, d_model=16, num_heads=2, num_encoder_layers=1, num_decoder_layers=1, d_ff=32,
                    dropout=0.0, max_len=32).double().eval()
with torch.no_grad():
    _net.output_proj.bias[PAD_ID] = -1e4  # never choose <pad> itself
    _net.output_proj.bias[5] += 1.5       # token 5 plays <eos> here: some rows finish early, some never
for _trial in range(4):
    _src = torch.randint(4, 12, (5, 6), generator=_generator)
    _src[1, 4:] = PAD_ID
    _expected = _decoding.greedy_decode(_net, _src, 9, bos_id=BOS_ID, eos_id=5, pad_id=PAD_ID)
    with forbid(*_forbidden):
        _result = greedy_decode(_net, _src.clone(), 9, bos_id=BOS_ID, eos_id=5)
    assert_equal(_result, _expected, name=f"greedy_decode(Transformer, src (5, 6), max_len=9, eos_id=5), trial {_trial}")
### END HIDDEN TESTS
'''

# --- exercise 4: beam search -----------------------------------------------------------------

BEAM_TASK = r'''
## Exercise 4: beam search (4 points)

Greedy decoding commits to the best token at every step; the best *sequence* can start with a
token that is not the best one. Beam search keeps the `beam_size` best prefixes instead. Write
`beam_search(model, src, beam_size, max_len, bos_id, eos_id)` following exactly this algorithm
(you may handle the rows of `src` one at a time, calling the model on `src[b : b + 1]`):

* A hypothesis is a prefix (starting with `bos_id`) and a **score**: the sum of the
  log-probabilities of its tokens, $\sum_t \log p(y_t \mid y_{<t}, x)$, each taken from
  `F.log_softmax(logits[:, -1], dim=-1)` (normalised log-probabilities, not raw logits).
  The beam starts with one hypothesis, `[bos_id]` with score 0.
* At each step, every hypothesis proposes candidates:
  * an unfinished one proposes itself extended by **each** token `v` of the vocabulary, with
    score `score + log p(v)`;
  * a finished one (it has produced `eos_id`) proposes only itself extended by `PAD_ID`, at the
    same score (no cost).
* The beam becomes the `beam_size` candidates with the highest score (the tests avoid ties).
* Stop when every hypothesis in the beam is finished, or after `max_len` steps. The answer is the
  hypothesis with the highest score, finished or not: no length penalty, the score is the total
  log-probability.

Return a `torch.long` tensor `(B, L)` as in exercise 3: each row the winner's tokens without
`<bos>`, up to and including its first `eos_id`, then `PAD_ID`; `L` the length of the longest
winner. With `beam_size=1` this is greedy decoding.

You may not use `transformer_lib.decoding`.
'''

BEAM_SOLUTION = r'''
@torch.no_grad()
def beam_search(model, src: torch.Tensor, beam_size: int, max_len: int, bos_id: int = BOS_ID,
                eos_id: int = EOS_ID) -> torch.Tensor:
    """The highest-scoring hypothesis (sum of log-probabilities) found with a beam of beam_size, per row.

    src (B, S) -> ids (B, L) without <bos>, each row ending with <eos> then <pad> (unless it ran out of max_len).
    """
    ### BEGIN SOLUTION
    winners = []
    for row in range(src.shape[0]):
        one_src = src[row : row + 1]
        memory = model.encode(one_src)
        beam = [([bos_id], 0.0, False)]  # (tokens, total log-probability, finished)
        for _ in range(max_len):
            candidates = []
            for tokens, total, ended in beam:
                if ended:
                    candidates.append((tokens + [PAD_ID], total, True))
                    continue
                prefix = torch.tensor([tokens], dtype=torch.long, device=src.device)
                step_logp = F.log_softmax(model.decode(prefix, memory, one_src)[0, -1].double(), dim=-1)
                for token, value in enumerate(step_logp.tolist()):
                    candidates.append((tokens + [token], total + value, token == eos_id))
            candidates.sort(key=lambda hypothesis: hypothesis[1], reverse=True)
            beam = candidates[:beam_size]
            if all(ended for _, _, ended in beam):
                break
        best_tokens = max(beam, key=lambda hypothesis: hypothesis[1])[0][1:]
        if eos_id in best_tokens:
            best_tokens = best_tokens[: best_tokens.index(eos_id) + 1]
        winners.append(best_tokens)
    width = max(len(tokens) for tokens in winners)
    result = torch.full((len(winners), width), PAD_ID, dtype=torch.long, device=src.device)
    for row, tokens in enumerate(winners):
        result[row, : len(tokens)] = torch.tensor(tokens, dtype=torch.long)
    return result
    ### END SOLUTION
'''

BEAM_TESTS = r'''
out = beam_search(example_model, example_src, beam_size=2, max_len=10, bos_id=BOS_ID, eos_id=EOS_ID)
print("beam search, beam_size=2:", out)
# greedy found "a a <eos>" with probability 0.5 * 0.4 * 0.45 = 0.09;
# the beam keeps "b" (0.4) at step 1 and finds "b <eos>": 0.4 * 0.9 = 0.36
assert_equal(out, torch.tensor([[5, EOS_ID]]), name="beam_search(example_model, example_src, beam_size=2, max_len=10)")
assert_equal(beam_search(example_model, example_src, beam_size=1, max_len=10, bos_id=BOS_ID, eos_id=EOS_ID),
             torch.tensor([[4, 4, EOS_ID]]), name="beam_search(..., beam_size=1) (greedy)")
toy = ToyTranslator(seed=1)
batch = torch.tensor([[4, 5, 6, 0], [6, 6, 0, 0], [5, 4, 4, 6]])
out = beam_search(toy, batch, beam_size=3, max_len=8, bos_id=BOS_ID, eos_id=EOS_ID)
print("beam_size=3 on a batch of 3:\n", out)
assert_equal(out.dtype, torch.long, name="the dtype of beam_search's result")
assert out.shape[0] == 3 and out.shape[1] <= 8, f"expected shape (3, L <= 8), got {tuple(out.shape)}"
assert_equal(beam_search(toy, batch, beam_size=1, max_len=8, bos_id=BOS_ID, eos_id=EOS_ID),
             greedy_decode(toy, batch, max_len=8, bos_id=BOS_ID, eos_id=EOS_ID), name="beam_search with beam_size=1 (greedy)")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: beam search that does not normalise (ranks raw
# logits, not log_softmax), or does not rank by total log-probability (last step only, mean per
# token, probabilities multiplied in float32 until they underflow, a length penalty); finished
# hypotheses extended with more tokens, dropped from the beam, or charged for their <pad>;
# stopping at the first finished hypothesis; returning the first beam rather than the best; the
# beam started with beam_size copies of <bos> (duplicates fill it); tokens after EOS; wrong
# width; calling transformer_lib.decoding.
from coursetools.checks import assert_equal, forbid, verify_untampered
verify_untampered()
import transformer_lib.decoding as _decoding
from transformer_lib.models import Transformer as _Transformer

_forbidden = (_decoding.greedy_decode, _decoding._decode_loop, _decoding.beam_search, _decoding.sample_decode)
_generator = torch.Generator().manual_seed(4)
for _seed in range(4):
    _model = ToyTranslator(n_vocab=7 + _seed % 2, seed=200 + _seed)
    _src = torch.randint(4, _model.n_vocab, (3, 4), generator=_generator)
    _src[2, -2:] = PAD_ID
    for _beam_size, _max_len in [(1, 6), (2, 6), (3, 7), (4, 3), (4, 8)]:
        _expected = _decoding.beam_search(_model, _src, _max_len, beam_size=_beam_size, alpha=0.0, bos_id=BOS_ID,
                                          eos_id=EOS_ID, pad_id=PAD_ID)
        with forbid(*_forbidden):
            _result = beam_search(_model, _src.clone(), _beam_size, _max_len, bos_id=BOS_ID, eos_id=EOS_ID)
        assert_equal(_result, _expected,
                     name=f"beam_search(ToyTranslator(seed={200 + _seed}), src (3, 4), beam_size={_beam_size}, max_len={_max_len})")

# a real Transformer (random weights, float64), another <eos> id
torch.manual_seed(1)
_net = _Transformer(10, 10, d_model=16, num_heads=2, num_encoder_layers=1, num_decoder_layers=1, d_ff=32,
                    dropout=0.0, max_len=32).double().eval()
with torch.no_grad():
    _net.output_proj.bias[PAD_ID] = -1e4
    _net.output_proj.bias[6] += 1.0  # token 6 plays <eos> here
for _trial in range(2):
    _src = torch.randint(4, 10, (3, 5), generator=_generator)
    _src[0, 3:] = PAD_ID
    for _beam_size in (2, 4):
        _expected = _decoding.beam_search(_net, _src, 7, beam_size=_beam_size, alpha=0.0, bos_id=BOS_ID, eos_id=6,
                                          pad_id=PAD_ID)
        with forbid(*_forbidden):
            _result = beam_search(_net, _src.clone(), _beam_size, 7, bos_id=BOS_ID, eos_id=6)
        assert_equal(_result, _expected, name=f"beam_search(Transformer, src (3, 5), beam_size={_beam_size}, max_len=7, eos_id=6)")
### END HIDDEN TESTS
'''

# --- free response ---------------------------------------------------------------------------

QUESTION = r'''
## Exercise 5: smoothing, search and short outputs (3 points, graded by hand)

Answer in a few sentences each, in the cell below.

1. With label smoothing $\varepsilon = 0.1$ over $C = 40$ classes, what predicted distribution
   $p$ minimises the loss of one position, and is that minimum zero? What does this do to the
   model's confidence, and why can it still improve BLEU although it makes the loss (and the
   perplexity) worse?
2. Your beam search ranks hypotheses by their total log-probability. Explain why this favours
   short outputs, and how the length penalty of Wu et al. (2016),
   $\text{score} = \log p(y \mid x) / \left(\frac{5 + |y|}{6}\right)^\alpha$, counters it.
3. On the chapter's reordering task the trained Transformer gave the same exact match with greedy
   decoding and with beam search. Why is that to be expected when a model is confident and every
   input has exactly one correct output?
'''

MODEL_ANSWER = r'''
**Model answer and rubric (1 point per part).**

1. The loss $-\sum_c q(c) \log p(c)$ is a cross-entropy $H(q, p) = H(q) + \mathrm{KL}(q \,\|\, p)$,
   minimised at $p = q$: $0.9 + 0.1/40 = 0.9025$ on the true class and $0.0025$ on each other class.
   The minimum is the entropy $H(q) \approx 0.41$ nats, not zero. The model is discouraged from
   putting probability 1 on one token (its logits stay bounded), so it is less over-confident and
   better calibrated; the loss and perplexity measure how far $p$ is from a one-hot target, which
   smoothing forbids reaching, while BLEU only needs the right token to be ranked first, and the
   regularisation helps it generalise (Vaswani et al. report +BLEU, worse perplexity). (Needs the
   minimiser, that the minimum is the entropy / not zero, and why BLEU can still improve.)
2. Every extra token adds a log-probability $\le 0$, so the total can only go down as a hypothesis
   grows: a short hypothesis that ends early (even a wrong one) can outscore a longer correct one.
   Dividing by $((5 + |y|)/6)^\alpha$, which grows with the length, shrinks the magnitude of long
   hypotheses' (negative) scores, so longer outputs are penalised less; $\alpha = 0$ is the raw
   total, larger $\alpha$ favours longer outputs.
3. When the model puts most of the probability on one token at every step (here, after training,
   close to 1), the greedy path is also the most probable sequence: any other branch starts with a
   token of tiny probability and cannot catch up, so the beam's best hypothesis is the greedy one.
   Beam search helps when several partial outputs are plausible and an early choice only pays off
   later (ambiguous translation, an under-trained model).
'''

CLOSING = r'''
## Where this goes next

You have written the pieces that turn the Transformer of the previous chapters into a trained
translator: the loss with label smoothing, the warm-up schedule and the two ways to search for an
output. In `transformer_lib` the same pieces are the `label_smoothing` option of
`training.TrainConfig`, `training.lr_factor` (the same schedule, rescaled to peak at `lr`) and
`decoding.greedy_decode` / `decoding.beam_search` (batched, with a length penalty). Chapter 10
looks at what the model costs as sequences grow and how a KV cache makes decoding faster.
'''


def build() -> list:
    """The cells of the notebook, in order."""
    return [
        markdown(INTRO),
        instructions("grading", GRADING),
        setup("setup", SETUP),
        instructions("smoothing_task", SMOOTH_TASK),
        solution("label_smoothing_loss", SMOOTH_SOLUTION),
        tests("test_label_smoothing_loss", 3, SMOOTH_TESTS),
        instructions("noam_task", NOAM_TASK),
        solution("noam_lr", NOAM_SOLUTION),
        tests("test_noam_lr", 2, NOAM_TESTS),
        code(NOAM_DEMO),
        instructions("greedy_task", GREEDY_TASK),
        solution("greedy_decode", GREEDY_SOLUTION),
        tests("test_greedy_decode", 3, GREEDY_TESTS),
        instructions("beam_task", BEAM_TASK),
        solution("beam_search", BEAM_SOLUTION),
        tests("test_beam_search", 4, BEAM_TESTS),
        instructions("search_question", QUESTION),
        free_response("search_answer", 3, MODEL_ANSWER),
        markdown(CLOSING),
    ]


def main() -> None:
    print(f"wrote {write_chapter(ASSIGNMENT, build())}")


if __name__ == "__main__":
    main()
