"""nbgrader plug-ins named in ``nbgrader_config.py``.

:class:`HideHiddenTests` runs when feedback is generated. nbgrader builds feedback from the
autograded notebooks, which hold the hidden tests (restored from the source at grading) and
tracebacks that quote them; upstream shows both by design. This preprocessor removes every
hidden block from the test cells (parsed by :mod:`coursetools.hidden`) and replaces each error's
traceback by its last line, with any quoted hidden line redacted, so a student sees *which* test
failed and the message it gave, never the hidden code.

:class:`IncludeGradingRules` runs when an assignment is generated: it puts the course's one text
on how grading works (``coursetools/how_grading_works.md``, with the per-cell time limit of
``nbgrader_config.py``) where a source notebook's markdown has the line :data:`INCLUDE_RULES`.
"""

from __future__ import annotations

import re
from importlib.resources import files

from nbconvert.preprocessors import Preprocessor
from traitlets import Bool, Int

from coursetools.cells import nbgrader_meta
from coursetools.hidden import redact, split_hidden

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class HideHiddenTests(Preprocessor):
    """Strip hidden tests, and the tracebacks and printed lines that quote them, from feedback."""

    enabled = Bool(True, help="Run whenever it is listed (nbconvert's default is off)").tag(config=True)

    def preprocess(self, nb, resources):
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


# --- the shared text of every assignment -------------------------------------------------------

INCLUDE_RULES = "<!-- include: how grading works -->"


def grading_rules(cell_timeout: int) -> str:
    """The course's text on how grading works, with the per-cell time limit filled in."""
    text = files("coursetools").joinpath("how_grading_works.md").read_text(encoding="utf-8")
    return text.strip("\n").replace("{cell_timeout}", str(cell_timeout))


class IncludeGradingRules(Preprocessor):
    """Replace each markdown line :data:`INCLUDE_RULES` by :func:`grading_rules` (at release)."""

    enabled = Bool(True, help="Run whenever it is listed (nbconvert's default is off)").tag(config=True)
    cell_timeout = Int(help="seconds each cell may run when graded (ExecutePreprocessor.timeout)").tag(config=True)

    def preprocess(self, nb, resources):
        for cell in nb.cells:
            if cell.cell_type == "markdown" and INCLUDE_RULES in cell.source:
                cell.source = "\n".join(grading_rules(self.cell_timeout) if line.strip() == INCLUDE_RULES else line
                                        for line in cell.source.splitlines())
        return nb, resources
