"""nbgrader configuration for the course (nbgrader 0.9.6).

The repository is the course directory: instructor sources in ``solutions/`` (each assignment's
``<id>.md`` text source and the ``<id>.ipynb`` generated from it, see ``coursetools/authoring/sources.py``),
student releases in ``notebooks/``; everything grading produces lives under the git-ignored
``grading/``. Each setting below answers a behaviour of nbgrader 0.9 measured on this course's
machines; ``coursetools/README.md`` lists those facts.

The course's own classes are named by their import path (nbgrader and nbconvert import them when
they run): every ``course`` command loads this file for the course's folders, and ``course report``
need not import the grading pipeline (torch, the checker) to write a CSV.
"""

import os

c = get_config()  # noqa: F821 - provided by nbgrader when it loads this file

ROOT = os.path.dirname(os.path.abspath(__file__))

# --- where things live -----------------------------------------------------------------
c.CourseDirectory.course_id = "transformer-course"
c.CourseDirectory.root = ROOT
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "notebooks"
c.CourseDirectory.submitted_directory = os.path.join("grading", "submitted")
c.CourseDirectory.autograded_directory = os.path.join("grading", "autograded")
c.CourseDirectory.feedback_directory = os.path.join("grading", "feedback")
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(ROOT, "grading", "gradebook.db")
# The exchange is nbgrader's JupyterHub hand-out folder, unused here; formgrader still opens it, and
# its default (/usr/local/share/nbgrader/exchange) is not writable on an ordinary machine.
c.Exchange.root = os.path.join(ROOT, "grading", "exchange")
# Files next to a notebook that must never reach students: generate_assignment copies every other
# file of solutions/<id>/ into the release, and <id>.md is the whole instructor notebook as text.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "*.bak", "*.md"]

# --- what students receive ---------------------------------------------------------------
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# --- grading ------------------------------------------------------------------------------
# The source notebook's kernel is forced onto submissions; name the standard one, found on
# PATH in the course's virtual environment, so a custom kernel name cannot break grading.
c.ExecutePreprocessor.kernel_name = "python3"
# Per-cell limit, in CPU seconds of the grading process and the kernel's processes: a busy machine does
# not change it (coursetools/checker/clock.py; a kernel that waits without computing is stopped at
# WALL_FACTOR = 10 times as many wall-clock seconds, times the load per core when it is above 1). The
# slowest solution cell runs in a few seconds; an infinite loop costs at most this many seconds per
# remaining cell (see coursetools.grading.autograde for the notebook cap).
c.ExecutePreprocessor.timeout = 30
c.ExecutePreprocessor.interrupt_on_timeout = True
# After a cell's reply, nbclient waits this long for the rest of its output, and nbgrader fails the whole
# notebook past it ("Timeout waiting for IOPub output"; 4 s by default): a cell that printed 300 MB was
# graded "timed out" on a busy machine while the grader's output cap was still dropping its flood (the
# kernel's own cap now stops a flood before it is sent). Waiting longer
# costs nothing when output has stopped, but a kernel that ignores the interrupt at the cell limit is
# waited for that long too (bench_grading's hostile case: 11 s at 4 s, past 55 s at 60 s); not waiting
# (raise_on_iopub_timeout = False) could lose a failed test's error and give its points.
c.ExecutePreprocessor.iopub_timeout = 20
# Every student's kernel runs in a bubblewrap box of its own: it sees the Python environment and
# the course's packages read-only, a scratch copy of its own folder, no other file of the course,
# no network, no other process, under limits of memory, processes and bytes written
# (coursetools/grading/sandbox.py says what and why). Without bwrap no kernel starts; `course grade
# --unsafe-no-sandbox` swaps in jupyter_client's unconfined AsyncKernelManager.
c.ExecutePreprocessor.kernel_manager_class = "coursetools.grading.sandbox.ConfinedKernelManager"
# Once the last cell has run, the box is killed (its processes with it), not asked to shut down:
# a graceful shutdown waited ~0.9 s per student for the kernel's own exit, which grading has no use for.
c.ExecutePreprocessor.shutdown_kernel = "immediate"
# Hidden tests run outside the student's kernel: each graded cell's visible part runs in the
# kernel, its hidden block in a checker in the autograde process, which reaches the kernel only
# through calls carrying plain data (coursetools/checker/runner.py, coursetools/checks/bridge.py).
from nbgrader.converters.autograde import Autograde  # noqa: E402

# This term's seed for the hidden tests' inputs (coursetools/checker/term.py): set a new one each
# term (0 keeps the seeds as the sources write them); True below draws each student's own.
c.CheckedExecute.term_seed = 0
c.CheckedExecute.seed_per_student = False

# Anything on stderr (torch's UserWarnings, a student's print to stderr) would zero a test
# cell. Errors are what fail a test, so stderr streams are dropped before grades are taken.
c.IgnorePattern.enabled = True
c.IgnorePattern.pattern = r"[\s\S]"
# A deleted test cell comes back (and is graded) instead of leaving the grade empty.
c.OverwriteCells.add_missing_cells = True
# Huge printed outputs are cut before they reach the gradebook and feedback: in lines by nbgrader,
# and in bytes per cell by the course (coursetools/grading/output_cap.py: the cut is said where it happens,
# and the student flagged `output cut`); the bytes first in the kernel, before they are sent
# (coursetools/checks/output_cap.py), then as they arrive, since nbclient holds a cell's whole output
# in memory until it ends, then in the autograded notebook.
c.LimitOutput.max_lines = 200
c.LimitOutput.max_traceback = 30
c.CapOutputBytes.max_bytes = 300_000

from nbgrader.preprocessors import LimitOutput  # noqa: E402

_PLUGINS = "coursetools.grading.nbgrader_plugins"
# nbclient's kernel client: output capped as it arrives, each cell's reply awaited against its clock
c.ConfinedKernelManager.client_factory = "coursetools.grading.kernel_client.GradingKernelClient"
# After execution: a cell stopped at the time limit says the limit and what to do; then the cap.
# Execute is replaced by CheckedExecute (hidden blocks in the checker, above).
_autograde = ["coursetools.grading.checked_execute.CheckedExecute" if p.__name__ == "Execute" else p
              for p in Autograde.class_traits()["autograde_preprocessors"].default()]
_after_limit = _autograde.index(LimitOutput) + 1
c.Autograde.autograde_preprocessors = [*_autograde[:_after_limit], f"{_PLUGINS}.ExplainTimeouts",
                                       "coursetools.grading.output_cap.CapOutputBytes", *_autograde[_after_limit:]]

# --- the text every assignment shares -------------------------------------------------------------
# "How grading works" is written once (coursetools/authoring/how_grading_works.md) and put into each release
# where the source says <!-- include: how grading works -->, with the time limit set above.
from nbgrader.converters.generate_assignment import GenerateAssignment  # noqa: E402

c.GenerateAssignment.preprocessors = ["coursetools.authoring.grading_rules.IncludeGradingRules",
                                      *GenerateAssignment.class_traits()["preprocessors"].default()]
c.IncludeGradingRules.cell_timeout = c.ExecutePreprocessor.timeout

# --- feedback handed back to students ---------------------------------------------------------
# The feedback HTML would otherwise show the hidden tests (and tracebacks quoting them).
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor  # noqa: E402
from nbgrader.preprocessors import GetGrades  # noqa: E402

# NameGradedCells: the page's table of contents names each exercise as the notebook does, and a
# note says which given cells the student edited or deleted (put back before grading).
c.GenerateFeedback.preprocessors = [f"{_PLUGINS}.HideHiddenTests", GetGrades, f"{_PLUGINS}.NameGradedCells",
                                    CSSHTMLHeaderPreprocessor]
# nbgrader's feedback page loads MathJax from a CDN; this one carries the book's copy inlined.
c.GenerateFeedback.exporter_class = f"{_PLUGINS}.FeedbackExporter"
