"""nbgrader plug-ins named in ``nbgrader_config.py`` that grade and give feedback (the one that runs at
release is :mod:`coursetools.authoring.grading_rules`).

:class:`HideHiddenTests` runs when feedback is generated. nbgrader builds feedback from the
autograded notebooks, which hold the hidden tests (restored from the source at grading) and
tracebacks that quote them; upstream shows both by design. This preprocessor removes every
hidden block from the test cells (parsed by :mod:`coursetools.common.hidden`) and replaces each error's
traceback by its last line, with any quoted hidden line redacted, so a student sees *which* test
failed and the message it gave, never the hidden code.

:class:`ExplainTimeouts` runs at autograde, after execution: nbgrader leaves a cell stopped at the
per-cell time limit with a bare ``KeyboardInterrupt`` and ``CellTimeoutError``; the latter's message
becomes the limit (CPU seconds, or the wall-clock guard of a kernel that waited, :data:`WALL_STOP`)
and what to do about it.

:class:`FeedbackExporter` writes the feedback pages: nbgrader's feedback template, with MathJax
(the copy the book ships, from ``sphinx-mathjax-offline``) inlined instead of loaded from a CDN,
so that a page handed back on its own typesets its maths offline. Its table of contents names each
graded cell as the notebook does (the exercise's heading, ``part k of n``), and a note says which
given cells the student edited or deleted and that they were put back before grading: both from
:class:`NameGradedCells`, which reads the release graded against and the student's recorded outcome.
"""

from __future__ import annotations

import re
from functools import cache
from importlib.metadata import distribution
from importlib.resources import files
from pathlib import Path

import nbformat
from jinja2 import FileSystemLoader
from nbconvert.exporters import HTMLExporter
from nbconvert.preprocessors import Preprocessor
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import Execute
from traitlets import Bool, List, Unicode, default

from coursetools.checker.clock import WALL_FACTOR
from coursetools.common.cells import cell_headings, cell_titles, nbgrader_meta
from coursetools.common.hidden import redact, split_hidden
from coursetools.common.layout import Course
from coursetools.grading.rubrics import without_rubrics
from coursetools.grading.scan import locked_changes_in
from coursetools.grading.state import load_state

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class HideHiddenTests(Preprocessor):
    """Strip hidden tests, and the tracebacks and printed lines that quote them, from feedback."""

    enabled = Bool(True, help="Run whenever it is listed (nbconvert's default is off)").tag(config=True)

    def preprocess(self, nb, resources):
        without_rubrics(nb)  # the model answers the grader read beside the answers graded by hand
        hidden_lines: list[str] = []
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.source, hidden = split_hidden(cell.source)
                hidden_lines += hidden
        for cell in nb.cells:
            if cell.cell_type == "code":
                is_test = nbgrader_meta(cell).get("grade", False)
                cell.outputs = [self._clean_output(o, hidden_lines, is_test) for o in cell.get("outputs", [])]
        return nb, resources

    @staticmethod
    def _clean_output(output, hidden_lines: list[str], is_test: bool):
        if output.output_type == "error":
            output.evalue = redact(_ANSI.sub("", output.evalue), hidden_lines)
            if is_test:  # a test's traceback walks through the hidden code: keep its last line
                output.traceback = [f"{output.ename}: {output.evalue}" if output.evalue else output.ename]
            else:
                output.traceback = [redact(_ANSI.sub("", line), hidden_lines) for line in output.traceback]
        elif output.output_type == "stream":
            output.text = redact(output.text, hidden_lines)
        else:
            data = output.get("data", {})
            for mime in ("text/plain", "text/html", "text/markdown"):
                if isinstance(data.get(mime), str):
                    data[mime] = redact(data[mime], hidden_lines)
        return output


# --- a cell stopped at the time limit -----------------------------------------------------------

TIMEOUT_ERROR = "CellTimeoutError"  # the error nbgrader's Execute adds to a cell it stopped
# What grading writes in that error when the cell was stopped at the wall-clock guard, not its CPU time
WALL_STOP = "wall-clock guard"


def timeout_message(seconds: int, asleep: bool = False) -> str:
    """What a student reads under a cell stopped after ``seconds`` of CPU time, or (``asleep``) after
    :data:`~coursetools.checker.clock.WALL_FACTOR` times as many seconds of waiting."""
    if asleep:
        return (f"this cell was stopped: it took more than {seconds * WALL_FACTOR} s (more on a busy machine), most "
                "of it waiting without computing (time.sleep? input()?), so it and what depends on it scored "
                "nothing. Remove the wait, then check it in your notebook: Kernel > Restart & Run All.")
    return (f"this cell was stopped: it computed for more than the {seconds} s of CPU time each cell may take when "
            "graded (however busy the grading machine), so it and "
            "what depends on it scored nothing. Make it faster (an endless loop? a Python loop over every "
            "element where a tensor operation would do?), then check it in your notebook: Kernel > Restart & "
            f"Run All, with %%time as the first line of the cell; it must finish well under {seconds} s.")


class ExplainTimeouts(Preprocessor):
    """Say the limit and what to do in the ``CellTimeoutError`` of each cell stopped at the time limit."""

    enabled = Bool(True, help="Run whenever it is listed (nbconvert's default is off)").tag(config=True)

    def preprocess(self, nb, resources):
        seconds = Execute(config=self.config).timeout  # the limit nbgrader ran with
        for cell in nb.cells:
            for output in cell.get("outputs", []):
                if output.output_type == "error" and output.ename == TIMEOUT_ERROR:
                    output.evalue = timeout_message(seconds, asleep=output.evalue == WALL_STOP)
                    output.traceback = [f"{TIMEOUT_ERROR}: {output.evalue}"]
        return nb, resources


# --- feedback pages that work offline -----------------------------------------------------------

MATHJAX = "tex-svg-full.js"  # MathJax 3 with every TeX extension and SVG output: one file, no fonts to load
FEEDBACK_TEMPLATE = "course_feedback"  # coursetools/grading/templates/: nbgrader's "feedback" with local MathJax


@cache
def mathjax_script() -> str:
    """The MathJax the book ships (``sphinx-mathjax-offline``'s copy), as the text of a script."""
    path = Path(distribution("sphinx-mathjax-offline").locate_file(f"sphinx-mathjax-offline/static/mathjax/{MATHJAX}"))
    text = path.read_text(encoding="utf-8")
    if "</script" in text.lower():
        raise ValueError(f"{path} holds '</script', which would end an inline script early")
    return text


class FeedbackExporter(HTMLExporter):
    """nbgrader's feedback page with MathJax inlined (:func:`mathjax_script`).

    nbgrader's feedback template calls nbconvert's ``mathjax()`` macro without an address, so
    ``HTMLExporter.mathjax_url`` cannot change it: the template :data:`FEEDBACK_TEMPLATE` extends
    nbgrader's and its ``mathjax.html.j2`` replaces the macro; its ``index.html.j2`` replaces the
    page's heading (the table of contents, :class:`NameGradedCells`). Template and folders are fixed here
    (not configurable), since nbgrader configures every ``HTMLExporter`` for its own template.
    """

    template_name = Unicode(FEEDBACK_TEMPLATE)
    extra_template_basedirs = List(Unicode())

    @default("extra_template_basedirs")
    def _course_templates(self) -> list[str]:
        return [str(files("coursetools.grading") / "templates"), _nbgrader_templates()]

    @default("extra_loaders")
    def _nbgrader_template_folder(self) -> list:  # where the course's index finds 'feedback/index.html.j2'
        return [FileSystemLoader(_nbgrader_templates())]

    def default_filters(self):
        yield from super().default_filters()
        yield "local_mathjax", lambda _: mathjax_script()


def _nbgrader_templates() -> str:
    """The folder of nbgrader's formgrader templates (its ``feedback`` template among them)."""
    import nbgrader.server_extensions.formgrader as formgrader

    return str(Path(formgrader.__file__).parent / "templates")


# --- what the feedback page names -------------------------------------------------------------------

def put_back_lines(changes: list[tuple[str, str]], release: nbformat.NotebookNode) -> list[str]:
    """One sentence per given cell a student changed (``changes``: (``edited`` or ``deleted``,
    grade_id), :func:`coursetools.grading.scan.locked_changes_in`), naming it as ``release`` does: a test
    cell by its exercise, another given cell by the heading above it."""
    titles, headings = cell_titles(release), cell_headings(release)

    def name(grade_id: str) -> str:
        if grade_id in titles:
            return f"the test cell of “{titles[grade_id]}”"
        if grade_id not in headings:  # a cell of a release since replaced
            return "a given cell"
        return f"a given cell under “{headings[grade_id]}”" if headings[grade_id] else \
            "a given cell at the start of the notebook"

    return [f"You {how} {name(grade_id)}." for how, grade_id in changes]


class NameGradedCells(Preprocessor):
    """For the feedback template: ``resources["course"]`` = {``titles``: grade_id -> the graded
    cell's name (:func:`coursetools.common.cells.cell_titles` of the release graded against, so that no
    student's edit renames anything), ``put_back``: :func:`put_back_lines` of the student's outcome}."""

    enabled = Bool(True, help="Run whenever it is listed (nbconvert's default is off)").tag(config=True)

    def preprocess(self, nb, resources):
        course = Course(Path(CourseDirectory(config=self.config).root))
        assignment, student = resources["nbgrader"]["assignment"], resources["nbgrader"]["student"]
        # the release `course grade` graded against; feedback made by nbgrader alone reads the committed one
        staged = course.staged_release(assignment)
        release = nbformat.read(staged if staged.is_file() else course.notebook("release", assignment), as_version=4)
        details = load_state(course, assignment).get(student, {}).get("details", [])
        resources["course"] = {"titles": cell_titles(release),
                               "put_back": put_back_lines(locked_changes_in(details), release)}
        return nb, resources
