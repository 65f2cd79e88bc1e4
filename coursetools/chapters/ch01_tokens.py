r'''Chapter 1 exercises: vocabularies, encoding, padding and masks, the one-hot embedding, patches.

``python -m coursetools.chapters.ch01_tokens`` writes ``solutions/ch01_tokens/ch01_tokens.ipynb``,
the nbgrader source (solutions and hidden tests); ``make release`` derives the student notebook.
Every hidden block starts with instructor notes listing the mistakes it is there to catch.
'''

from __future__ import annotations


from coursetools.authoring import (code, free_response, instructions, markdown, setup, solution, tests,
                                   write_chapter)

ASSIGNMENT = "ch01_tokens"

INTRO = r'''
# Chapter 1 exercises: tokens, vocabularies, embeddings

You will write, from scratch, the pieces that turn raw input into what a Transformer reads:
a batch of `B` sequences of `T` vectors of size `d_model`.

**Learning objectives.** After these exercises you can

1. build a vocabulary with special tokens at fixed ids and a deterministic order;
2. encode tokens to ids and decode them back, with `<unk>` for unknown tokens;
3. pad sequences of different lengths into a `(B, T)` batch and describe it with lengths and a mask;
4. show that an embedding lookup is a one-hot vector times a matrix;
5. cut an image into patches: another input seen as `N` vectors of size `D`.

The chapter page *Tokens and embeddings* explains all of this; keep it open.
'''

GRADING = r'''
## How grading works

* In each answer cell, replace the lines `# YOUR CODE HERE` and `raise NotImplementedError()`
  with your code; keep the function names, signatures and docstrings.
* After each answer, run the test cell below it. The **visible tests** check a small worked
  example and tell you what is wrong. When you submit, **hidden tests** in the same cells check
  many more cases, compare your answers with reference implementations and with PyTorch,
  and give the cell's points only if everything passes.
* Each exercise says what you may not use: calling a ready-made implementation of the very thing
  you are asked to write earns no points.
* Do not edit or delete the locked cells, and do not reassign functions of `torch`, Python's
  builtins or `transformer_lib`: the tests detect it and the cell scores zero.
* Before submitting: *Kernel → Restart & Run All*, and check that every test cell runs without an
  error. Each cell must finish within 30 seconds (the solutions take well under one second).

| exercise | points |
|---|---|
| 1. Build a vocabulary | 3 |
| 2. Encode and decode | 3 |
| 3. Padding, lengths and masks | 4 |
| 4. The embedding as a one-hot matrix product | 3 |
| 5. An image as `N` vectors: patches | 4 |
| 6. Question: what padding costs (graded by hand) | 3 |
| **total** | **20** |
'''

SETUP = r'''
import random
import warnings
from collections import Counter

import torch
import torch.nn.functional as F

from transformer_lib.tokens import SPECIAL_TOKENS, char_tokenize, word_tokenize
from coursetools.checks import assert_close, assert_equal, assert_shape, forbid, verify_untampered

warnings.filterwarnings("ignore")  # a warning printed by torch must not cost points
random.seed(0)
torch.manual_seed(0)
print("special tokens and their ids:", {token: i for i, token in enumerate(SPECIAL_TOKENS)})
'''

TRY_IT = r'''
# A scratch cell: try the tokenizers of the chapter page on your own text.
text = "The cat sat on the mat. The dog sat, too!"
print(word_tokenize(text, lowercase=True))
print(char_tokenize("cat sat"))
'''

# --- exercise 1: build a vocabulary ----------------------------------------------------------

VOCAB_TASK = r'''
## Exercise 1: build a vocabulary (3 points)

Write `build_vocab(corpus, min_freq=1)`. `corpus` is a list of token sequences, for example
`[["the", "cat", "sat"], ["the", "dog"]]`. Return the vocabulary as a **list of tokens in id
order**, so that `itos[i]` ("id to string") is the token with id `i`:

1. first the four special tokens, exactly `SPECIAL_TOKENS = ("<pad>", "<bos>", "<eos>", "<unk>")`,
   at ids 0, 1, 2, 3, always; if the corpus itself contains one of them, it is not added again;
2. then every other token that occurs **at least** `min_freq` times in the whole corpus,
3. sorted by count, most frequent first; tokens with equal counts in alphabetical order
   (Python's string order, `sorted`), so that the same corpus always gives the same ids.

You may use `collections.Counter` and `sorted`. You may not use `transformer_lib`'s `Vocab`.
'''

VOCAB_SOLUTION = r'''
def build_vocab(corpus: list[list[str]], min_freq: int = 1) -> list[str]:
    """The tokens of a vocabulary in id order.

    Args:
        corpus: a list of token sequences (lists of str).
        min_freq: keep the tokens that occur at least this many times.

    Returns:
        a list of str: the special tokens, then the kept tokens by count (most frequent first),
        equal counts alphabetically; the index of a token is its id.
    """
    ### BEGIN SOLUTION
    counts = Counter(token for sequence in corpus for token in sequence)
    kept = [token for token, count in counts.items() if count >= min_freq and token not in SPECIAL_TOKENS]
    return list(SPECIAL_TOKENS) + sorted(kept, key=lambda token: (-counts[token], token))
    ### END SOLUTION
'''

VOCAB_TESTS = r'''
corpus = [["the", "cat", "sat"], ["the", "dog", "sat"], ["a", "dog"]]
itos = build_vocab(corpus)
print("itos =", itos)
assert_equal(type(itos), list, name="the type returned by build_vocab")
assert_equal(itos[:4], ["<pad>", "<bos>", "<eos>", "<unk>"], name="the first four entries (special tokens at ids 0-3)")
# counts: dog 2, sat 2, the 2, a 1, cat 1 -> by count, then alphabetically
assert_equal(itos, ["<pad>", "<bos>", "<eos>", "<unk>", "dog", "sat", "the", "a", "cat"], name="build_vocab(corpus)")
assert_equal(build_vocab(corpus, min_freq=2), ["<pad>", "<bos>", "<eos>", "<unk>", "dog", "sat", "the"],
             name="build_vocab(corpus, min_freq=2)")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: special tokens missing, not first, or in another
# order; a special token found in the corpus added a second time; tokens in order of first
# appearance (dict or Counter order) instead of by count; ties left in Counter.most_common's
# insertion order instead of alphabetical; min_freq applied as ">" instead of ">="; a set or tuple
# returned; calling transformer_lib's Vocab.
from coursetools.checks import assert_equal, forbid, verify_untampered
verify_untampered()
import random as _random
from transformer_lib.tokens import Vocab as _Vocab

_rng = _random.Random(2024)
_words = ["zeta", "alpha", "Mid", "beta", "<unk>", "gamma", "<pad>", "delta", "Z", "a", "b"]
_cases = [
    ([["b", "a"], ["a", "b"], ["c"]], 1),                 # a tie: first seen "b", alphabetical "a"
    ([["x", "<eos>", "x"], ["<pad>", "y", "<unk>"]], 1),  # special tokens inside the corpus
    ([["x", "x", "y"], ["y", "z"]], 2),                   # counts equal to min_freq are kept
    ([["p", "q"]], 5),                                    # nothing frequent enough: specials only
    ([], 1),                                              # an empty corpus
]
_cases += [([[_rng.choice(_words) for _ in range(_rng.randint(0, 8))] for _ in range(40)], min_freq)
           for min_freq in (1, 2, 3, 6)]
for _corpus, _min_freq in _cases:
    _expected = _Vocab.build(_corpus, min_freq=_min_freq).tokens
    with forbid(_Vocab.build.__func__, _Vocab.__init__):
        _result = build_vocab([list(s) for s in _corpus], _min_freq)
    assert_equal(_result, _expected, name=f"build_vocab({_corpus[:3]}..., min_freq={_min_freq})")
### END HIDDEN TESTS
'''

# --- exercise 2: encode and decode -----------------------------------------------------------

CODEC_TASK = r'''
## Exercise 2: encode and decode (3 points)

With `itos` from exercise 1 and its inverse `stoi = {token: i for i, token in enumerate(itos)}`,
write two functions that return plain Python lists (not tensors):

* `encode(tokens, stoi, add_bos=False, add_eos=False) -> list[int]`: the id of each token; a token
  that `stoi` does not know gets the id of `<unk>`; with `add_bos=True` the id of `<bos>` comes
  first, with `add_eos=True` the id of `<eos>` comes last.
* `decode(ids, itos, skip_special=True) -> list[str]`: the tokens of the ids; with
  `skip_special=True` drop every `<pad>`, `<bos>` and `<eos>`, but **keep `<unk>`**: it stands
  at the place of a real token that the vocabulary did not know.

You may not use `transformer_lib`'s `Vocab`.
'''

CODEC_SOLUTION = r'''
def encode(tokens: list[str], stoi: dict[str, int], add_bos: bool = False, add_eos: bool = False) -> list[int]:
    """Tokens -> ids; unknown tokens -> the id of <unk>; optional <bos> first and <eos> last."""
    ### BEGIN SOLUTION
    ids = [stoi.get(token, stoi["<unk>"]) for token in tokens]
    if add_bos:
        ids = [stoi["<bos>"]] + ids
    if add_eos:
        ids = ids + [stoi["<eos>"]]
    return ids
    ### END SOLUTION


def decode(ids: list[int], itos: list[str], skip_special: bool = True) -> list[str]:
    """Ids -> tokens; with skip_special, <pad>, <bos> and <eos> are dropped (<unk> is kept)."""
    ### BEGIN SOLUTION
    dropped = {"<pad>", "<bos>", "<eos>"} if skip_special else set()
    return [itos[i] for i in ids if itos[i] not in dropped]
    ### END SOLUTION
'''

CODEC_TESTS = r'''
itos = ["<pad>", "<bos>", "<eos>", "<unk>", "dog", "sat", "the", "a", "cat"]
stoi = {token: i for i, token in enumerate(itos)}
ids = encode(["the", "cat", "sat"], stoi)
print("encode(['the', 'cat', 'sat']) =", ids)
assert_equal(ids, [6, 8, 5], name="encode(['the', 'cat', 'sat'], stoi)")
assert_equal(encode(["the", "zebra"], stoi), [6, 3], name="encode(['the', 'zebra'], stoi) ('zebra' is unknown)")
assert_equal(encode(["dog"], stoi, add_bos=True, add_eos=True), [1, 4, 2],
             name="encode(['dog'], stoi, add_bos=True, add_eos=True)")
assert_equal(decode([1, 6, 3, 5, 2, 0, 0], itos), ["the", "<unk>", "sat"],
             name="decode([1, 6, 3, 5, 2, 0, 0], itos)")
assert_equal(decode([1, 6, 2], itos, skip_special=False), ["<bos>", "the", "<eos>"],
             name="decode([1, 6, 2], itos, skip_special=False)")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: KeyError on an unknown token, or unknown tokens
# mapped to <pad> (0), to -1 or to len(stoi) instead of <unk>; <bos>/<eos> swapped, or added
# without being asked; decode dropping <unk> too, or keeping <pad>; skip_special ignored; ids
# returned as a tensor or as numpy ints; calling transformer_lib's Vocab.
from coursetools.checks import assert_equal, forbid, verify_untampered
verify_untampered()
import random as _random
from transformer_lib.tokens import Vocab as _Vocab

_rng = _random.Random(7)
_vocab = _Vocab(["w" + str(k) for k in range(12)])
_itos, _stoi = _vocab.tokens, {token: i for i, token in enumerate(_vocab.tokens)}
_pool = _itos[4:] + ["unseen", "W1", "w99"]
for _trial in range(30):
    _tokens = [_rng.choice(_pool) for _ in range(_rng.randint(0, 9))]
    _bos, _eos = bool(_trial % 2), bool(_trial // 2 % 2)
    _ids = _vocab.encode(_tokens, add_bos=_bos, add_eos=_eos)
    _padded = _ids + [_vocab.pad_id] * (_trial % 3)
    with forbid(_Vocab.__init__, _Vocab.encode, _Vocab.decode, _Vocab.token_to_id):
        _got_ids = encode(list(_tokens), dict(_stoi), add_bos=_bos, add_eos=_eos)
        _got_tokens = decode(list(_padded), list(_itos))
        _got_all = decode(list(_padded), list(_itos), skip_special=False)
    assert_equal(_got_ids, _ids, name=f"encode({_tokens}, stoi, add_bos={_bos}, add_eos={_eos})")
    assert all(type(i) is int for i in _got_ids), "encode must return a list of Python ints"
    assert_equal(_got_tokens, _vocab.decode(_padded), name=f"decode({_padded}, itos)")
    assert_equal(_got_all, _vocab.decode(_padded, skip_special=False), name=f"decode({_padded}, itos, skip_special=False)")
### END HIDDEN TESTS
'''

# --- exercise 3: padding, lengths, masks -----------------------------------------------------

PADDING_TASK = r'''
## Exercise 3: padding, lengths and masks (4 points)

Sequences in a batch have different lengths, but a tensor is a rectangle. Write

* `pad_batch(sequences, pad_id=0) -> (ids, lengths)`. `sequences` is a list of `B` lists of ids
  (a list may be empty). `ids` is a `torch.long` tensor `(B, T)` with `T` the longest length:
  row `b` holds sequence `b` from the left, followed by `pad_id` up to the end (padding on the
  **right**). `lengths` is a `torch.long` tensor `(B,)`: the length of each sequence.
* `lengths_to_mask(lengths) -> mask`, a `torch.bool` tensor `(B, T)` with `T = lengths.max()`
  and `mask[b, t]` **True where `t < lengths[b]`**: True marks a real token, False marks padding
  (the convention of the whole course: True means "may attend"). One comparison with
  broadcasting does it, without a loop.

You may not use `torch.nn.utils.rnn.pad_sequence` or `transformer_lib`'s `pad_batch` /
`lengths_to_mask`.
'''

PADDING_SOLUTION = r'''
def pad_batch(sequences: list[list[int]], pad_id: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Pad B id sequences on the right into ids (B, T) (torch.long) and lengths (B,) (torch.long)."""
    ### BEGIN SOLUTION
    lengths = torch.tensor([len(sequence) for sequence in sequences], dtype=torch.long)
    ids = torch.full((len(sequences), int(lengths.max())), pad_id, dtype=torch.long)
    for row, sequence in enumerate(sequences):
        ids[row, : len(sequence)] = torch.tensor(sequence, dtype=torch.long)
    return ids, lengths
    ### END SOLUTION


def lengths_to_mask(lengths: torch.Tensor) -> torch.Tensor:
    """lengths (B,) -> mask (B, T) of dtype torch.bool, True at real tokens (t < lengths[b])."""
    ### BEGIN SOLUTION
    positions = torch.arange(int(lengths.max()))  # (T,)
    return positions[None, :] < lengths[:, None]  # (1, T) < (B, 1) -> (B, T)
    ### END SOLUTION
'''

PADDING_TESTS = r'''
ids, lengths = pad_batch([[5, 6, 7], [8], [9, 4]], pad_id=0)
print("ids =\n", ids, "\nlengths =", lengths)
assert_equal(ids, torch.tensor([[5, 6, 7], [8, 0, 0], [9, 4, 0]]), name="ids of pad_batch([[5, 6, 7], [8], [9, 4]])")
assert_equal(lengths, torch.tensor([3, 1, 2]), name="lengths of pad_batch([[5, 6, 7], [8], [9, 4]])")
mask = lengths_to_mask(lengths)
print("mask =\n", mask)
assert_equal(mask, torch.tensor([[True, True, True], [True, False, False], [True, True, False]]),
             name="lengths_to_mask(tensor([3, 1, 2])) (True at real tokens)")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: padding on the left; pad_id ignored (always 0);
# ids or lengths not torch.long (int32, float); lengths as a list; T not the longest length; an
# empty sequence or a batch of one breaking the code; mask polarity inverted (True at padding);
# mask of dtype long/float instead of bool; mask width not lengths.max(); lengths counted as
# ids != pad_id (wrong when a real token has the pad id's value); calling pad_sequence or
# transformer_lib.
from coursetools.checks import assert_equal, forbid, verify_untampered
verify_untampered()
import random as _random
import torch.nn.utils.rnn as _rnn
import transformer_lib.tokens as _tokens

_rng = _random.Random(3)
_batches = [([[4]], 0), ([[], [5, 6]], 0), ([[1, 2, 3], [4, 5, 6]], 0), ([[0, 5], [7]], 9)]
_batches += [([[_rng.randint(0, 20) for _ in range(_rng.randint(0, 7))] for _ in range(_rng.randint(1, 6))]
               + [[1] * 8], _rng.choice([0, 2, 7])) for _ in range(15)]
for _sequences, _pad_id in _batches:
    _want_ids, _want_lengths = _tokens.pad_batch(_sequences, pad_id=_pad_id)
    with forbid(_tokens.pad_batch, _tokens.lengths_to_mask, _rnn.pad_sequence):
        _ids, _lengths = pad_batch([list(s) for s in _sequences], pad_id=_pad_id)
        _mask = lengths_to_mask(_want_lengths.clone())
    assert_equal(_ids, _want_ids, name=f"ids of pad_batch({_sequences}, pad_id={_pad_id})")
    assert_equal(_lengths, _want_lengths, name=f"lengths of pad_batch({_sequences}, pad_id={_pad_id})")
    assert_equal(_mask, _tokens.lengths_to_mask(_want_lengths), name=f"lengths_to_mask({_want_lengths.tolist()})")
    assert_equal(_ids[~_mask], torch.full((int((~_mask).sum()),), _pad_id), name="the padded positions")
### END HIDDEN TESTS
'''

# --- exercise 4: the one-hot embedding -------------------------------------------------------

EMBED_TASK = r'''
## Exercise 4: the embedding as a one-hot matrix product (3 points)

An embedding table `weight` has shape `(n_vocab, d_model)`: row `i` is the vector of token `i`.
Write `one_hot_embed(ids, weight)` that maps ids `(B, T)` (dtype `torch.long`) to vectors
`(B, T, d_model)` **as a matrix product**:

1. turn `ids` into one-hot vectors `(B, T, n_vocab)` with `n_vocab = weight.shape[0]` (you may use
   `F.one_hot`; mind how many classes it uses when the largest id in `ids` is below `n_vocab - 1`),
   in the dtype of `weight`;
2. multiply them by `weight` (`@`, `torch.matmul` or `torch.einsum`).

The result has the dtype of `weight`, equals `F.embedding(ids, weight)` and lets gradients flow
into `weight`. You may not use `F.embedding`, `nn.Embedding`, indexing such as `weight[ids]`,
`index_select`/`gather`, or `transformer_lib`'s `one_hot_embed`: the point is to see that the
lookup *is* a product.
'''

EMBED_SOLUTION = r'''
def one_hot_embed(ids: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """ids (B, T) torch.long, weight (n_vocab, d_model) -> (B, T, d_model) = one_hot(ids) @ weight."""
    ### BEGIN SOLUTION
    one_hot = F.one_hot(ids, num_classes=weight.shape[0]).to(weight.dtype)  # (B, T, n_vocab)
    return one_hot @ weight                                                 # (B, T, d_model)
    ### END SOLUTION
'''

EMBED_TESTS = r'''
weight = torch.tensor([[0.0, 0.0], [1.0, 0.5], [2.0, -1.0], [3.0, 4.0]])  # n_vocab = 4, d_model = 2
ids = torch.tensor([[0, 3], [2, 2]])                                       # B = 2, T = 2
vectors = one_hot_embed(ids, weight)
print("one_hot_embed(ids, weight) =\n", vectors)
assert_shape(vectors, (2, 2, 2), name="one_hot_embed(ids, weight)")
assert_close(vectors, torch.tensor([[[0.0, 0.0], [3.0, 4.0]], [[2.0, -1.0], [2.0, -1.0]]]),
             name="one_hot_embed(ids, weight)")
assert_equal(one_hot_embed(ids, weight.double()).dtype, torch.float64, name="the dtype of one_hot_embed(ids, float64 weight)")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: one-hot left as torch.long (matmul raises) or
# cast to float32 while weight is float64; F.one_hot without num_classes (too few columns when the
# largest id is absent); weight transposed (d_model != n_vocab here); ids and weight swapped;
# the result detached (no gradient reaches weight); a lookup by indexing, F.embedding,
# nn.Embedding, index_select/gather or transformer_lib's one_hot_embed instead of a product.
from coursetools.checks import assert_close, assert_equal, forbid, verify_untampered
verify_untampered()
from torch.overrides import TorchFunctionMode as _TorchFunctionMode
import transformer_lib.tokens as _tokens


class _CallRecorder(_TorchFunctionMode):
    """Records the torch functions called and whether `weight` itself was indexed."""

    def __init__(self, weight):
        super().__init__()
        self.weight, self.names, self.indexed_weight = weight, [], False

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        self.names.append(name)
        self.indexed_weight |= name == "__getitem__" and len(args) > 0 and args[0] is self.weight
        return func(*args, **(kwargs or {}))


_generator = torch.Generator().manual_seed(11)
for _dtype, (_B, _T, _n_vocab, _d_model) in [(torch.float64, (3, 7, 11, 5)), (torch.float32, (2, 4, 9, 6)),
                                             (torch.float64, (1, 1, 6, 3))]:
    _weight = torch.randn(_n_vocab, _d_model, dtype=_dtype, generator=_generator, requires_grad=True)
    _ids = torch.randint(0, _n_vocab - 1, (_B, _T), generator=_generator)  # the last id never occurs
    _expected = F.embedding(_ids, _weight)
    with forbid(_tokens.one_hot_embed, torch.nn.Embedding, F.embedding), _CallRecorder(_weight) as _calls:
        _result = one_hot_embed(_ids.clone(), _weight)
    _lookups = sorted({"embedding", "embedding_bag", "index_select", "gather", "take", "take_along_dim"}
                      & set(_calls.names))
    assert not _lookups and not _calls.indexed_weight, (
        f"one_hot_embed must be a matrix product, but it looked rows up with {_lookups or 'weight[...]'}")
    assert {"matmul", "__matmul__", "mm", "bmm", "einsum", "tensordot"} & set(_calls.names), (
        "one_hot_embed must multiply the one-hot vectors by weight (@, torch.matmul or torch.einsum)")
    assert_equal(_result.dtype, _dtype, name="the dtype of one_hot_embed(ids, weight)")
    assert_close(_result, _expected, atol=1e-12, name=f"one_hot_embed(ids {(_B, _T)}, weight {(_n_vocab, _d_model)})")
    _upstream = torch.randn(_B, _T, _d_model, dtype=_dtype, generator=_generator)
    assert _result.requires_grad, "the result must stay connected to weight (no .detach() / torch.no_grad())"
    (_gradient,) = torch.autograd.grad((_result * _upstream).sum(), _weight)
    (_expected_gradient,) = torch.autograd.grad((_expected * _upstream).sum(), _weight)
    assert_close(_gradient, _expected_gradient, atol=1e-6, name="the gradient with respect to weight")
### END HIDDEN TESTS
'''

# --- exercise 5: patches ---------------------------------------------------------------------

PATCH_TASK = r'''
## Exercise 5: an image as `N` vectors: patches (4 points)

A Transformer reads any input given as `N` vectors of size `D`. For images (as in the Vision
Transformer) the vectors are square patches. Write `patchify(images, patch_size)`:

* `images` has shape `(B, C, H, W)`; if the patch size `p` does not divide both `H` and `W`,
  raise a `ValueError` whose message names `p`, `H` and `W`;
* return a tensor `(B, N, C * p * p)` with `N = (H // p) * (W // p)`, in exactly this order:
  * patch `n = r * (W // p) + c` is the patch in row `r`, column `c` of the grid of patches
    (row-major: left to right, then top to bottom);
  * its vector holds channel 0's `p x p` pixels row by row, then channel 1's, and so on: entry
    `k * p * p + i * p + j` of patch `n` is `images[b, k, r * p + i, c * p + j]`.

Use `reshape` and `permute` (draw the six axes of `(B, C, H // p, p, W // p, p)` first);
`Tensor.unfold` is allowed too. You may not use `F.unfold` / `nn.Unfold` (they do it in one call;
the hidden tests compare your answer with them) or `transformer_lib`'s `patchify`.
'''

PATCH_SOLUTION = r'''
def patchify(images: torch.Tensor, patch_size: int) -> torch.Tensor:
    """images (B, C, H, W) -> patches (B, N, C * p * p), N = (H // p) * (W // p), row-major grid."""
    ### BEGIN SOLUTION
    B, C, H, W = images.shape
    p = patch_size
    if H % p or W % p:
        raise ValueError(f"patch_size p={p} must divide the image height H={H} and width W={W}")
    grid = images.reshape(B, C, H // p, p, W // p, p)  # (B, C, rows, i, cols, j)
    grid = grid.permute(0, 2, 4, 1, 3, 5)              # (B, rows, cols, C, i, j)
    return grid.reshape(B, (H // p) * (W // p), C * p * p)
    ### END SOLUTION
'''

PATCH_TESTS = r'''
image = torch.arange(16.0).reshape(1, 1, 4, 4)  # one 4 x 4 image, one channel
print(image[0, 0])
patches = patchify(image, 2)
print("patchify(image, 2) =\n", patches)
assert_shape(patches, (1, 4, 4), name="patchify(image (1, 1, 4, 4), 2)")
assert_close(patches, torch.tensor([[[0.0, 1, 4, 5], [2, 3, 6, 7], [8, 9, 12, 13], [10, 11, 14, 15]]]),
             name="patchify(image, 2)")
assert_shape(patchify(torch.zeros(2, 3, 6, 8), 2), (2, 12, 12), name="patchify(images (2, 3, 6, 8), 2)")
try:
    patchify(torch.zeros(1, 1, 4, 6), 4)
except ValueError as error:
    print("ValueError, as expected:", error)
else:
    raise AssertionError("patchify(images (1, 1, 4, 6), 4) should raise a ValueError: 4 does not divide W = 6")
### BEGIN HIDDEN TESTS
# Instructor notes: common mistakes this catches: a reshape without permute (pixels of different
# patches mixed); channels last inside a vector (order (i, j, k) instead of (k, i, j)); the grid
# read column by column; H and W (or rows and columns) swapped, visible on non-square images; no
# ValueError, or one only when H is not divisible; calling F.unfold, nn.Unfold or transformer_lib.
from coursetools.checks import assert_close, expect_raises, forbid, verify_untampered
verify_untampered()
import transformer_lib.tokens as _tokens

_generator = torch.Generator().manual_seed(5)
for _shape, _p in [((2, 3, 8, 12), 4), ((1, 2, 6, 4), 2), ((3, 1, 5, 5), 1), ((1, 3, 6, 6), 6), ((2, 2, 4, 6), 2)]:
    _images = torch.randn(*_shape, generator=_generator)
    _expected = F.unfold(_images, kernel_size=_p, stride=_p).transpose(1, 2)
    assert_close(_tokens.patchify(_images, _p), _expected)  # the reference agrees with PyTorch
    with forbid(_tokens.patchify, F.unfold):
        _result = patchify(_images.clone(), _p)
    assert_close(_result, _expected, atol=0, rtol=0, name=f"patchify(images {_shape}, {_p})")
for _shape, _p in [((1, 1, 6, 4), 4), ((1, 1, 4, 6), 4), ((2, 3, 9, 9), 2)]:
    with expect_raises(ValueError, f"patchify(images {_shape}, {_p}) should raise a ValueError"), \
            forbid(_tokens.patchify, F.unfold):
        patchify(torch.zeros(_shape), _p)
### END HIDDEN TESTS
'''

# --- free response ---------------------------------------------------------------------------

QUESTION = r'''
## Exercise 6: what padding costs (3 points, graded by hand)

A batch holds four sentences of 3, 4, 5 and 48 tokens, padded into one `(B, T)` tensor as in
exercise 3. Answer in a few sentences, in the cell below:

1. What fraction of the positions in the batch hold padding?
2. What does that padding cost, and what keeps the `<pad>` positions from changing the model's
   results (think of the mask and of the loss)?
3. Name one way to waste less on padding, and its drawback.
'''

MODEL_ANSWER = r'''
**Model answer and rubric (1 point per part).**

1. `B = 4`, `T = 48`: 192 positions, 3 + 4 + 5 + 48 = 60 real tokens, so 132 / 192 = 68.75 % of
   the positions are padding.
2. Every layer computes on the padded positions as on real ones: memory and time grow with
   `B x T`, and self-attention's cost with `T^2` per sequence, so a long outlier makes the whole
   batch expensive. The mask (False at padding) keeps attention from reading the `<pad>` positions,
   and the loss ignores positions whose target is `<pad>` (e.g. `ignore_index=pad_id`), so padding
   changes neither the outputs at real tokens nor the gradients. (Full credit needs both the cost
   and the role of mask or loss.)
3. Any one with a drawback: bucket or sort by length so a batch holds similar lengths (batches are
   less random); truncate to a maximum length (loses text); pack several sequences into one row
   with a block-diagonal mask (more bookkeeping); a dynamic batch size by tokens.
'''

CLOSING = r'''
## Where this goes next

You have written what happens before the first layer of a Transformer: text becomes ids, ids a
padded batch with a mask, ids vectors through an embedding (a one-hot product), and an image `N`
vectors of size `D`. In `transformer_lib.tokens` the same pieces are `Vocab`, `pad_batch`,
`lengths_to_mask`, `one_hot_embed` and `patchify`; later chapters import them from there.
'''


def build() -> list:
    """The cells of the notebook, in order."""
    return [
        markdown(INTRO),
        instructions("grading", GRADING),
        setup("setup", SETUP),
        code(TRY_IT),
        instructions("vocab_task", VOCAB_TASK),
        solution("build_vocab", VOCAB_SOLUTION),
        tests("test_build_vocab", 3, VOCAB_TESTS),
        instructions("codec_task", CODEC_TASK),
        solution("encode_decode", CODEC_SOLUTION),
        tests("test_encode_decode", 3, CODEC_TESTS),
        instructions("padding_task", PADDING_TASK),
        solution("pad_batch", PADDING_SOLUTION),
        tests("test_pad_batch", 4, PADDING_TESTS),
        instructions("embed_task", EMBED_TASK),
        solution("one_hot_embed", EMBED_SOLUTION),
        tests("test_one_hot_embed", 3, EMBED_TESTS),
        instructions("patch_task", PATCH_TASK),
        solution("patchify", PATCH_SOLUTION),
        tests("test_patchify", 4, PATCH_TESTS),
        instructions("padding_question", QUESTION),
        free_response("padding_answer", 3, MODEL_ANSWER),
        markdown(CLOSING),
    ]


def main() -> None:
    print(f"wrote {write_chapter(ASSIGNMENT, build())}")


if __name__ == "__main__":
    main()
