"""Write the course's text corpus: the source of CPython 3.11's standard-library modules, split by file.

    python3.11 benchmarks/make_python_corpus.py        # writes transformer_lib/corpora/python_stdlib.json.xz

Chapters 8, 10 and 11 train their language models on it. It used to be read from the running
Python, so Python 3.10, 3.11 and 3.12 gave different texts; it is now shipped, made once by this
script from CPython 3.11's ``Lib/`` (Python Software Foundation License, copied beside it as
``LICENSE-PSF.txt``), so that every install reads the same characters.

What it holds: every top-level module ``Lib/*.py`` whose text is pure ASCII (so the vocabulary is
printable ASCII, tab and newline), except three that are not code people write (``this.py`` is
ROT13-encoded prose, ``antigravity.py`` a joke, ``stringprep.py`` generated tables).

The split is by whole file, so that validation and test measure how a model does on modules it
never saw, not on the tail of one it trained on: files are dealt in the order of the SHA-256 of their
names, to test until it holds 5 % of the characters, then to validation until it holds 5 %, the rest
to training. A file larger than 1 % of the corpus always goes to training, so that no single module
makes up most of a held-out split.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import shutil
import sys
import sysconfig
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "transformer_lib" / "corpora"
LEFT_OUT = {"this.py", "antigravity.py", "stringprep.py"}
HELD_OUT_SHARE, LARGEST_HELD_OUT = 0.05, 0.01


def read_modules(lib: Path) -> dict[str, str]:
    """``{file name: text}`` of the top-level ASCII modules of ``lib``, in name order."""
    files = {}
    for path in sorted(lib.glob("*.py")):
        data = path.read_bytes()
        if path.name in LEFT_OUT or not data.isascii():
            continue
        files[path.name] = data.decode("ascii")
    return files


def split_files(files: dict[str, str]) -> dict[str, list[str]]:
    """``{"train": [...], "valid": [...], "test": [...]}``: file names, each list in name order."""
    total = sum(map(len, files.values()))
    splits: dict[str, list[str]] = {"train": [], "valid": [], "test": []}
    held = {"test": 0, "valid": 0}
    for name in sorted(files, key=lambda n: hashlib.sha256(n.encode()).hexdigest()):
        size = len(files[name])
        target = next((s for s in ("test", "valid") if held[s] < HELD_OUT_SHARE * total), "train")
        if target != "train" and size > LARGEST_HELD_OUT * total:
            target = "train"
        if target != "train":
            held[target] += size
        splits[target].append(name)
    return {name: sorted(names) for name, names in splits.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    if sys.version_info[:2] != (3, 11):
        raise SystemExit(f"run this with Python 3.11 (the corpus is CPython 3.11's Lib/), not {sys.version.split()[0]}")
    lib = Path(sysconfig.get_paths()["stdlib"])
    files = read_modules(lib)
    corpus = {"source": f"CPython {sys.version.split()[0]} Lib/*.py (pure ASCII files)", "splits": split_files(files),
              "files": files}
    args.out.mkdir(parents=True, exist_ok=True)
    data = json.dumps(corpus, indent=0, sort_keys=True).encode("ascii")
    (args.out / "python_stdlib.json.xz").write_bytes(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME))
    shutil.copyfile(lib / "LICENSE.txt", args.out / "LICENSE-PSF.txt")
    for split, names in corpus["splits"].items():
        chars = sum(len(files[n]) for n in names)
        print(f"{split:5s}: {len(names):3d} files, {chars:,d} characters")
    written = args.out / "python_stdlib.json.xz"
    print(f"wrote {written} ({written.stat().st_size:,d} bytes)")


if __name__ == "__main__":
    main()
