"""The course's one text on how grading works, put into every release.

:class:`IncludeGradingRules` runs when an assignment is generated (``nbgrader_config.py``): it puts
``how_grading_works.md`` (beside this module), with the per-cell time limit of
``nbgrader_config.py``, where a source notebook's markdown has the line :data:`INCLUDE_RULES`.
"""

from __future__ import annotations

from importlib.resources import files

from nbconvert.preprocessors import Preprocessor
from traitlets import Bool, Int

INCLUDE_RULES = "<!-- include: how grading works -->"


def grading_rules(cell_timeout: int) -> str:
    """The course's text on how grading works, with the per-cell time limit filled in."""
    text = files("coursetools.authoring").joinpath("how_grading_works.md").read_text(encoding="utf-8")
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
