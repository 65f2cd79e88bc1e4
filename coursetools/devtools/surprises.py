"""Surprises: answers that pass a visible test of an exercise and still fail its hidden block.

``python -m coursetools.devtools.surprises <assignment> [--mutants] [--only <answer grade_id> ...]``

A student who runs the visible tests and sees them pass has no reason to doubt the answer; a hidden
test that then rejects it takes points the student could not know were at stake. The fairness lint
(:mod:`coursetools.authoring.fairness`) reads the hidden code for such rules; this tool *runs*
answers to find them. For each answer cell of the assignment, in one kernel
(:class:`~coursetools.devtools.session.KernelSession`), it tries candidate answers:

* every file of ``tests/wrong_answers/<id>/`` (one whole answer cell per file, named
  ``<answer grade_id>__<name>.py``, its first line a comment saying what mistake it makes);
* with ``--mutants``, every mutant of :mod:`coursetools.devtools.mutate` (minus the listed
  equivalent ones);
* every file of ``tests/alternative_answers/<id>/``: a *right* answer written another way than the
  model answer (another route, another library call, a loop for a vectorised line). It must earn
  every point: each of its test cells, hidden part included, must pass. One that fails is reported
  as *rejected*, with the failure: a correct answer the tests refuse is the worst surprise of all.

Each candidate replaces the model answer; the test cells that grade it run once each, as grading runs
them: the **visible** part (the cell as released) in the kernel, then, when it passed, the **hidden**
block (:func:`~coursetools.common.hidden.split_hidden_block`) in the checker.
A *surprise* is a test cell whose visible part the candidate passes and whose hidden block fails it,
whatever it did in the exercise's other cells (each part is graded on its own: a part that fails its
visible test does not excuse a hidden failure in another); it is reported with the hidden failure's
message. Then the model answer runs again.

A surprise is accepted only when the hidden block that rejects it allow-lists it with a reason, a
comment line ``# hidden only: <candidate> -- <why this is fair>`` (:func:`~coursetools.common.hidden.hidden_only`;
``<candidate>`` is a wrong answer's file name without ``.py``, or its part after ``__``, or the mutant's label
as this tool prints it). The lint prints these reasons. The tool exits 1 when a surprise is not
allow-listed, a right answer is rejected (a right answer cannot be allow-listed: fix the test), or a file of
``tests/wrong_answers`` passes every visible test (an honest student who wrote it is not warned).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from coursetools.authoring import sources
from coursetools.common.hidden import hidden_only, split_hidden_block
from coursetools.common.layout import REPO_ROOT
from coursetools.devtools.mutate import equivalents, mutants
from coursetools.devtools.session import AnswerCell, KernelSession, Outcome, notebook_plan

CANDIDATE_FOLDERS = ("wrong_answers", "alternative_answers")  # under tests/
RIGHT = "alternative_answers"  # the folder of right answers, which must earn every point


@dataclass(frozen=True)
class Candidate:
    """An answer to try: the answer cell it replaces, its name, its source and where it comes from
    (a folder of :data:`CANDIDATE_FOLDERS`, or ``mutant``)."""

    answer: str
    name: str
    source: str
    origin: str

    def names(self) -> set[str]:
        """What an allow-list line may call it: the file's stem and its part after ``__``, or the mutant's label."""
        return {self.name, self.name.split("__", 1)[-1]} if self.origin != "mutant" else {self.name}


@dataclass(frozen=True)
class Surprise:
    """A candidate that passed the visible part of the test cell ``test`` and failed the full cell."""

    candidate: Candidate
    test: str
    message: str
    reason: str | None = None  # the allow-list's reason, None when it is not allow-listed

    def describe(self) -> str:
        kind = f"allowed: {self.reason}" if self.reason is not None else "NOT ALLOWED"
        return f"{self.candidate.origin}: {self.candidate.name} | {self.test} | {self.message} [{kind}]"


@dataclass(frozen=True)
class Rejection:
    """A right answer (a file of :data:`RIGHT`) that failed the test cell ``test``."""

    candidate: Candidate
    test: str
    message: str

    def describe(self) -> str:
        return f"right answer rejected: {self.candidate.name} | {self.test} | {self.message}"


@dataclass
class Report:
    """What one assignment's run found: how many candidates were tried, the surprises, the right
    answers rejected, the wrong answers (files) that passed every visible test (an honest student who
    wrote one is not warned), the seconds it took."""

    assignment: str
    tried: int = 0
    surprises: list[Surprise] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)
    unwarned: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def unexpected(self) -> list[Surprise]:
        return [s for s in self.surprises if s.reason is None]


def candidate_files(assignment: str, course_root: Path = REPO_ROOT) -> list[Candidate]:
    """The file candidates of ``assignment``, from every folder of :data:`CANDIDATE_FOLDERS`."""
    found = []
    for folder in CANDIDATE_FOLDERS:
        for path in sorted((course_root / "tests" / folder / assignment).glob("*.py")):
            found.append(Candidate(path.stem.split("__")[0], path.stem, path.read_text(encoding="utf-8"), folder))
    return found


def mutant_candidates(plan: list[AnswerCell], assignment: str) -> list[Candidate]:
    """The mutants of every answer cell of ``plan`` that are not listed as equivalent."""
    skip = equivalents(assignment)
    return [Candidate(answer.grade_id, mutant.label, mutant.source, "mutant") for answer in plan
            for mutant in mutants(answer.source) if (answer.grade_id, mutant.label) not in skip]


def allowed(candidate: Candidate, hidden: str) -> str | None:
    """The reason ``hidden`` (a hidden block) gives for rejecting ``candidate`` alone, None when it gives none."""
    return next((reason for name, reason in hidden_only(hidden) if name in candidate.names()), None)


@contextlib.contextmanager
def standing_in(kernel: KernelSession, candidate: Candidate, answer: AnswerCell) -> Iterator[Outcome]:
    """Run ``candidate`` in place of ``answer``'s model answer and yield how its cell ran; afterwards
    the model answer runs again (raises when it then fails: the kernel is no longer the notebook's)."""
    try:
        yield kernel.run(candidate.source)
    finally:
        restored = kernel.run(answer.source)
        if not restored.passed:
            raise RuntimeError(f"the model answer {answer.grade_id} fails after {candidate.name}: {restored.reason}")


def try_right_answer(kernel: KernelSession, candidate: Candidate, answer: AnswerCell) -> list[Rejection]:
    """Each full test cell of ``answer`` that the right answer ``candidate`` fails (none when it earns every point)."""
    with standing_in(kernel, candidate, answer) as ran:
        if not ran.passed:
            return [Rejection(candidate, answer.grade_id, f"the answer cell itself failed: {ran.reason}")]
        return [Rejection(candidate, test_id, why) for test_id, why in kernel.failures(answer)]


def try_candidate(kernel: KernelSession, candidate: Candidate, answer: AnswerCell,
                  each_part: bool = True) -> tuple[list[Surprise], bool]:
    """The surprises of ``candidate`` in place of ``answer``'s model answer: one per test cell whose visible
    part it passes and whose hidden block fails it, whatever it did in the other cells (a part is graded on
    its own); with ``each_part`` False, only when it passed every visible part (the finder before issue 50).
    Each test cell runs once, as grading runs it (its hidden block only when its visible part passed); with
    ``each_part`` False, the visible parts run first and nothing more runs once one fails. Also returns
    whether ``candidate`` (its cell included) passed every visible part."""
    with standing_in(kernel, candidate, answer) as ran:
        if not ran.passed:
            return [], False
        if not each_part and not all(kernel.run(split_hidden_block(test)[0], locked=True).passed
                                     for _, test in answer.tests):
            return [], False  # a visible part failed: no hidden block runs (stops at the first failure)
        outcomes = {test_id: kernel.run(test, locked=True) for test_id, test in answer.tests}
        tests = dict(answer.tests)
        surprises = [Surprise(candidate, test_id, o.reason, allowed(candidate, split_hidden_block(tests[test_id])[1]))
                     for test_id, o in outcomes.items() if o.hidden]
        return surprises, all(o.passed or o.hidden for o in outcomes.values())


def find_surprises(assignment: str, with_mutants: bool = False, only: list[str] | None = None,
                   timeout: float = 20.0, course_root: Path = REPO_ROOT, term_seed: int = 0,
                   each_part: bool = True, mutants_each_part: bool | None = None) -> Report:
    """Every surprise among ``assignment``'s candidates (files, and mutants when ``with_mutants``),
    for the answer cells in ``only`` (default: all), each part on its own unless ``each_part`` is False
    (:func:`try_candidate`; ``mutants_each_part``, when given, decides it for the mutants: the per-part search
    of hundreds of mutants takes 1.5-2.4 times as long); raises when a file names no answer cell or a model
    answer fails one of its tests."""
    start = time.perf_counter()
    plan = notebook_plan(sources.read_text_source(sources.text_source(course_root, assignment)))
    candidates = candidate_files(assignment, course_root)
    unknown = sorted({c.name for c in candidates} - {c.name for c in candidates
                                                     if c.answer in {a.grade_id for a in plan}})
    if unknown:
        raise ValueError(f"{assignment}: candidate files that name no answer cell: {unknown}")
    if with_mutants:
        candidates += mutant_candidates([a for a in plan if not only or a.grade_id in only], assignment)
    report = Report(assignment)
    with KernelSession(course_root, timeout=timeout, term_seed=term_seed) as kernel:
        for answer in plan:
            kernel.reach(answer)
            failing = kernel.failing_tests(answer)
            if failing:
                raise RuntimeError(f"{assignment}: the model answer {answer.grade_id} fails {failing}")
            if only and answer.grade_id not in only or not answer.tests:
                continue
            for candidate in (c for c in candidates if c.answer == answer.grade_id):
                report.tried += 1
                if candidate.origin == RIGHT:
                    report.rejected += try_right_answer(kernel, candidate, answer)
                else:
                    per_part = each_part if candidate.origin != "mutant" or mutants_each_part is None \
                        else mutants_each_part
                    surprises, passed_every_visible = try_candidate(kernel, candidate, answer, per_part)
                    report.surprises += surprises
                    if passed_every_visible and candidate.origin != "mutant":
                        report.unwarned.append(candidate.name)
    report.seconds = time.perf_counter() - start
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="+", help="assignment ids")
    parser.add_argument("--mutants", action="store_true", help="try the mutants of coursetools.devtools.mutate too")
    parser.add_argument("--only", nargs="*", help="answer cells (grade_ids) to try; default: all")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per cell before a try fails")
    parser.add_argument("--all-visible", action="store_true",
                        help="report a part only when the answer passed every visible test of its exercise")
    args = parser.parse_args(argv)
    status = 0
    for assignment in args.assignments:
        report = find_surprises(assignment, args.mutants, args.only, args.timeout, each_part=not args.all_visible)
        for found in [*report.rejected, *report.surprises]:
            print(f"{assignment} {found.describe()}")
        for name in report.unwarned:
            print(f"{assignment} wrong answer that passes every visible test: {name}")
        print(f"{assignment}: {report.tried} candidates, {len(report.rejected)} right answers rejected, "
              f"{len(report.surprises)} surprises, {len(report.unexpected())} not allow-listed "
              f"({report.seconds:.0f} s)")
        status |= bool(report.unexpected() or report.rejected or report.unwarned)
    return status


if __name__ == "__main__":
    sys.exit(main())
