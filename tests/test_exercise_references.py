"""Every reference from a chapter page to an exercise names one that exists in that chapter's notebook.

A page refers to its exercises by number ("which is exercise 3", "exercises 2 and 4"), by title
("the exercises' bug hunt", an exercise's title in quotes or italics) and by link
(``{doc}`../notebooks/<id>/<id>```). Each is checked against the exercises of the chapter's
released notebook, ``notebooks/<id>/<id>.ipynb`` (what the link opens), whose headings
(``## Exercise N: title (k points)``) must be those of its source, ``solutions/<id>/<id>.md``.

A number must exist, and the paragraph that cites it must be about that exercise: it shares with
the exercise's heading and instructions at least one word that is not common in the book (found on
fewer than half of the chapter pages). "A masked autoencoder ... puts [patches] back into an
image, which is exercise 3" fails when exercise 3 is a ring-buffer cache; "that is d_ff = 11008,
the width of exercise 5" passes when exercise 5's text works with Llama's width. A number that a
page puts next to another chapter ("chapter 8's exercise 2", or a link to chapter 8's notebook in
the same sentence) is looked up in that chapter's notebook. Reads text only: fast.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass

import pytest

from coursetools.common.layout import REPO_ROOT

from book_helpers import toc_files

#: ``## Exercise 3: a sliding-window cache as a ring buffer (5 points)`` and ``### Exercise 3, continued: ...``
HEADING = re.compile(r"^#{2,3} Exercise (\d+)\b[^:]*:\s*(.+?)\s*(?:\([^()]*points?[^()]*\))?\s*$", re.MULTILINE)
#: "exercise 3", "Exercises 2 and 4", "exercises 1, 2 or 5", "exercises 2-4"
NUMBERED = re.compile(r"\b[Ee]xercises?\s+(\d+(?:\s*(?:,|and|or|to|-|\u2013)\s*\d+)*)\b")
#: a title: "the exercises' bug hunt", exercise "...", exercise *...*
TITLED = re.compile(r"""\b[Ee]xercises?(?:'s?)?\s+(?:"([^"]+)"|\u201c([^\u201d]+)\u201d|\*([^*]+)\*)"""
                    r"""|\bthe exercise(?:s'|'s)\s+([a-z][\w-]*(?:\s+[a-z][\w-]*)?)""")
#: what ties a number to another chapter within the sentence before it
OTHER_CHAPTER = re.compile(r"chapter (\d+)'s\s*$|notebooks/(ch\d+_\w+)/\2\b[^.]*$", re.IGNORECASE)
DOC_LINK = re.compile(r"\{doc\}`(?:[^`<]*<)?(?:\.\./)?notebooks/(\w+)/(\w+)>?`")


WORD = re.compile(r"[A-Za-z][A-Za-z-]{3,}")


def words(text: str) -> set[str]:
    """The words of four letters or more in ``text``, lower case."""
    return {w.lower() for w in WORD.findall(text)}


@dataclass(frozen=True)
class Exercises:
    """The exercises of one notebook: number -> title (lower case), and number -> the words of its text."""

    titles: dict[int, str]
    texts: dict[int, frozenset[str]]

    @property
    def numbers(self) -> set[int]:
        return set(self.titles)

    def has_title(self, phrase: str) -> bool:
        return any(phrase.lower() in title for title in self.titles.values())


def exercises_in(text: str) -> Exercises:
    """The exercises of a notebook's text (the source's Markdown, or a release's cells joined): each
    heading's title, and the words of the heading and of everything up to the next exercise."""
    titles, texts = {}, {}
    headings = list(HEADING.finditer(text))
    for heading, following in zip(headings, [*headings[1:], None]):
        number = int(heading.group(1))
        titles.setdefault(number, heading.group(2).lower())
        section = text[heading.start():following.start() if following else len(text)]
        texts[number] = texts.get(number, frozenset()) | words(section)
    return Exercises(titles, texts)


def release_text(assignment: str) -> str:
    notebook = json.loads((REPO_ROOT / "notebooks" / assignment / f"{assignment}.ipynb").read_text(encoding="utf-8"))
    return "\n".join("".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "markdown")


def chapters() -> dict[str, str]:
    """Each chapter page and section under ``book/`` -> the assignment id of its chapter's notebook."""
    chapter_of = {}
    for page in toc_files(numbered_only=True):
        if page.startswith("notebooks/"):
            for waiting in [p for p, a in chapter_of.items() if a is None]:
                chapter_of[waiting] = page.split("/")[1]
        elif page.startswith("book/"):
            chapter_of[page] = None
    return {page: assignment for page, assignment in chapter_of.items() if assignment is not None}


def common_words() -> set[str]:
    """Words found on at least half of the chapter pages: they say nothing about which exercise is meant."""
    pages = [words((REPO_ROOT / f"{page}.md").read_text(encoding="utf-8")) for page in chapters()]
    counts = Counter(w for page in pages for w in page)
    return {w for w, n in counts.items() if 2 * n >= len(pages)} | {"exercise", "exercises"}


def assignment_of_chapter(number: int) -> str | None:
    matches = sorted(p.name for p in (REPO_ROOT / "notebooks").glob(f"ch{number:02d}_*") if p.is_dir())
    return matches[0] if matches else None


def paragraph_around(text: str, start: int, end: int) -> str:
    before = text.rfind("\n\n", 0, start)
    after = text.find("\n\n", end)
    return text[before + 1 if before >= 0 else 0:after if after >= 0 else len(text)]


def bad_references(text: str, own: str, notebooks: dict[str, Exercises], common: set[str]) -> list[str]:
    """Each reference in ``text`` (a page of assignment ``own``'s chapter) to an exercise that does
    not exist, or that the paragraph citing it is not about."""
    bad = []
    for match in NUMBERED.finditer(text):
        sentence = text[max(text.rfind(".", 0, match.start()), text.rfind("\n\n", 0, match.start()), 0):match.start()]
        other = OTHER_CHAPTER.search(sentence)
        target = own
        if other:
            target = other.group(2) or assignment_of_chapter(int(other.group(1))) or f"chapter {other.group(1)}"
        numbers = {int(n) for n in re.findall(r"\d+", match.group(1))}
        if re.search(r"-|\u2013| to ", match.group(1)):
            numbers = set(range(min(numbers), max(numbers) + 1))
        known = notebooks.get(target)
        missing = sorted(numbers - known.numbers) if known else sorted(numbers)
        if missing:
            bad.append(f"{match.group(0)!r} -> {target} has no exercise {missing}"
                       f" (it has {sorted(known.numbers) if known else 'no notebook'})")
            continue
        context = words(paragraph_around(text, match.start(), match.end())) - common
        for number in sorted(numbers):
            if not context & known.texts[number]:
                bad.append(f"{match.group(0)!r} -> {target}'s exercise {number} ({known.titles[number]!r}) "
                           f"shares no distinctive word with the paragraph that cites it")
    for match in TITLED.finditer(text):
        phrase = next(group for group in match.groups() if group).split()
        # "the exercises' bug hunt is graded": the title is the noun phrase, at most two words
        if match.group(4) and len(phrase) == 2 and phrase[1] in {"is", "are", "in", "of", "and", "you"}:
            phrase = phrase[:1]
        if not notebooks[own].has_title(" ".join(phrase)):
            bad.append(f"{match.group(0)!r} -> no exercise of {own} has {' '.join(phrase)!r} in its title")
    for folder, name in DOC_LINK.findall(text):
        if folder != name or folder not in notebooks:
            bad.append(f"link to notebooks/{folder}/{name}: no such released notebook")
    return bad


@pytest.fixture(scope="module")
def notebooks() -> dict[str, Exercises]:
    return {p.name: exercises_in(release_text(p.name)) for p in (REPO_ROOT / "notebooks").iterdir()
            if (p / f"{p.name}.ipynb").is_file()}


def test_release_and_source_name_the_same_exercises(notebooks):
    for assignment, release in notebooks.items():
        source = exercises_in((REPO_ROOT / "solutions" / assignment / f"{assignment}.md").read_text(encoding="utf-8"))
        assert release.numbers, f"{assignment}: no '## Exercise N: title' heading in the release"
        assert source.titles == release.titles, f"{assignment}: the source and the release list different exercises"


@pytest.mark.parametrize("page", sorted(chapters()))
def test_every_exercise_a_page_names_exists(page, notebooks):
    text = (REPO_ROOT / f"{page}.md").read_text(encoding="utf-8")
    bad = bad_references(text, chapters()[page], notebooks, common_words())
    assert not bad, f"{page}.md refers to exercises that its chapter's notebook does not have: {bad}"


def test_the_check_catches_a_wrong_number_a_wrong_topic_a_wrong_title_and_a_wrong_link():
    ring = "## Exercise 3: a sliding-window cache as a ring buffer (5 points)\nKeep the last w keys in a ring.\n"
    ex = {"ch10_beyond": exercises_in("## Exercise 1: how long a context fits (3 points)\nCount the cache.\n"
                                      "## Exercise 2: find the bugs in packed attention (4 points)\n" + ring
                                      + "### Exercise 3, continued: predict (3 points, graded by hand)\n"
                                      "## Exercise 4: what packing saves (3 points, graded by hand)\n"),
          "ch08_decoder": exercises_in("## Exercise 1: min-p sampling (3 points)\n## Exercise 2: bug hunt (4 points)\n"
                                       "## Exercise 3: training without the causal mask (5 points)\n")}
    common = {"which", "into", "them", "runs", "exercise", "exercises", "back"}
    assert ex["ch10_beyond"].numbers == {1, 2, 3, 4}

    def bad(text: str) -> list[str]:
        return bad_references(text, "ch10_beyond", ex, common)

    assert bad("A decoder keeps the last keys in a ring buffer, which is exercise 3.") == []
    assert "shares no distinctive word" in bad("It puts patches back into an image, which is exercise 3.")[0]
    assert bad("Exercises 5 and 6 count the cache.")[0].endswith("[5, 6] (it has [1, 2, 3, 4])")
    assert bad("Exercises 2-5 count the cache.")
    assert bad("In chapter 8's exercise 3 you train without the causal mask.") == []
    assert bad("In chapter 8's exercise 4 you train without the causal mask.")
    assert bad("the exercises' ring buffer is graded by them") == []
    assert bad("the exercises' bug hunt is graded by them")
    assert bad('exercise "min-p sampling"')
    assert bad("In the exercises you write it; the exercise below asks you to measure it.") == []
    assert bad("{doc}`the exercises <../notebooks/ch99_none/ch99_none>`")
