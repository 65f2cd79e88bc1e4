"""The course's text corpus, shipped with the library: Python's own standard library, split by file.

Chapters 8, 10 and 11 train character-level language models on real, human-written text that
needs no download: the source of the pure-ASCII top-level modules of CPython 3.11's ``Lib/``
(``transformer_lib/corpora/python_stdlib.json.xz``, about 0.85 MB compressed, 4.4 million
characters; Python Software Foundation License, ``corpora/LICENSE-PSF.txt``). It is shipped rather
than read from the running Python so that every install, whatever its Python version, reads the
same characters (``benchmarks/make_python_corpus.py`` made it).

The split is by **whole file**: the validation and test modules are never seen in training, so a
model is measured on how it generalises to code it has not read, not on the tail of a module whose
head it trained on (where long exact repeats of identifiers reward memorising). The file names
of each split are stored with the text; about 5 % of the characters are validation and 5 % test.
"""

from __future__ import annotations

import hashlib
import json
import lzma
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

__all__ = ["CORPUS_FILE", "Corpus", "python_corpus"]

#: The shipped corpus: JSON ``{"source", "splits": {split: [file names]}, "files": {file name: text}}``, xz-compressed.
CORPUS_FILE = Path(__file__).resolve().parent / "corpora" / "python_stdlib.json.xz"
SPLITS = ("train", "valid", "test")


@dataclass(frozen=True)
class Corpus:
    """A text corpus of named files, each file in one split."""

    source: str  #: where the text comes from
    files: dict[str, str]  #: file name -> text
    splits: dict[str, list[str]]  #: split name -> the file names in it, in name order

    def text(self, split: str) -> str:
        """The files of ``split`` (``"train"``, ``"valid"`` or ``"test"``), one after the other, a blank line apart."""
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        return "\n".join(self.files[name] for name in self.splits[split])

    @property
    def sha256(self) -> str:
        """SHA-256 (hex) of the three splits' texts, in order: what a results file records of its corpus."""
        digest = hashlib.sha256()
        for split in SPLITS:
            digest.update(self.text(split).encode("utf-8"))
        return digest.hexdigest()


@lru_cache(maxsize=1)
def python_corpus() -> Corpus:
    """The shipped standard-library corpus (read and decompressed once per process, about 0.1 s)."""
    data = json.loads(lzma.decompress(CORPUS_FILE.read_bytes()))
    files, splits = data["files"], data["splits"]
    if set(splits) != set(SPLITS) or any(name not in files for names in splits.values() for name in names):
        raise ValueError(f"{CORPUS_FILE} is not a corpus of files split into {SPLITS}")
    return Corpus(data["source"], files, {split: list(splits[split]) for split in SPLITS})
