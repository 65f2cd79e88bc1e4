"""Seeded tasks to train on: synthetic sequences, dates, a toy language, real text.

Every translation-style task is a :class:`Seq2SeqTask`: a shared :class:`~transformer_lib.tokens.Vocab`
and three splits of ``(src ids, tgt ids)`` pairs. The splits never overlap, by construction:
examples are drawn with a seeded generator, duplicates dropped, and each source is sent to
a split by a hash of its text, so a source can only ever land in one split.

* :func:`copy_task`, :func:`reverse_task`, :func:`sort_task`: sequences of letters;
* :func:`addition_task`: ``"123+45"`` -> ``"168"``;
* :func:`date_task`: ``"3 March 2021"``, ``"03/03/21"``, ``"Wednesday, March 3, 2021"``... -> ``"2021-03-03"``;
* :func:`toy_translation_task`: a small English-like language into an invented one that puts
  the verb last and adjectives and determiners after the noun, so alignments are not diagonal.

:func:`text_task` is language modelling on the Python standard library's own source text
(:mod:`transformer_lib.corpus`, shipped with the library, split by whole file).
English pronunciation on CMUdict builds on these (:mod:`transformer_lib.g2p`); the command line
(:mod:`transformer_lib.train`) names every task.
"""

from __future__ import annotations

import calendar
import datetime
import random
import string
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.utils.data import DataLoader

from transformer_lib.corpus import python_corpus
from transformer_lib.data import EOS_ID, lm_loader, pair_loader
from transformer_lib.tokens import Vocab

__all__ = [
    "Seq2SeqTask",
    "TextTask",
    "copy_task",
    "reverse_task",
    "sort_task",
    "addition_task",
    "date_task",
    "toy_translation_task",
    "text_task",
    "split_of",
    "DATE_FORMATS",
]

Pair = tuple[list[int], list[int]]
Sample = tuple[list[str], list[str]]  # (source tokens, target tokens)
SPLITS = ("train", "valid", "test")


@dataclass
class Seq2SeqTask:
    """A translation-style task: ``(src, tgt)`` id pairs in three disjoint splits.

    Targets hold no special tokens; batching adds ``<bos>``/``<eos>`` (see
    :func:`~transformer_lib.data.collate_pairs`).
    """

    name: str
    vocab: Vocab
    train: list[Pair]
    valid: list[Pair]
    test: list[Pair]
    sep: str = ""  # how tokens join back into text ("" for characters, " " for words)

    def split(self, name: str) -> list[Pair]:
        """The pairs of split ``name`` (``"train"``, ``"valid"`` or ``"test"``)."""
        if name not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {name!r}")
        return getattr(self, name)

    def loader(self, split: str, batch_size: int, shuffle: bool | None = None, seed: int = 0) -> DataLoader:
        """Padded, length-bucketed batches of one split (shuffled for ``"train"`` by default)."""
        shuffle = split == "train" if shuffle is None else shuffle
        return pair_loader(self.split(split), batch_size, shuffle=shuffle, seed=seed)

    @property
    def max_src_len(self) -> int:
        return max(len(src) for split in SPLITS for src, _ in self.split(split))

    @property
    def max_tgt_len(self) -> int:
        """Longest target, not counting ``<bos>``/``<eos>``."""
        return max(len(tgt) for split in SPLITS for _, tgt in self.split(split))

    def tokens(self, ids: list[int] | torch.Tensor) -> list[str]:
        """Tokens of one id sequence (up to the first ``<eos>``, padding dropped)."""
        ids = [int(i) for i in ids]
        return self.vocab.decode(ids[: ids.index(EOS_ID)] if EOS_ID in ids else ids)

    def to_text(self, ids: list[int] | torch.Tensor) -> str:
        """Text of one id sequence (up to the first ``<eos>``, padding dropped)."""
        return self.sep.join(self.tokens(ids))


@dataclass
class TextTask:
    """Character-level language modelling: three 1-D id streams that share no text."""

    name: str
    vocab: Vocab
    train: torch.Tensor  # 1-D ids
    valid: torch.Tensor
    test: torch.Tensor
    block_size: int

    def loader(self, split: str, batch_size: int, shuffle: bool | None = None, seed: int = 0) -> DataLoader:
        """``{"idx", "targets"}`` batches of ``block_size`` windows of one split.

        Training windows (``split="train"``, ``shuffle`` left at ``None``) start at random offsets
        (:class:`~transformer_lib.data.RandomOffsetBatchSampler`); validation and test are cut into
        non-overlapping windows, in order, so that every prediction is scored once.
        ``shuffle=True``/``False`` asks for the non-overlapping windows, shuffled or not.
        """
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        random_offsets = shuffle is None and split == "train"
        return lm_loader(getattr(self, split), self.block_size, batch_size, shuffle=bool(shuffle), seed=seed,
                         random_offsets=random_offsets)

    def to_text(self, ids: list[int] | torch.Tensor) -> str:
        return "".join(self.vocab.decode(ids))


def split_of(key: str, shares: dict[str, float]) -> str:
    """The split ``key`` belongs to: a CRC-32 hash of its text, cut in proportion to ``shares``.

    ``shares`` maps each of :data:`SPLITS` to its weight (fractions or counts: they are
    normalised). The hash is the same on every run and every version of Python, so a key lands
    in one split whatever the seed.
    """
    u = zlib.crc32(key.encode("utf-8")) / 2**32
    total = sum(shares.values())
    edge = 0.0
    for name in SPLITS:
        edge += shares[name] / total
        if u < edge:
            return name
    return SPLITS[-1]


def _build(name: str, sample: Callable[[random.Random], Sample], n_train: int, n_valid: int,
           n_test: int, seed: int, sep: str = "") -> Seq2SeqTask:
    """Draw unique samples until every split holds its requested number of pairs."""
    sizes = {"train": n_train, "valid": n_valid, "test": n_test}
    for split, n in sizes.items():
        if not isinstance(n, int) or n < 1:
            raise ValueError(f"n_{split} must be a positive integer, got {n!r}")
    rng = random.Random(seed)
    seen: set[str] = set()
    drawn: dict[str, list[Sample]] = {split: [] for split in SPLITS}
    budget = 20 * sum(sizes.values()) + 1000
    while any(len(drawn[s]) < sizes[s] for s in SPLITS):
        if budget == 0:
            got = {s: len(v) for s, v in drawn.items()}
            raise ValueError(
                f"task {name!r} cannot produce {sizes} unique examples (found {got}): "
                "the space of inputs is too small; ask for fewer examples or longer inputs"
            )
        budget -= 1
        src, tgt = sample(rng)
        key = sep.join(src)
        split = split_of(key, sizes)
        if key in seen or len(drawn[split]) >= sizes[split]:
            continue
        seen.add(key)
        drawn[split].append((src, tgt))
    vocab = Vocab.build([(*src, *tgt) for pairs in drawn.values() for src, tgt in pairs])
    encoded = {s: [(vocab.encode(src), vocab.encode(tgt)) for src, tgt in drawn[s]] for s in SPLITS}
    return Seq2SeqTask(name, vocab, encoded["train"], encoded["valid"], encoded["test"], sep)


def _symbol_task(name: str, transform: Callable[[list[str]], list[str]], n_train: int, n_valid: int,
                 n_test: int, length: int, n_symbols: int, min_length: int | None, seed: int) -> Seq2SeqTask:
    if not 1 <= n_symbols <= 26:
        raise ValueError(f"n_symbols must be in [1, 26], got {n_symbols}")
    min_length = length if min_length is None else min_length
    if not 1 <= min_length <= length:
        raise ValueError(f"need 1 <= min_length <= length, got min_length={min_length}, length={length}")
    symbols = string.ascii_lowercase[:n_symbols]

    def sample(rng: random.Random) -> Sample:
        src = rng.choices(symbols, k=rng.randint(min_length, length))
        return src, transform(src)

    return _build(name, sample, n_train, n_valid, n_test, seed)


def copy_task(n_train: int = 5000, n_valid: int = 500, n_test: int = 500, length: int = 16,
              n_symbols: int = 10, min_length: int | None = None, seed: int = 0) -> Seq2SeqTask:
    """Copy a random string of ``n_symbols`` letters (length ``min_length``..``length``)."""
    return _symbol_task("copy", list, n_train, n_valid, n_test, length, n_symbols, min_length, seed)


def reverse_task(n_train: int = 5000, n_valid: int = 500, n_test: int = 500, length: int = 16,
                 n_symbols: int = 10, min_length: int | None = None, seed: int = 0) -> Seq2SeqTask:
    """Reverse a random string of ``n_symbols`` letters (length ``min_length``..``length``)."""
    return _symbol_task("reverse", lambda s: s[::-1], n_train, n_valid, n_test, length, n_symbols,
                        min_length, seed)


def sort_task(n_train: int = 5000, n_valid: int = 500, n_test: int = 500, length: int = 16,
              n_symbols: int = 10, min_length: int | None = None, seed: int = 0) -> Seq2SeqTask:
    """Sort the letters of a random string (length ``min_length``..``length``)."""
    return _symbol_task("sort", sorted, n_train, n_valid, n_test, length, n_symbols, min_length, seed)


def addition_task(n_train: int = 5000, n_valid: int = 500, n_test: int = 500, n_digits: int = 3,
                  seed: int = 0) -> Seq2SeqTask:
    """Add two numbers of up to ``n_digits`` digits, character by character: ``"123+45"`` -> ``"168"``."""
    if n_digits < 1:
        raise ValueError(f"n_digits must be >= 1, got {n_digits}")

    def sample(rng: random.Random) -> Sample:
        a, b = (rng.randrange(10 ** rng.randint(1, n_digits)) for _ in range(2))
        return list(f"{a}+{b}"), list(str(a + b))

    return _build("addition", sample, n_train, n_valid, n_test, seed)


#: The ways :func:`date_task` writes a date (English names, independent of the locale).
DATE_FORMATS: tuple[Callable[[datetime.date], str], ...] = (
    lambda d: f"{d.day} {calendar.month_name[d.month]} {d.year}",
    lambda d: f"{d.day:02d}/{d.month:02d}/{d.year % 100:02d}",
    lambda d: f"{calendar.day_name[d.weekday()]}, {calendar.month_name[d.month]} {d.day}, {d.year}",
    lambda d: f"{calendar.month_abbr[d.month]} {d.day}, {d.year}",
    lambda d: f"{d.day}.{d.month}.{d.year}",
)


def date_task(n_train: int = 20000, n_valid: int = 1000, n_test: int = 1000, first_year: int = 2000,
              last_year: int = 2099, seed: int = 0) -> Seq2SeqTask:
    """Translate a date written in one of :data:`DATE_FORMATS` into ISO 8601 (``"2021-03-03"``).

    Two-digit years (``"03/03/21"``) mean ``2000 + yy``, so the default range is one century.
    """
    if not 1 <= first_year <= last_year <= 9999:
        raise ValueError(f"need 1 <= first_year <= last_year <= 9999, got {first_year}, {last_year}")
    start = datetime.date(first_year, 1, 1).toordinal()
    stop = datetime.date(last_year, 12, 31).toordinal()

    def sample(rng: random.Random) -> Sample:
        day = datetime.date.fromordinal(rng.randint(start, stop))
        return list(rng.choice(DATE_FORMATS)(day)), list(day.isoformat())

    return _build("date", sample, n_train, n_valid, n_test, seed)


# The toy language: source words and their translations.
_DETERMINERS = {"the": "ko", "a": "na"}
_ADJECTIVES = {"big": "mora", "small": "pil", "red": "suna", "old": "kesh", "happy": "lumi", "quiet": "tavo"}
_NOUNS = {"dog": "bak", "cat": "miro", "bird": "tiki", "child": "ren", "teacher": "sola",
          "farmer": "grun", "king": "dak", "fox": "vul", "horse": "ekwa", "fish": "plo"}
_VERBS = {"sees": "vido", "likes": "amat", "follows": "sekwa", "helps": "juva",
          "finds": "trova", "calls": "voka", "feeds": "pasko", "hears": "audi"}
_PREPOSITIONS = {"in": "en", "near": "pres", "behind": "post", "under": "sub"}
_PLACES = {"house": "domo", "garden": "ort", "forest": "silva", "river": "flu"}


def _noun_phrase(rng: random.Random, nouns: dict[str, str]) -> Sample:
    """``det [adj] noun`` -> ``noun' [adj'] det'``."""
    det = rng.choice(list(_DETERMINERS))
    adj = rng.choice([None, *_ADJECTIVES])
    noun = rng.choice(list(nouns))
    src = [det, *([adj] if adj else []), noun]
    tgt = [nouns[noun], *([_ADJECTIVES[adj]] if adj else []), _DETERMINERS[det]]
    return src, tgt


def toy_translation_task(n_train: int = 10000, n_valid: int = 1000, n_test: int = 1000,
                         seed: int = 0) -> Seq2SeqTask:
    """Translate ``subject verb object [place]`` into ``subject [place] object verb`` (word level).

    Noun phrases turn around too (``"the big dog"`` -> ``"bak mora ko"``) and prepositions
    become postpositions, so the alignment between the two sentences is far from diagonal.
    """

    def sample(rng: random.Random) -> Sample:
        subj, subj_t = _noun_phrase(rng, _NOUNS)
        verb = rng.choice(list(_VERBS))
        obj, obj_t = _noun_phrase(rng, _NOUNS)
        place, place_t = [], []
        if rng.random() < 0.5:
            prep = rng.choice(list(_PREPOSITIONS))
            np_src, np_tgt = _noun_phrase(rng, _PLACES)
            place, place_t = [prep, *np_src], [*np_tgt, _PREPOSITIONS[prep]]
        return [*subj, verb, *obj, *place], [*subj_t, *place_t, *obj_t, _VERBS[verb]]

    return _build("toy_translation", sample, n_train, n_valid, n_test, seed, sep=" ")


def text_task(block_size: int = 128, text: str | None = None, valid_fraction: float = 0.05,
              test_fraction: float = 0.05) -> TextTask:
    """Character-level language modelling, by default on the shipped standard-library corpus.

    With ``text=None``, the splits are :func:`~transformer_lib.corpus.python_corpus`'s, by whole
    file (validation and test modules are never trained on), and the vocabulary is the training
    text's characters (a character only the other splits hold would encode as ``<unk>``). With a
    ``text``, it is cut into three contiguous parts (train, then valid, then test, by the
    fractions), so no window of one split overlaps another, and the vocabulary is the whole text's.
    """
    if text is None:
        corpus = python_corpus()
        texts = [corpus.text(split) for split in SPLITS]
        vocab = Vocab.build([list(texts[0])])
        parts = [torch.tensor(vocab.encode(list(part)), dtype=torch.long) for part in texts]
    else:
        if not (0 < valid_fraction and 0 < test_fraction and valid_fraction + test_fraction < 1):
            raise ValueError(
                f"need positive fractions summing below 1, got valid={valid_fraction}, test={test_fraction}"
            )
        vocab = Vocab.build([list(text)])
        ids = torch.tensor(vocab.encode(list(text)), dtype=torch.long)
        n_valid, n_test = int(len(ids) * valid_fraction), int(len(ids) * test_fraction)
        parts = torch.split(ids, [len(ids) - n_valid - n_test, n_valid, n_test])
    for name, part in zip(SPLITS, parts):
        if len(part) < block_size + 1:
            raise ValueError(f"the {name} split has {len(part)} characters, "
                             f"fewer than block_size + 1 = {block_size + 1}")
    return TextTask("text", vocab, *parts, block_size=block_size)
