"""The assignments' text sources, checked without a kernel (all of them in a few seconds).

Every source passes the lint (``coursetools/authoring/lint.py``), and the lint catches each mistake it
names; the generated notebook follows its source and never overwrites a hand edit; the shared
"How grading works" reaches every release with the time limit of ``nbgrader_config.py``; the
numbers of every model answer are computed by the ```` ```python ```` blocks in it, which run here.
"""

from __future__ import annotations

import copy
import os
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from traitlets.config.loader import PyFileConfigLoader

from coursetools.authoring import sources
from coursetools.authoring.fairness import check_fairness
from coursetools.authoring.grading_rules import INCLUDE_RULES, IncludeGradingRules, grading_rules
from coursetools.authoring.lint import check_names, lint, lint_notebook, rounded_tolerance_messages, shadowed_answers
from coursetools.common.layout import REPO_ROOT

ASSIGNMENTS = sources.assignments(REPO_ROOT)


def configured_cell_timeout() -> int:
    config = PyFileConfigLoader("nbgrader_config.py", path=str(REPO_ROOT)).load_config()
    return config.ExecutePreprocessor.timeout


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_source_passes_the_lint(assignment: str):
    assert lint(assignment) == []


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_source_is_written_as_jupyter_would_save_it(assignment: str):
    text = sources.text_source(REPO_ROOT, assignment).read_text(encoding="utf-8")
    assert sources.canonical_text(text) == text, "run `make release` (it writes the source in Jupytext's order)"


@pytest.fixture(scope="module")
def clean() -> nbformat.NotebookNode:
    return sources.read_text_source(sources.text_source(REPO_ROOT, "ch01_tokens"))


def _cell(nb, grade_id: str):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _broken(nb, grade_id: str, change) -> list[str]:
    nb = copy.deepcopy(nb)
    change(_cell(nb, grade_id))
    return lint_notebook(nb)


def _exercises(nb) -> list[tuple[str, str, int]]:
    """(answer grade_id, the id of the graded test cell after it, its points) of each code exercise."""
    found, answer = [], None
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("solution"):
            answer = meta["grade_id"]
        elif cell.cell_type == "code" and meta.get("grade") and answer:
            found.append((answer, meta["grade_id"], meta["points"]))
            answer = None
    return found


def test_lint_catches_each_mistake(clean):
    assert lint_notebook(clean) == []
    (answer, test, points), (other_answer, _, _) = _exercises(clean)[:2]
    duplicate = _broken(clean, other_answer, lambda c: c.metadata.nbgrader.update(grade_id=answer))
    assert any(f"'{answer}' is used by 2 cells" in p for p in duplicate), duplicate
    no_hidden = _broken(clean, test, lambda c: setattr(c, "source", c.source.split("### BEGIN HIDDEN TESTS")[0]))
    assert any("exactly one hidden block" in p for p in no_hidden), no_hidden
    no_notes = _broken(clean, test, lambda c: setattr(c, "source", c.source.replace("# Instructor notes:", "# notes:")))
    assert any("must start with '# Instructor notes:" in p for p in no_notes), no_notes
    no_end = _broken(clean, answer, lambda c: setattr(c, "source", c.source.replace("### END SOLUTION", "")))
    assert any("BEGIN SOLUTION" in p for p in no_end), no_end
    more = _broken(clean, test, lambda c: c.metadata.nbgrader.update(points=points + 2))
    assert any("points do not add up" in p for p in more), more
    assert any(f"announces {points} points, the graded cells up to the next exercise carry {points + 2:g}" in p
               for p in more), more
    unlocked = _broken(clean, test, lambda c: c.metadata.nbgrader.update(locked=False))
    assert any("must be locked" in p for p in unlocked), unlocked
    no_rules = _broken(clean, "grading", lambda c: setattr(c, "source", c.source.replace(INCLUDE_RULES, "")))
    assert any("shared rules" in p for p in no_rules), no_rules


def test_an_exercise_may_have_one_graded_cell_per_part(clean):
    """Partial credit: a test cell split in two graded cells whose points add up to the heading's."""
    _, test, points = _exercises(clean)[0]
    nb = copy.deepcopy(clean)
    index = next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == test)
    part = copy.deepcopy(nb.cells[index])
    part.metadata.nbgrader.update(grade_id=f"{test}_part", points=1)
    nb.cells[index].metadata.nbgrader.update(points=points - 1)
    nb.cells.insert(index + 1, part)
    assert lint_notebook(nb) == []
    part.metadata.nbgrader.update(points=2)
    assert any(f"the graded cells up to the next exercise carry {points - 1:g} + 2" in p for p in lint_notebook(nb))


def _with_text(nb, text: str) -> nbformat.NotebookNode:
    nb = copy.deepcopy(nb)
    nb.cells.append(nbformat.v4.new_markdown_cell(text))
    return nb


def test_lint_checks_the_names_the_text_gives(clean):
    page = REPO_ROOT / "book" / "ch01_tokens.md"
    assert check_names(clean, page) == []
    assert check_names(_with_text(clean, "see `transformer_lib.tokens.pad_batch`"), page) == []
    missing = check_names(_with_text(clean, "see `transformer_lib.tokens.no_such_function`"), page)
    assert any("'transformer_lib.tokens.no_such_function' does not exist" in p for p in missing), missing
    renamed = check_names(_with_text(clean, "the library's `BucketSampler` sorts"), page)
    assert any("`BucketSampler`" in p for p in renamed), renamed
    assert check_names(_with_text(clean, "neither holds it <!-- absent: pad_left_to_the_moon -->"), page) == []
    held = check_names(_with_text(clean, "<!-- absent: pad_batch, lengths_to_mask -->"), page)
    assert sum("declared absent, but transformer_lib defines it" in p for p in held) == 2, held


def test_lint_finds_numbers_rounded_in_a_tolerance_message():
    """The message "should be ... = 1.468607, got 1.4686069051873225" rounded the expected value so
    that the two looked equal."""
    def problems(line: str) -> list[str]:
        return rounded_tolerance_messages(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(line)]))

    assert problems('assert abs(got - want) < 1e-9, f"should be {want:.6f}, got {got}"')
    assert problems('assert (got - want).abs().max() <= tol, f"off by {float(got - want):.3g}"')
    assert problems('assert abs(share - 0.25) < 0.02, f"agree {share:.2f} of the time"')
    assert not problems('assert abs(got - want) < 1e-9, f"should be {want!r} (within 1e-9), got {got!r}"')
    assert not problems('assert abs(loss - 2.08) < 0.1, f"the loss {loss:.3f} should be near 2.08"')
    assert not problems('assert 0.16 < spread < 0.26, f"the spread is {spread:.3f}"')


def test_lint_finds_a_locked_cell_binding_an_answer_name():
    """ch06's visible test imported ``transformer_lib.rope as rope``; the checker binds the locked cells'
    imports itself, so its hidden tests called the module instead of the student's ``rope``."""
    def cell(source: str, **meta) -> nbformat.NotebookNode:
        return nbformat.v4.new_code_cell(source, metadata={"nbgrader": {"grade_id": meta.pop("grade_id"), **meta}})

    def problems(locked: str) -> list[str]:
        nb = nbformat.v4.new_notebook(cells=[
            cell("def rope(x):\n    return x", grade_id="rope", solution=True, locked=False),
            cell(locked, grade_id="test_rope", grade=True, locked=True, solution=False, points=1)])
        return shadowed_answers(nb)

    assert problems("import transformer_lib.rope as rope\n") == [
        "test_rope: binds 'rope', which answer cell rope defines: the checker would give hidden tests the locked one "
        "(rename it)"]
    assert problems("def rope(x):\n    return x\n")
    assert not problems("import transformer_lib.rope as rope_lib\n")
    assert not problems("rope_out = rope(1)\n### BEGIN HIDDEN TESTS\nimport transformer_lib.rope as rope\n"
                        "### END HIDDEN TESTS\n")


@pytest.fixture()
def course(tmp_path: Path) -> Path:
    folder = tmp_path / "solutions" / "ch01_tokens"
    folder.mkdir(parents=True)
    shutil.copy(sources.text_source(REPO_ROOT, "ch01_tokens"), folder)
    return tmp_path


def test_generated_notebook_follows_its_source(course: Path):
    target = sources.build_notebook(course, "ch01_tokens")
    nb = nbformat.read(target, as_version=4)
    assert [c.id for c in nb.cells][:2] == ["cell-000", "cell-001"], "stable cell ids"
    assert nb.metadata["kernelspec"]["name"] == "python3"
    stamp = target.stat().st_mtime_ns
    assert sources.build_notebook(course, "ch01_tokens").stat().st_mtime_ns == stamp, "a current notebook is kept"
    text = sources.text_source(course, "ch01_tokens")
    text.write_text(text.read_text().replace("## Exercise 1:", "## Exercise one:"))
    os.utime(text, ns=(stamp + 10**9, stamp + 10**9))
    rebuilt = nbformat.read(sources.build_notebook(course, "ch01_tokens"), as_version=4)
    assert any("## Exercise one:" in c.source for c in rebuilt.cells), "an edit of the .md reaches the notebook"


def test_a_hand_edit_of_the_notebook_is_never_overwritten(course: Path):
    target = sources.build_notebook(course, "ch01_tokens")
    nb = nbformat.read(target, as_version=4)
    nb.cells[0].source += "\nAn edit made in Jupyter without Jupytext."
    nbformat.write(nb, target)
    later = sources.text_source(course, "ch01_tokens").stat().st_mtime_ns + 10**9
    os.utime(target, ns=(later, later))
    with pytest.raises(sources.EditedNotebookError, match="jupytext --sync"):
        sources.build_notebook(course, "ch01_tokens")
    assert "without Jupytext" in target.read_text(), "the edit is still there"


def test_include_puts_the_shared_rules_with_the_configured_time_limit(clean):
    timeout = configured_cell_timeout()
    nb, _ = IncludeGradingRules(cell_timeout=timeout).preprocess(copy.deepcopy(clean), {})
    grading = _cell(nb, "grading").source
    assert INCLUDE_RULES not in grading
    assert grading_rules(timeout) in grading
    assert f"within {timeout} seconds" in grading


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_release_has_the_shared_rules(assignment: str):
    release = nbformat.read(REPO_ROOT / "notebooks" / assignment / f"{assignment}.ipynb", as_version=4)
    grading = _cell(release, "grading").source
    assert grading_rules(configured_cell_timeout()) in grading, "run `make release`"


def test_releases_hold_only_notebooks():
    stray = [p for p in (REPO_ROOT / "notebooks").rglob("*") if p.is_file() and p.suffix != ".ipynb"]
    assert not stray, f"only released notebooks belong in notebooks/ (the .md sources hold solutions): {stray}"


def model_answer_checks(assignment: str) -> list[tuple[str, str]]:
    """(grade_id, code) of every ```python block in the assignment's hand-graded answers."""
    nb = sources.read_text_source(sources.text_source(REPO_ROOT, assignment))
    return [(c.metadata.nbgrader.grade_id, block) for c in nb.cells
            if c.cell_type == "markdown" and c.metadata.get("nbgrader", {}).get("solution")
            for block in re.findall(r"```python\n(.*?)```", c.source, flags=re.DOTALL)]


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_model_answer_numbers_are_computed(assignment: str):
    """A model answer's numbers come with the code that computes them and asserts they are the
    ones the answer states (the block is instructor-only: the release replaces the answer)."""
    for grade_id, code in model_answer_checks(assignment):
        try:
            exec(compile(code, f"<{assignment}:{grade_id}>", "exec"), {})
        except AssertionError as error:
            pytest.fail(f"{assignment}, model answer {grade_id!r}: {error}")


def _hidden_changed(nb, grade_id: str, change) -> list[str]:
    """The fairness problems of ``nb`` once the hidden block of ``grade_id``'s cell is changed by ``change``."""
    def edit(cell):
        head, rest = cell.source.split("### BEGIN HIDDEN TESTS\n")
        cell.source = head + "### BEGIN HIDDEN TESTS\n" + change(rest)
    nb = copy.deepcopy(nb)
    edit(_cell(nb, grade_id))
    return check_fairness(nb)


def test_the_fairness_rule_names_the_exercise_and_the_kind(clean):
    assert check_fairness(clean) == []
    exercise = "exercise 'Exercise 2: the embedding's backward pass, sparse (4 points)', test_embedding_backward"
    undeclared = _hidden_changed(clean, "test_embedding_backward", lambda hidden: hidden.split("\n", 1)[1])
    assert undeclared == [f"{exercise}: the hidden block declares no kinds: add a line '# checks: value; property "
                          "<detail>; edge <detail>; bound <detail>' naming what it checks"], undeclared
    unseen = _hidden_changed(clean, "test_embedding_backward",
                             lambda hidden: hidden.replace("# checks: value", "# checks: value; edge n_vocab = 1", 1))
    assert unseen == [f"{exercise}: the hidden block checks edge 'n_vocab = 1', which neither a visible test of the "
                      "exercise shows nor its instructions name (write it in a visible check's code or message, or in "
                      "the instructions)"], unseen
    unknown = _hidden_changed(clean, "test_embedding_backward",
                              lambda hidden: hidden.replace("# checks: value", "# checks: speed", 1))
    assert any("unknown kind 'speed'" in p and exercise in p for p in unknown), unknown
    refused = _hidden_changed(clean, "test_embedding_backward", lambda hidden: hidden.replace(
        "verify_untampered()\n", "verify_untampered()\nwith refuse(torch, 'bincount', 'no'):\n    pass\n", 1))
    assert refused == [f"{exercise}: the hidden block refuses torch.bincount, which no visible test of the exercise "
                       "refuses (refuse or forbid it there too, with the same target)"], refused
    raised = _hidden_changed(clean, "test_embedding_backward", lambda hidden: hidden.replace(
        "verify_untampered()\n", "verify_untampered()\nwith expect_raises(KeyError, 'no'):\n    raise KeyError\n", 1))
    assert raised == [f"{exercise}: the hidden block expects KeyError (raises), which no visible expect_raises of the "
                      "exercise expects",
                      f"{exercise}: the hidden block expects KeyError (raises), which the exercise's instructions do "
                      "not name"], raised


def test_the_fairness_rule_compares_what_is_refused_not_how_it_is_written():
    from coursetools.authoring.fairness import guarded_targets

    hidden = ("import torch.nn as _nn\n_forbidden = (_nn.RNN, transformer_lib.attention.causal_mask)\n"
              "with forbid(*_forbidden):\n    pass")
    visible = "import transformer_lib\nwith forbid(torch.nn.RNN, transformer_lib.causal_mask):\n    pass"
    assert guarded_targets(hidden, []) == guarded_targets(visible, []) == {
        "torch.nn.modules.rnn.RNN", "transformer_lib.attention.causal_mask"}
    assert guarded_targets("with refuse(torch.Tensor, ('backward',), 'm'):\n    pass", []) == {"torch.Tensor.backward"}


_OWN_NUMBERS = re.compile(r"\byour (?:own )?(?:table|run|numbers?|measurements?|sweep|experiment|results?|output)\b"
                          r"|what did you measure", re.IGNORECASE)


def _own_numbers_questions(nb) -> list[str]:
    """The hand-graded answers of ``nb`` that grade understanding of the student's own numbers: the
    answer cell holds the rubric (what a right answer contains), the question since the exercise's
    heading asks about the student's own numbers, and an ungraded code cell before it runs the
    student's code (a function or class an answer cell defines) to produce them."""
    from coursetools.authoring.fairness import _EXERCISE
    from coursetools.authoring.lint import _code_names
    from coursetools.common.cells import nbgrader_meta

    found, question, students, producing = [], [], set(), False
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if cell.cell_type == "code" and meta.get("solution"):
            students |= _code_names(cell.source, defined_only=True)
        elif cell.cell_type == "code" and not meta.get("grade"):
            producing |= bool(students & _code_names(cell.source))
        elif cell.cell_type == "markdown" and meta.get("grade") and meta.get("solution"):
            if "rubric" in cell.source.lower() and _OWN_NUMBERS.search("\n".join(question)) and producing:
                found.append(meta["grade_id"])
        elif cell.cell_type == "markdown":
            question = [cell.source] if _EXERCISE.search(cell.source) or "graded by hand" in cell.source else \
                question + [cell.source]
    return found


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_chapter_asks_about_the_students_own_numbers(assignment: str):
    nb = sources.read_text_source(sources.text_source(REPO_ROOT, assignment))
    assert _own_numbers_questions(nb), (
        "no hand-graded question asks about numbers the student's own code printed (a cell before it runs the "
        "student's functions; the question says 'your table/run/numbers...'; the answer cell holds the rubric)")
