"""Chapter 1: from raw input to a batch of token ids, and from ids to vectors.

A model never sees text, pixels or sound. It sees a batch of integer ids ``(B, T)`` that an
embedding turns into vectors ``(B, T, d_model)``, or it sees vectors directly (image patches,
audio frames). This module holds the small pieces that do that:

* tokenizers: :func:`char_tokenize`, :func:`word_tokenize`;
* :class:`Vocab`: tokens <-> ids, with four special tokens at fixed ids
  (``<pad>`` = 0, ``<bos>`` = 1, ``<eos>`` = 2, ``<unk>`` = 3);
* batching: :func:`pad_batch` (ids ``(B, T)`` and lengths ``(B,)``),
  :func:`lengths_to_mask` (``(B, T)``, ``True`` at real tokens, the padding mask of attention) and
  :func:`check_token_ids` (what every model calls on the ids it is given);
* inputs as ``N`` vectors of size ``D``: :func:`one_hot_embed` (an embedding lookup written
  as a one-hot matrix product), :func:`patchify` (images) and :func:`frame_signal` (audio).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import torch
import torch.nn.functional as F

PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
SPECIAL_TOKENS: tuple[str, ...] = (PAD, BOS, EOS, UNK)

# A word is a run of letters, digits or underscores; any other visible character
# (punctuation, symbols) is a token of its own; whitespace only separates.
_WORD_OR_SYMBOL = re.compile(r"\w+|[^\w\s]")


# --- tokenizers -----------------------------------------------------------------------------

def char_tokenize(text: str) -> list[str]:
    """Split ``text`` into characters: ``"hi!" -> ["h", "i", "!"]`` (spaces are kept)."""
    _require_str(text, "text")
    return list(text)


def word_tokenize(text: str, lowercase: bool = False) -> list[str]:
    """Split ``text`` into words and punctuation marks; whitespace is dropped.

    ``"Hello, world!" -> ["Hello", ",", "world", "!"]``; with ``lowercase=True`` the words are
    lower-cased first.
    """
    _require_str(text, "text")
    return _WORD_OR_SYMBOL.findall(text.lower() if lowercase else text)


# --- vocabulary -----------------------------------------------------------------------------

class Vocab:
    """A two-way map between tokens (strings) and ids ``0 .. len(vocab) - 1``.

    The special tokens always come first, at fixed ids: ``<pad>`` = 0, ``<bos>`` = 1,
    ``<eos>`` = 2, ``<unk>`` = 3, then any ``extra_specials``, then the ordinary tokens.
    A token that is not in the vocabulary is encoded as ``<unk>``.

    Build one from a corpus with :meth:`Vocab.build`, or from a token list with the
    constructor (``Vocab(["a", "b"])`` gives ``a`` = 4, ``b`` = 5).
    """

    def __init__(self, tokens: Iterable[str] = (), extra_specials: Iterable[str] = ()) -> None:
        self._id_to_token: list[str] = list(SPECIAL_TOKENS)
        self._token_to_id: dict[str, int] = {t: i for i, t in enumerate(SPECIAL_TOKENS)}
        self._specials: set[str] = set(SPECIAL_TOKENS)
        for token in extra_specials:
            self._add(token, "extra_specials")
            self._specials.add(token)
        for token in tokens:
            self._add(token, "tokens")

    def _add(self, token: str, argument: str) -> None:
        _require_str(token, f"every entry of {argument}")
        if token in self._token_to_id:
            raise ValueError(f"{argument} must not repeat a token or name a special token, got {token!r} twice")
        self._token_to_id[token] = len(self._id_to_token)
        self._id_to_token.append(token)

    @classmethod
    def build(cls, corpus: Iterable[Iterable[str]], min_freq: int = 1, max_size: int | None = None,
              extra_specials: Iterable[str] = ()) -> Vocab:
        """Count the tokens of ``corpus`` (an iterable of token sequences) and keep the frequent ones.

        Order: the special tokens, then tokens by decreasing count, ties broken alphabetically,
        so that the same corpus always gives the same ids. Tokens seen fewer than ``min_freq``
        times are left out (they will encode as ``<unk>``). ``max_size``, if given, caps
        ``len(vocab)``, special tokens included.
        """
        if not isinstance(min_freq, int) or min_freq < 1:
            raise ValueError(f"min_freq must be an integer >= 1, got {min_freq!r}")
        extra_specials = list(extra_specials)
        n_specials = len(SPECIAL_TOKENS) + len(extra_specials)
        if max_size is not None and (not isinstance(max_size, int) or max_size < n_specials):
            raise ValueError(f"max_size must be an integer >= {n_specials} (the special tokens), got {max_size!r}")
        counts: Counter[str] = Counter()
        for sequence in corpus:
            _require_token_sequence(sequence, "each sequence of the corpus")
            counts.update(sequence)
        reserved = set(SPECIAL_TOKENS) | set(extra_specials)
        kept = [t for t, n in counts.items() if n >= min_freq and t not in reserved]
        kept.sort(key=lambda token: (-counts[token], token))
        if max_size is not None:
            kept = kept[: max_size - n_specials]
        return cls(kept, extra_specials=extra_specials)

    # lookups

    def __len__(self) -> int:
        return len(self._id_to_token)

    def __contains__(self, token: object) -> bool:
        return token in self._token_to_id

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Vocab):
            return NotImplemented
        return self._id_to_token == other._id_to_token and self._specials == other._specials

    def __repr__(self) -> str:
        preview = ", ".join(repr(t) for t in self._id_to_token[len(SPECIAL_TOKENS):][:8])
        more = ", ..." if len(self) > len(SPECIAL_TOKENS) + 8 else ""
        return f"Vocab(vocab_size={len(self)}, tokens=[{preview}{more}])"

    @property
    def tokens(self) -> list[str]:
        """All tokens in id order (a copy): ``vocab.tokens[i]`` has id ``i``."""
        return list(self._id_to_token)

    def token_to_id(self, token: str) -> int:
        """The id of ``token``, or ``unk_id`` when the vocabulary does not know it."""
        _require_str(token, "token")
        return self._token_to_id.get(token, self.unk_id)

    def id_to_token(self, index: int) -> str:
        """The token with id ``index``; ``IndexError`` outside ``0 .. len(self) - 1``."""
        index = _as_int(index, "id")
        if not 0 <= index < len(self):
            raise IndexError(f"id must be in [0, {len(self) - 1}], got {index}")
        return self._id_to_token[index]

    @property
    def pad_id(self) -> int:
        return self._token_to_id[PAD]

    @property
    def bos_id(self) -> int:
        return self._token_to_id[BOS]

    @property
    def eos_id(self) -> int:
        return self._token_to_id[EOS]

    @property
    def unk_id(self) -> int:
        return self._token_to_id[UNK]

    @property
    def special_ids(self) -> set[int]:
        """Ids of every special token (the fixed four and any extra ones)."""
        return {self._token_to_id[t] for t in self._specials}

    # encoding

    def encode(self, tokens: Sequence[str], add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """Tokens -> ids (unknown tokens -> ``unk_id``), optionally framed by ``<bos>``/``<eos>``.

        ``tokens`` is a sequence of strings (``char_tokenize(text)``, ``word_tokenize(text)``);
        a bare ``str`` is refused, since it is unclear whether it means one token or characters.
        """
        _require_token_sequence(tokens, "tokens")
        ids = [self.token_to_id(t) for t in tokens]
        return ([self.bos_id] if add_bos else []) + ids + ([self.eos_id] if add_eos else [])

    def decode(self, ids: Iterable[int] | torch.Tensor, skip_special: bool = True) -> list[str]:
        """Ids (a list or a 1-D tensor) -> tokens.

        With ``skip_special=True``, ``<pad>``, ``<bos>``, ``<eos>`` and extra special tokens are
        dropped; ``<unk>`` is kept, because it stands at the place of a real (unknown) token.
        """
        if isinstance(ids, torch.Tensor):
            if ids.dim() != 1:
                raise ValueError(f"decode expects a 1-D tensor of ids (T,), got shape {tuple(ids.shape)}")
            ids = ids.tolist()
        dropped = self.special_ids - {self.unk_id} if skip_special else set()
        tokens = []
        for index in ids:
            token = self.id_to_token(index)
            if self._token_to_id[token] not in dropped:
                tokens.append(token)
        return tokens

    # checkpoints

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly description: ``Vocab.from_dict(v.to_dict()) == v``."""
        extra = [t for t in self._id_to_token if t in self._specials and t not in SPECIAL_TOKENS]
        return {"tokens": list(self._id_to_token), "extra_specials": extra}

    @classmethod
    def from_dict(cls, state: dict[str, Any]) -> Vocab:
        """Rebuild a vocabulary saved with :meth:`to_dict`, checking the special ids."""
        tokens = list(state["tokens"])
        if tuple(tokens[: len(SPECIAL_TOKENS)]) != SPECIAL_TOKENS:
            raise ValueError(f"a saved vocabulary must start with {list(SPECIAL_TOKENS)}, "
                             f"got {tokens[: len(SPECIAL_TOKENS)]}")
        extra = list(state.get("extra_specials", []))
        n_fixed = len(SPECIAL_TOKENS) + len(extra)
        if tokens[len(SPECIAL_TOKENS): n_fixed] != extra:
            raise ValueError(f"extra special tokens {extra} must follow the four fixed ones, "
                             f"got {tokens[len(SPECIAL_TOKENS): n_fixed]}")
        return cls(tokens[n_fixed:], extra_specials=extra)


# --- batching -------------------------------------------------------------------------------

def pad_batch(sequences: Sequence[Sequence[int] | torch.Tensor], pad_id: int = 0,
              max_len: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Stack sequences of different lengths into one tensor, padding on the right.

    Args:
        sequences: ``B`` sequences of token ids (lists of ints or 1-D integer tensors).
        pad_id: the id written after the end of each sequence.
        max_len: the width ``T`` of the result; by default the longest sequence.

    Returns:
        ``ids``, a LongTensor ``(B, T)``, and ``lengths``, a LongTensor ``(B,)`` holding the
        number of real tokens in each row.
    """
    if isinstance(sequences, (str, torch.Tensor)) or not isinstance(sequences, Sequence):
        raise TypeError(f"sequences must be a list of id sequences, got {type(sequences).__name__}")
    if len(sequences) == 0:
        raise ValueError("pad_batch needs at least one sequence, got an empty batch")
    rows = [_as_id_list(s, f"sequences[{i}]") for i, s in enumerate(sequences)]
    lengths = [len(row) for row in rows]
    width = max(lengths) if max_len is None else _as_int(max_len, "max_len")
    for i, length in enumerate(lengths):
        if length > width:
            raise ValueError(f"sequences[{i}] has length {length}, longer than max_len={width}")
    pad = _as_int(pad_id, "pad_id")
    ids = torch.tensor([row + [pad] * (width - len(row)) for row in rows], dtype=torch.long)  # one copy, not B
    return ids, torch.tensor(lengths, dtype=torch.long)


def lengths_to_mask(lengths: torch.Tensor, max_len: int | None = None) -> torch.Tensor:
    """Boolean mask ``(B, T)``: ``mask[b, t]`` is True when ``t < lengths[b]`` (a real token).

    ``T`` is ``max_len`` if given, else ``lengths.max()``. True means "a real token, may be
    attended to", the convention used by every mask in this library.
    """
    if not isinstance(lengths, torch.Tensor) or lengths.dim() != 1 or lengths.is_floating_point():
        shown = tuple(lengths.shape) if isinstance(lengths, torch.Tensor) else type(lengths).__name__
        raise TypeError(f"lengths must be a 1-D integer tensor (B,), got {shown}")
    if bool((lengths < 0).any()):
        raise ValueError(f"lengths must be >= 0, got {lengths.tolist()}")
    longest = int(lengths.max()) if len(lengths) else 0
    width = longest if max_len is None else _as_int(max_len, "max_len")
    if longest > width:
        raise ValueError(f"a length of {longest} does not fit in max_len={width}")
    positions = torch.arange(width, device=lengths.device)  # (T,)
    return positions[None, :] < lengths[:, None]            # (1, T) < (B, 1) -> (B, T)


def check_token_ids(tokens: torch.Tensor, vocab_size: int, max_len: int | None = None, name: str = "tokens") -> None:
    """Raise ``ValueError`` unless ``tokens`` is ``(B, length)`` integer ids in ``[0, vocab_size)``,
    ``length <= max_len``."""
    if tokens.dim() != 2 or tokens.is_floating_point() or tokens.is_complex():
        raise ValueError(f"{name} must be integer token ids of shape (B, length), "
                         f"got {tokens.dtype} of shape {tuple(tokens.shape)}")
    if max_len is not None and tokens.size(1) > max_len:
        raise ValueError(f"{name} is too long: expected shape (B, length <= max_len={max_len}), "
                         f"got {tuple(tokens.shape)}")
    if tokens.numel() and (tokens.min() < 0 or tokens.max() >= vocab_size):
        raise ValueError(
            f"{name} must be ids in [0, vocab_size={vocab_size}), "
            f"got values from {int(tokens.min())} to {int(tokens.max())}"
        )


# --- the input as N vectors of size D -------------------------------------------------------

def one_hot_embed(ids: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """An embedding lookup written as a matrix product: ``one_hot(ids) @ weight``.

    Args:
        ids: integer tensor ``(B, T)`` (any shape works) with values in ``[0, vocab_size)``.
        weight: the embedding table ``(vocab_size, d_model)``, one row per token.

    Returns:
        ``(B, T, d_model)``, equal to ``weight[ids]`` and to ``F.embedding(ids, weight)``.
    """
    if weight.dim() != 2:
        raise ValueError(f"weight must be (vocab_size, d_model), got shape {tuple(weight.shape)}")
    if ids.is_floating_point():
        raise TypeError(f"ids must be an integer tensor, got dtype {ids.dtype}")
    one_hot = F.one_hot(ids, num_classes=weight.shape[0]).to(weight.dtype)  # (B, T, vocab_size)
    return one_hot @ weight                                                 # (B, T, d_model)


def patchify(images: torch.Tensor, patch_size: int) -> torch.Tensor:
    """Cut images into square patches and flatten each one: the image as ``N`` vectors.

    Args:
        images: ``(B, C, H, W)``, with ``H`` and ``W`` multiples of ``patch_size`` (``p``).
        patch_size: the side ``p`` of a patch in pixels.

    Returns:
        ``(B, N, C * p * p)`` with ``N = (H / p) * (W / p)``. Patches are in row-major order over
        the grid (left to right, then top to bottom); inside a vector the channels stay
        together: entry ``c * p * p + i * p + j`` is pixel ``(i, j)`` of channel ``c``. This is
        the order of ``F.unfold(images, p, stride=p).transpose(1, 2)``.
    """
    if images.dim() != 4:
        raise ValueError(f"images must be (B, C, H, W), got shape {tuple(images.shape)}")
    B, C, H, W = images.shape
    p = _as_int(patch_size, "patch_size")
    if p < 1 or H % p or W % p:
        raise ValueError(f"patch_size must divide the image height and width, got p={p} for H={H}, W={W}")
    grid = images.reshape(B, C, H // p, p, W // p, p)  # (B, C, rows, i, cols, j)
    grid = grid.permute(0, 2, 4, 1, 3, 5)              # (B, rows, cols, C, i, j)
    return grid.reshape(B, (H // p) * (W // p), C * p * p)


def frame_signal(signal: torch.Tensor, frame_len: int, hop: int | None = None) -> torch.Tensor:
    """Cut signals into (possibly overlapping) windows: the sound as ``N`` vectors.

    Args:
        signal: ``(B, L)`` samples.
        frame_len: samples per frame, the vector size ``D``.
        hop: samples between the starts of two frames (default ``frame_len``: no overlap).

    Returns:
        ``(B, N, frame_len)`` with ``N = 1 + (L - frame_len) // hop``; samples that do not
        fill a last frame are dropped.
    """
    if signal.dim() != 2:
        raise ValueError(f"signal must be (B, L), got shape {tuple(signal.shape)}")
    frame_len = _as_int(frame_len, "frame_len")
    hop = frame_len if hop is None else _as_int(hop, "hop")
    if frame_len < 1 or hop < 1 or frame_len > signal.shape[1]:
        raise ValueError(f"need 1 <= frame_len <= L and hop >= 1, got frame_len={frame_len}, "
                         f"hop={hop}, L={signal.shape[1]}")
    return signal.unfold(dimension=1, size=frame_len, step=hop)


# --- argument checks ------------------------------------------------------------------------

def _require_str(value: object, what: str) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {type(value).__name__}: {value!r}")


def _require_token_sequence(tokens: object, what: str) -> None:
    if isinstance(tokens, str):
        raise TypeError(f"{what} must be a sequence of tokens such as list(text), got a str: {tokens!r}")
    if not isinstance(tokens, Iterable):
        raise TypeError(f"{what} must be a sequence of str tokens, got {type(tokens).__name__}")


def _as_int(value: object, what: str) -> int:
    if isinstance(value, torch.Tensor) and value.dim() == 0 and not value.is_floating_point():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {type(value).__name__}: {value!r}")
    return value


def _as_id_list(sequence: object, what: str) -> list[int]:
    if isinstance(sequence, torch.Tensor):
        if sequence.dim() != 1 or sequence.is_floating_point():
            raise TypeError(f"{what} must be a 1-D integer tensor, got shape {tuple(sequence.shape)} "
                            f"and dtype {sequence.dtype}")
        return sequence.tolist()
    if isinstance(sequence, str) or not isinstance(sequence, Iterable):
        raise TypeError(f"{what} must be a list of int ids, got {type(sequence).__name__}")
    ids = list(sequence)
    if all(type(x) is int for x in ids):  # the common case, checked without a call per id
        return ids
    return [_as_int(x, f"each id of {what}") for x in ids]
