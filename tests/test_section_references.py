"""Every "section N.M" of the book and of the exercise notebooks names the heading that the built book numbers N.M.

The table of contents numbers the chapters and their headings (``tests/book_helpers.section_numbers``;
``tests/test_book.py`` checks those numbers against the built book), so inserting a section renumbers
every later one, and a reference typed as a number goes stale without a warning. The check, for each
"section 5.6" (or "sections 5.2 and 5.6") in a chapter page or a notebook source: the number must
exist, and the paragraph that cites it must share a word with that section's heading, a word that
no other heading of the same chapter and depth has (words compared by their stems: "costs" is "cost", "loader"
is "load"). "This costs almost nothing extra ... (section 5.6 counts them)" passes when 5.6 is "What
it costs"; the same paragraph citing 5.5, "The same function as torch.nn.MultiheadAttention", fails.
A reference to another work's sections ("{cite:p}`vaswani2017attention` (section 3.4)", "its section
3.4") is not the book's and is skipped. Reads text only: fast.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from coursetools.common.layout import REPO_ROOT

from book_helpers import chapter_pages, section_numbers

#: "section 5.6", "Sections 2.2 and 2.5", "sections 9.2, 9.4 or 9.8"
REFERENCE = re.compile(r"\b[Ss]ections?\s+(\d+(?:\.\d+)+(?:(?:,\s*|\s+(?:and|or)\s+)\d+(?:\.\d+)+)*)")
#: what makes the reference another work's: a citation just before it, "its section", "the paper's section"
EXTERNAL = re.compile(r"(?:\{cite:\w+\}`[^`]+`\s*\(|\bits\s+|\bpaper's\s+)$")
WORD = re.compile(r"[A-Za-z][A-Za-z']{2,}")
#: words that say nothing about which section is meant
STOP_WORDS = frozenset("""about after also and are before between both but can does each for from has have how into
its itself not one only other our out over section sections than that the their them then these they this those
through two under what when where which while who why with without you your""".split())
SUFFIXES = {"ings": "", "ing": "", "ers": "", "er": "", "ies": "y", "es": "", "ed": "", "s": "", "e": ""}


def stem(word: str) -> str:
    """A crude stem, enough to match a heading's word in a sentence: "costs", "cost" -> "cost";
    "splitting", "split" -> "split"; "queries", "query" -> "query"."""
    word = word.lower().removesuffix("'s")
    for suffix, replacement in SUFFIXES.items():
        if word.endswith(suffix) and not word.endswith("ss") and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + replacement
            break
    return word[:-1] if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiousl" else word


def stems(text: str) -> set[str]:
    """The stems of the words of ``text`` (hyphenated words count as their parts), stop words left out."""
    parts = (part for word in re.split(r"[\s`*_$(),.:;!?\"/\\{}\[\]-]+", text) for part in WORD.findall(word))
    return {stem(part) for part in parts if part.lower() not in STOP_WORDS}


def distinctive_words(numbers: dict[str, tuple[str, str]]) -> dict[str, set[str]]:
    """Section number -> the stems of its heading that no other heading of the same chapter and depth
    has (the numbers a stale reference could have meant: 9.4 is told from 9.1-9.11, not from 9.11.3)."""
    def kind(number: str) -> tuple[str, int]:
        return number.split(".")[0], number.count(".")

    words = {number: stems(title) for number, (_, title) in numbers.items()}
    distinct = {}
    for number in numbers:
        others = set().union(*(w for other, w in words.items() if other != number and kind(other) == kind(number)))
        distinct[number] = words[number] - others
    return distinct


def paragraph_around(text: str, start: int, end: int) -> str:
    before = text.rfind("\n\n", 0, start)
    after = text.find("\n\n", end)
    return text[before + 1 if before >= 0 else 0:after if after >= 0 else len(text)]


def bad_references(text: str, numbers: dict[str, tuple[str, str]], distinct: dict[str, set[str]]) -> list[str]:
    """Each "section N.M" in ``text`` that the book does not number, or whose paragraph shares no
    distinctive word with the heading the book numbers so."""
    bad = []
    for match in REFERENCE.finditer(text):
        if EXTERNAL.search(text[max(0, match.start() - 80):match.start()]):
            continue
        line = text.count("\n", 0, match.start()) + 1
        context = stems(paragraph_around(text, match.start(), match.end()))
        for number in re.findall(r"\d+(?:\.\d+)+", match.group(1)):
            if number not in numbers:
                bad.append(f"line {line}: {match.group(0)!r}: the book has no section {number}")
            elif not context & distinct[number]:
                bad.append(f"line {line}: {match.group(0)!r}: the book's section {number} is "
                           f"{numbers[number][1]!r} ({numbers[number][0]}), and the paragraph that cites it "
                           f"shares none of its words {sorted(distinct[number])}")
    return bad


def referring_files() -> list[Path]:
    """The chapter pages and the notebook sources (what the released notebooks are made from)."""
    return [REPO_ROOT / f"{page}.md" for page in chapter_pages()] + sorted(REPO_ROOT.glob("solutions/*/*.md"))


@pytest.fixture(scope="module")
def numbers() -> dict[str, tuple[str, str]]:
    return section_numbers()


@pytest.mark.parametrize("path", referring_files(), ids=lambda path: str(path.relative_to(REPO_ROOT)))
def test_every_section_reference_names_the_section_the_book_numbers_so(path: Path, numbers):
    bad = bad_references(path.read_text(encoding="utf-8"), numbers, distinctive_words(numbers))
    assert not bad, f"{path.relative_to(REPO_ROOT)} refers to sections by numbers the built book gives others: {bad}"


def test_the_numbers_follow_the_table_of_contents(numbers):
    assert numbers["5"] == ("book/ch05_multi_head", "Multi-head attention")
    assert numbers["5.6"] == ("book/ch05_multi_head", "What it costs")
    # a chapter's other pages come after its own sections: chapter 9's pronunciation page, then its exercises
    last_own = max(int(n.split(".")[1]) for n, (page, _) in numbers.items()
                   if n.startswith("9.") and page == "book/ch09_transformer")
    assert numbers[f"9.{last_own + 1}"][0] == "book/ch09_pronunciation"
    assert numbers[f"9.{last_own + 2}"][0] == "notebooks/ch09_transformer/ch09_transformer"
    assert numbers[f"9.{last_own + 1}.1"][0] == "book/ch09_pronunciation"


def test_the_check_catches_a_stale_number_and_skips_other_works():
    numbers = {"5": ("book/ch05", "Multi-head attention"), "5.1": ("book/ch05", "One head, one average"),
               "5.5": ("book/ch05", "The same function as `torch.nn.MultiheadAttention`"),
               "5.6": ("book/ch05", "What it costs"), "5.7": ("book/ch05", "Experiment: heads learn different jobs")}
    distinct = distinctive_words(numbers)

    def bad(text: str) -> list[str]:
        return bad_references(text, numbers, distinct)

    # the line this test was written for (chapter 5, before section 5.5 was inserted), and its fix
    old = ("This costs almost nothing extra. The $h$ heads do not each get $d_\\text{model}$ features: they share "
           "them, ... only the attention weights, one $T \\times S$ matrix per head, grow with $h$\n(section 5.5 "
           "counts them).")
    assert "section 5.5 is 'The same function as" in bad(old)[0]
    assert bad(old.replace("5.5", "5.6")) == []
    assert bad("Section 5.9 says more.")[0].endswith("the book has no section 5.9")
    assert len(bad("Heads learn jobs (sections 5.6 and 5.7).")) == 1  # "jobs" names 5.7; nothing names 5.6
    assert bad("The average of one head (section 5.1).") == []
    assert bad("as the paper does ({cite:p}`vaswani2017attention` (section 5.5); its section 5.5 also)") == []
    assert stem("costs") == stem("cost") and stem("loader") == stem("Loading") and stem("padded") == stem("pad")
    assert stem("queries") == stem("query") and stem("loss") == "loss"
    assert stem("splitting") == stem("splits") and stem("small") != stem("smal")
