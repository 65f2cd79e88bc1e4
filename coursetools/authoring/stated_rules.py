"""A rule stated is a rule enforced: the lint's reading of the rules an exercise's instructions state.

A *rule sentence* is a sentence of an exercise's instructions that restricts what an answer may use
or make (:data:`RULE_WORDS`: "you may not use", "do not fit", "without autograd", "no tensor of",
"without forming", "the tests refuse"...). Each must be enforced by a check in a test cell of the
same exercise (its visible part or its hidden block), found in one of two ways:

* a rule call of :mod:`coursetools.checks` (``refuse``, ``forbid``, ``no_autograd``, ``size_limit``)
  whose target the sentence names: a name in backticks (`` `torch.multinomial` `` for
  ``refuse(torch, "multinomial", ...)``, `` `transformer_lib.positional` `` for a forbidden function of
  that module, `` `torch.func` `` for ``no_autograd()``, whose targets are
  :data:`~coursetools.checks.names.NO_AUTOGRAD`), or the word "autograd" for ``no_autograd()`` or a
  refused ``torch.autograd`` function;
* a comment ``# enforces: <words>`` on the check, whose words the sentence contains (a size probe,
  an input where a fit fails, a comparison that makes a forbidden route fail).

:func:`stated_rules` lists every rule sentence with the check that enforces it (``None`` for none);
:func:`unenforced_rules` is the lint's problem for each sentence no check enforces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nbformat.notebooknode import NotebookNode

from coursetools.authoring.fairness import Exercise, exercises, guarded_targets
from coursetools.checks.names import NO_AUTOGRAD

RULE_WORDS = re.compile(
    r"\b(?:you may not|may not use|must not (?:use|call)|do not (?:use|call|fit)|not with autograd|without autograd"
    r"|no tensor of|without forming|(?:are|is) (?:forbidden|refused)|tests? (?:refuse|forbid)|not allowed)\b",
    re.IGNORECASE)
MARKER = re.compile(r"#\s*enforces:\s*(.+)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*(])|\n\s*\n|\n\s*(?:[*-]|\d+\.)\s+")
_BACKTICKED = re.compile(r"`([A-Za-z_][\w.]*)(?:\(\))?`")
# the targets no_autograd() stands for: each route of the one rule, and the modules they are in
_AUTOGRAD_TARGETS = frozenset({f"{owner}.{name}" for owner, names in NO_AUTOGRAD for name in names})


@dataclass(frozen=True)
class StatedRule:
    """A rule sentence of an exercise and the check that enforces it (``None``: no check does)."""

    exercise: str
    sentence: str
    enforced_by: str | None


def rule_sentences(instructions: list[str]) -> list[str]:
    """The sentences of ``instructions`` (markdown) that state a rule, whitespace collapsed."""
    text = "\n\n".join(instructions)
    text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)  # code in the instructions states no rule
    sentences = (" ".join(part.split()) for part in _SENTENCE_END.split(text))
    return [sentence for sentence in sentences if RULE_WORDS.search(sentence)]


def _checks(exercise: Exercise, context: list[str]) -> list[tuple[str, set[str], list[str]]]:
    """Each test cell of ``exercise`` (visible part, then hidden block) as (where, its rule targets, its
    ``# enforces:`` phrases)."""
    cells = [(f"the visible test {test}", visible) for visible, (test, _) in zip(exercise.visible, exercise.hidden)]
    cells += [(f"the hidden block of {test}", hidden) for test, hidden in exercise.hidden]
    found = []
    for where, code in cells:
        targets = guarded_targets(code, context)
        if any(target.startswith("no_autograd") for target in targets):
            targets |= _AUTOGRAD_TARGETS
        found.append((where, targets, [match.group(1).strip() for match in MARKER.finditer(code)]))
    return found


def _names_target(name: str, target: str) -> bool:
    """Whether the backticked ``name`` (``torch.func``, ``F.cross_entropy``, ``multinomial``) names ``target``
    (a canonical dotted name): its last part is a part of the target, and a dotted name is in it."""
    parts = target.split(".")
    last = name.split(".")[-1]
    return last in parts and (name.count(".") == 0 or ".".join(name.split(".")[-2:]) in target
                              or name.split(".")[0] in ("F", "nn"))


def enforcing_check(sentence: str, checks: list[tuple[str, set[str], list[str]]]) -> str | None:
    """The first check that enforces ``sentence``, described, or ``None``."""
    normal = " ".join(sentence.lower().split())
    for where, _, phrases in checks:
        for phrase in phrases:
            if " ".join(phrase.lower().split()) in normal:
                return f"{where} (# enforces: {phrase})"
    names = [name for name in _BACKTICKED.findall(sentence)]
    for where, targets, _ in checks:
        for name in names:
            hit = next((target for target in sorted(targets) if _names_target(name, target)), None)
            if hit is not None:
                return f"{where} (refuses {hit})"
        if "autograd" in normal and any(".autograd." in target for target in targets):
            return f"{where} (refuses autograd)"
    return None


def stated_rules(nb: NotebookNode) -> list[StatedRule]:
    """Every rule sentence of every exercise of ``nb``, with the check that enforces it."""
    context = [cell.source for cell in nb.cells if cell.cell_type == "code"]
    found = []
    for exercise in exercises(nb):
        checks = _checks(exercise, context)
        found += [StatedRule(exercise.title, sentence, enforcing_check(sentence, checks))
                  for sentence in rule_sentences(exercise.instructions)]
    return found


def unenforced_rules(nb: NotebookNode) -> list[str]:
    """A problem for each rule sentence of ``nb`` that no check of its exercise enforces."""
    return [f"exercise '{rule.exercise}' states a rule that no visible or hidden check enforces: "
            f"\"{rule.sentence}\" (refuse or forbid what it names, or mark the check that enforces it "
            "'# enforces: <words of the sentence>'; a rule that cannot be checked is not stated as one)"
            for rule in stated_rules(nb) if rule.enforced_by is None]
