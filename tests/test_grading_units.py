"""The grading logic, without a kernel or an nbgrader run: each rule on small made-up inputs.

The scan of a submission, the hidden-block parser and the leak check, the status rules, the
class table and its CSV, LMS file names, the course layout read from ``nbgrader_config.py``, the
feedback preprocessor and the report's numbers. The real pipeline is proven end to end by
``test_hostile_submissions.py`` and ``test_grading_pipeline.py`` (slow); these say which rule broke.
"""

from __future__ import annotations

import csv
import re
import shutil

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from nbgrader.utils import compute_checksum

from coursetools.authoring.lint import lint_notebook
from coursetools.cli import not_ok
from coursetools.common.allowlist import Allowed, allow_lists, answer_test_cells, may_use_problems, parse_may_use
from coursetools.common.cells import GradedCell, graded_cells
from coursetools.common.hidden import (
    HIDDEN_PLACEHOLDER,
    REDACTED,
    SOLUTION_MARKERS,
    hidden_lines,
    parse_blocks,
    quoted_lines,
    redact,
    split_hidden,
    split_setup,
    visible_text,
)
from coursetools.common.layout import REPO_ROOT, Course, course_directory
from coursetools.common.pyscan import history_findings
from coursetools.grading.nbgrader_plugins import HideHiddenTests
from coursetools.grading.outcomes import (
    CELL_TIMED_OUT,
    CLEARED,
    HAND_GRADE_AGAIN,
    KEPT,
    KERNEL_DIED,
    MANUAL,
    MISSING,
    OK,
    TAMPERED,
    TIMED_OUT,
    already_graded,
    autograde_status,
    cells_stopped_at_limit,
    explained_log,
    grading_fingerprint,
    last_error_line,
    reviewed,
    tampering_seen_by_tests,
    worth_another_run,
)
from coursetools.grading.scan import locked_cell_changes, submission_findings
from coursetools.grading.state import REVIEWS
from coursetools.reports.exports import ClassTable, class_row, csv_rows, lateness, write_csv
from coursetools.reports.report import ExerciseStats, exercise_stats, histogram_svg, render

HIDDEN_LINE = "assert add(40, 2) == 42, 'add is wrong for larger numbers'"
TEST_SOURCE = f"""assert add(1, 1) == 2
### BEGIN HIDDEN TESTS
# Instructor notes: catches an add that only works for small numbers
{HIDDEN_LINE}
### END HIDDEN TESTS"""


def graded_cell(source: str, grade_id: str, *, test: bool = False, solution: bool = False, locked: bool = False,
                points: float = 0, markdown: bool = False) -> nbformat.NotebookNode:
    """A cell with nbgrader metadata, and the checksum a release stores for a locked one."""
    cell = (new_markdown_cell if markdown else new_code_cell)(source)
    cell.metadata["nbgrader"] = {"grade": test or bool(points), "solution": solution, "locked": locked or test,
                                 "grade_id": grade_id, "schema_version": 3, "task": False}
    if points:
        cell.metadata["nbgrader"]["points"] = points
    if locked or test:
        cell.metadata["nbgrader"]["checksum"] = compute_checksum(cell)
    return cell


def tiny_release() -> nbformat.NotebookNode:
    """Setup (locked, it imports the checks), an answer cell, its test, a hand-graded answer."""
    return new_notebook(cells=[
        graded_cell("import torch\nfrom coursetools.checks import assert_close", "setup", locked=True),
        graded_cell("def add(a, b):\n    # YOUR CODE HERE\n    raise NotImplementedError()", "add", solution=True),
        graded_cell(TEST_SOURCE, "test_add", test=True, points=2),
        graded_cell("YOUR ANSWER HERE", "why", solution=True, points=1, markdown=True),
    ])


def answered_with(code: str) -> nbformat.NotebookNode:
    """The tiny release with ``code`` as the student's answer."""
    submission = tiny_release()
    submission.cells[1].source = code
    return submission


# --- the scan of a submission -------------------------------------------------------------------

def test_an_untouched_release_has_no_locked_cell_changes():
    assert locked_cell_changes(tiny_release(), tiny_release()) == []


def test_an_edited_and_a_deleted_locked_cell_are_named():
    submission = tiny_release()
    submission.cells[2].source = "pass"
    del submission.cells[0]
    assert locked_cell_changes(tiny_release(), submission) == ["deleted locked cell setup",
                                                               "edited locked cell test_add"]


def test_changing_a_locked_cells_points_is_an_edit():
    submission = tiny_release()
    submission.cells[2].metadata["nbgrader"]["points"] = 20
    assert locked_cell_changes(tiny_release(), submission) == ["edited locked cell test_add"]


def findings(*args) -> list[str]:
    """The scan's findings on a submission, as the grader's details write them."""
    return [str(finding) for finding in submission_findings(*args)]


MACHINE = "the kernel's or the checker's machinery"
NOT_MINE = "a module the notebook did not create"


@pytest.mark.parametrize("code, finding", [
    ("import torch\ntorch.allclose = lambda *a, **k: True",
     f"add, line 2: writes to torch.allclose, in torch, {NOT_MINE}"),
    ("import torch.testing as tt\ntt.assert_close = print",
     f"add, line 2: writes to tt.assert_close, in torch, {NOT_MINE}"),
    ("import torch\ndel torch.equal", f"add, line 2: writes to torch.equal, in torch, {NOT_MINE}"),
    ("import sys\nsys.modules['torch'] = None", f"add, line 2: uses sys.modules, {MACHINE}"),
    ("def add(a, b):\n    return a + b\nadd.__code__ = (lambda a, b: 0).__code__",
     "add, line 3: reads .__code__, the interpreter's insides"),
    ("import ctypes", f"add, line 1: imports ctypes, {MACHINE}"),
    ("from coursetools import checks", f"add, line 1: imports coursetools.checks, {MACHINE}"),
    ("verify_untampered = lambda: None", None),  # not imported by the given cells here: an ordinary name
    ("assert_close = lambda *a, **k: None", "add, line 1: rebinds assert_close, which the given cells import from the "
                                            "course's checks"),
    ("eval('1 + 1')", "add, line 1: uses eval, whose code the scan cannot read"),
    ("import math\nsetattr(math, 'pi', 3)", f"add, line 2: setattr on math, {NOT_MINE}"),
    ("get_ipython().events.register('pre_run_cell', print)",
     f"add, line 1: uses builtins.get_ipython, {MACHINE}"),
    # issue 40's way to the bridge: IPython's comm targets, names built from strings
    ("import IPython\nshell = getattr(IPython, 'get_' + 'ipython')()",
     "add, line 2: getattr on IPython with a name computed at run time"),
    ("def f(g):\n    return g.kernel.comm_manager.targets",
     "add, line 2: reads .comm_manager, the interpreter's insides"),
    ("import sys\nframe = sys._getframe(1)", f"add, line 2: uses sys._getframe, {MACHINE}"),
    ("import inspect as i\nf = i.currentframe()", f"add, line 2: uses inspect.currentframe, {MACHINE}"),
    ("import gc\nx = gc.get_referents(print)", f"add, line 2: uses gc.get_referents, {MACHINE}"),
    ("globals()['add'] = print", "add, line 1: rebinds a name through the namespace's dictionary"),
])
def test_each_way_to_the_machinery_is_flagged_with_its_line(code, finding):
    found = findings(tiny_release(), answered_with(code))
    assert finding in found if finding else found == []


@pytest.mark.parametrize("code", [
    "def add(a, b):\n    return sorted([a, b])[0] + max(a, b)",
    "import torch\n\ndef add(a, b):\n    x = torch.zeros(2)\n    x[0] = a\n    return (x.sum() + b).item()",
    "class Box:\n    pass\n\nbox = Box()\nbox.value = 3\n\ndef add(a, b):\n    return a + b",
    "%matplotlib inline\n%time total = 1 + 1",
    "def add(a, b)\n    return a + b",  # a syntax error fails in the kernel; nothing to report here
    'class Add(object):\n    """Calls super().__init__() first."""\n\n    def __init__(self):\n'
    '        super().__init__()',
    "def add(a, b):\n    print('_' * 20, '____')\n    return getattr(a, 'real') + b",
    # issue 49's honest answers the word scan flagged
    "import re\npattern = re.compile('a+')\n\ndef add(model, b):\n    model.eval()\n    return b",
    "def add(a, b):\n    if not hasattr(a, '__len__'):\n"
    "        raise TypeError(f'{a.__class__.__name__}: see __init__')\n    return vars()",
    "import gc\nimport operator\n\ndef add(a, b):\n    gc.collect()\n    return operator.attrgetter('real')(a) + b",
    "def add(bits, b):\n    return getattr(torch, f'complex{bits}')\n\nif __name__ == '__main__':\n    add(64, 0)",
])
def test_innocent_code_is_not_flagged(code):
    assert findings(tiny_release(), answered_with(code)) == []


RNN_RULE = {"add": Allowed(frozenset({"torch.rnn_tanh_cell", "torch.nn.RNNCell"}), by_hand=True)}


@pytest.mark.parametrize("code, finding", [
    ("import torch\n_cell = torch.rnn_tanh_cell\n\ndef add(a, b):\n    return _cell(a, b)",
     "add, line 2: uses torch.rnn_tanh_cell, which this exercise's allow-list refuses"),
    ("def add(a, b):\n    return torch.ops.aten.rnn_tanh_cell(a, b)",
     "add, line 2: uses torch.ops.aten.rnn_tanh_cell (under torch.ops), which this exercise's allow-list refuses"),
    ("def add(a, b):\n    a.backward()\n    return b",
     "add, line 2: calls .backward, the Tensor method of torch.Tensor.backward, which this exercise refuses"),
    ("def add(a, b):\n    torch._C._set_grad_enabled(True)\n    return b",
     "add, line 2: uses torch._C._set_grad_enabled (under torch._C), which this exercise's allow-list refuses"),
    ("def add(a, b):\n    return getattr(torch, 'rnn_' + 'tanh_cell')(a, b)",
     "add, line 2: getattr with a name computed at run time: the scan cannot tell what it reaches"),
    ("import runpy\n\ndef add(a, b):\n    return runpy.run_module('torch')",
     "add, line 4: uses runpy.run_module (under runpy), which this exercise's allow-list refuses"),
])
def test_a_use_outside_the_allow_list_is_flagged_in_what_the_answer_reaches(code, finding):
    """Issue 49's ways round ``refuse``: the refused kernel taken early, under torch.ops, as a Tensor method..."""
    assert finding in findings(tiny_release(), answered_with(code), RNN_RULE)
    assert findings(tiny_release(), answered_with(code)) == [] or "getattr" in code or "_C" in code


def test_a_self_check_beside_the_answer_is_not_the_answer():
    submission = answered_with("def add(a, b):\n    return a + b")
    submission.cells.append(new_code_cell("x = torch.ones(2, requires_grad=True)\nadd(x, 1).sum().backward()"))
    assert findings(tiny_release(), submission, RNN_RULE) == []
    submission.cells.append(new_code_cell("add = lambda a, b: torch.rnn_tanh_cell(a, b)"))
    assert findings(tiny_release(), submission, RNN_RULE) == [
        "cell 6, line 1: uses torch.rnn_tanh_cell, which this exercise's allow-list refuses"]


def test_locked_cells_are_not_scanned_as_the_students_code():
    """The setup cell imports coursetools; only a student's own cell doing so is reported."""
    submission = answered_with("def add(a, b):\n    return a + b")
    assert findings(tiny_release(), submission) == []
    submission.cells.append(new_code_cell("import coursetools"))
    assert findings(tiny_release(), submission) == [
        "cell 5, line 1: imports coursetools, the kernel's or the checker's machinery"]


def test_the_may_use_line_is_the_allow_list_and_the_lint_asks_for_it():
    source = tiny_release()
    source.cells[2].source = ('with refuse(torch, ("rnn_tanh", "rnn_tanh_cell"), "write the loop"), '
                              'forbid(nn.RNNCell):\n    add(1, 2)')
    source.cells.insert(1, new_markdown_cell("Write `add` by hand."))
    assert may_use_problems(source) == ["add: the instructions restrict the means but state no "
                                        "'**May use:** ...; **not:** ...' line"]
    source.cells[1].source += "\n\n**May use:** by hand: public torch; **not:** `nn.RNNCell`, `torch.rnn_tanh_cell`."
    no_call = ('add: its first test cell test_add does not start with assert_may_use("<the answer\'s names>", '
               '"<the May-use line>")')
    assert may_use_problems(source) == ["add: the May-use line does not name torch.rnn_tanh, which the tests refuse",
                                        no_call]
    source.cells[1].source = source.cells[1].source.replace("`nn.RNNCell`", "`nn.RNNCell`, `torch.rnn_tanh`")
    assert may_use_problems(source) == [no_call]
    # the visible test checks the line the instructions state, for the names the answer binds
    line = "**May use:** by hand: public torch; **not:** `nn.RNNCell`, `torch.rnn_tanh`, `torch.rnn_tanh_cell`."
    test = source.cells[3].source
    source.cells[3].source = f"assert_may_use('add, sub', {line.replace('by hand: ', '')!r})\n{test}"
    assert may_use_problems(source) == [
        "add: the line assert_may_use checks in test_add is not the instructions' May-use line",
        "add: assert_may_use in test_add names sub, which the answer does not bind"]
    source.cells[3].source = f"assert_may_use('add', {line!r})\n{test}"
    assert may_use_problems(source) == []
    refused = frozenset({"torch.nn.RNNCell", "torch.rnn_tanh_cell", "torch.rnn_tanh"})
    assert allow_lists(source) == {"add": Allowed(refused, by_hand=True)}
    assert answer_test_cells(source) == {"add": ["test_add"]}  # the points a use outside the list costs



def test_the_visible_check_reads_the_latest_answer_in_the_kernels_history():
    """assert_may_use's scan (coursetools/checks/may_use.py): the cells a kernel ran, only the latest binding of a
    name counting, the test cell left out; an import reached through one name uses only that name."""
    rule = parse_may_use("**May use:** public torch; **not:** `torch.rnn_tanh_cell`.")
    setup = ("In [1]", "import torch\nfrom torch import rnn_tanh_cell, tanh")
    flagged = ("In [2]", "def add(a, b):\n    return torch.rnn_tanh_cell(a, b)")
    fixed = ("In [3]", "def add(a, b):\n    return tanh(a) + b")
    test = "assert add(1, 2) == 3"

    def found(*history):
        return [str(finding) for finding in history_findings(list(history), test, ["add"], rule)]

    assert found(setup, flagged) == ["In [2], line 2: uses torch.rnn_tanh_cell, which this exercise's allow-list "
                                     "refuses"]
    assert found(setup, flagged, fixed) == []  # fixed and run again: the flagged version is history
    assert found(setup, fixed, ("In [3]", flagged[1])) == ["In [3], line 2: uses torch.rnn_tanh_cell, which this "
                                                           "exercise's allow-list refuses"]
    helper = ("In [4]", "def step(a):\n    return rnn_tanh_cell(a)")
    assert found(setup, ("In [3]", "def add(a, b):\n    return step(a) + b"), helper) == [  # what the answer reaches
        "In [1], line 2: uses torch.rnn_tanh_cell, which this exercise's allow-list refuses",
        "In [4], line 2: uses torch.rnn_tanh_cell, which this exercise's allow-list refuses"]
    assert found(setup) == []  # the answer not run yet: the test itself says so (NameError)

# --- hidden blocks and leaks --------------------------------------------------------------------

def test_parse_blocks_gives_each_line_its_role():
    source = "a = 1\n    ### BEGIN HIDDEN TESTS\n    b = 2\n    ### END HIDDEN TESTS\nc = 3"
    assert [role for role, _ in parse_blocks(source)] == ["outside", "begin", "inside", "end", "outside"]
    assert [role for role, _ in parse_blocks("### BEGIN SOLUTION\nx\n### END SOLUTION", SOLUTION_MARKERS)] == \
        ["begin", "inside", "end"]


def test_split_hidden_keeps_indentation_and_every_block():
    source = "def test():\n    ok()\n    ### BEGIN HIDDEN TESTS\n    secret_one()\n    ### END HIDDEN TESTS\n" \
             "    shown()\n### BEGIN HIDDEN TESTS\nsecret_two()\n### END HIDDEN TESTS"
    shown, hidden = split_hidden(source)
    assert shown == f"def test():\n    ok()\n    {HIDDEN_PLACEHOLDER}\n    shown()\n{HIDDEN_PLACEHOLDER}"
    assert hidden == ["    secret_one()", "secret_two()"]


def test_an_unterminated_block_hides_the_rest_of_the_cell():
    shown, hidden = split_hidden("visible()\n### BEGIN HIDDEN TESTS\nsecret()\nmore_secret()")
    assert shown == f"visible()\n{HIDDEN_PLACEHOLDER}"
    assert hidden == ["secret()", "more_secret()"]


def test_a_hidden_setup_ends_at_its_marker():
    assert split_setup("def _f():\n    pass\n# END HIDDEN SETUP\nassert _f() is None") == (
        "def _f():\n    pass", "assert _f() is None")
    assert split_setup("assert True") == ("", "assert True")


def test_hidden_lines_leave_out_short_and_visible_ones():
    nb = new_notebook(cells=[new_code_cell("shared_line(1)\n### BEGIN HIDDEN TESTS\nshared_line(1)\nelse:\n"
                                           f"{HIDDEN_LINE}\n### END HIDDEN TESTS")])
    assert hidden_lines(nb) == {HIDDEN_LINE}


HIGHLIGHTED = ('<div class="highlight"><pre><span class="k">assert</span> <span class="n">add</span>'
               '<span class="p">(</span><span class="mi">40</span><span class="p">,</span> '
               '<span class="mi">2</span><span class="p">)</span> <span class="o">==</span> '
               '<span class="mi">42</span><span class="p">,</span> <span class="s1">&#39;add is wrong for '
               'larger numbers&#39;</span>\n</pre></div>')


def test_visible_text_joins_highlighted_spans_and_decodes_entities():
    assert visible_text(HIGHLIGHTED).strip() == HIDDEN_LINE
    assert visible_text("<p>a &lt; b &amp;&amp; c &gt; d</p>") == "a < b && c > d"


def test_visible_text_keeps_what_the_page_source_shows():
    assert "secret()" in visible_text("<script>secret()</script>")
    assert "secret()" in visible_text("<!-- secret() -->")


def test_visible_text_leaves_out_only_a_public_text_equal_to_a_whole_string():
    """The feedback's inlined MathJax (public, with lines such as `continue`) is not read for quotes;
    a script that merely starts like it, or holds it and more, still is."""
    public = ("for(;;){continue}",)
    assert visible_text("<script>for(;;){continue}</script><p>x</p>", public) == "x"
    assert "continue" in visible_text("<script>for(;;){continue} secret()</script>", public)
    assert quoted_lines("<script>for(;;){continue}</script>", {"continue"}, public) == []
    assert quoted_lines("<script>for(;;){continue}</script>", {"continue"}) == ["continue"]


def test_quoted_lines_finds_a_hidden_line_in_highlighted_html():
    assert quoted_lines(HIGHLIGHTED, {HIDDEN_LINE, "never_quoted(1)"}) == [HIDDEN_LINE]
    assert quoted_lines("<p>nothing</p>", {HIDDEN_LINE}) == []


def test_redact_replaces_quoted_hidden_lines_longest_first():
    text = f"AssertionError in `    {HIDDEN_LINE}` (else:)"
    hidden = ["    " + HIDDEN_LINE, "assert add(40, 2)", "else:"]
    assert redact(text, hidden) == f"AssertionError in `    {REDACTED}` (else:)"


def test_feedback_preprocessor_hides_blocks_and_test_tracebacks():
    nb = tiny_release()
    error = new_output("error", ename="AssertionError", evalue=f"failed at {HIDDEN_LINE}",
                       traceback=["Traceback", f"----> 4 {HIDDEN_LINE}", "AssertionError: failed"])
    nb.cells[2].outputs = [error]
    nb.cells[1].outputs = [new_output("stream", name="stdout", text=f"I guessed {HIDDEN_LINE}\n")]
    nb, _ = HideHiddenTests().preprocess(nb, {})
    assert nb.cells[2].source == f"assert add(1, 1) == 2\n{HIDDEN_PLACEHOLDER}"
    assert nb.cells[2].outputs[0].traceback == [f"AssertionError: failed at {REDACTED}"]
    assert nb.cells[1].outputs[0].text == f"I guessed {REDACTED}\n"


def test_lint_reads_hidden_blocks_with_the_same_parser():
    nb = tiny_release()
    assert not [p for p in lint_notebook(nb) if p.startswith("test_add")]
    nb.cells[2].source = TEST_SOURCE + "\n### BEGIN HIDDEN TESTS\nx = 1\n### END HIDDEN TESTS"
    assert "test_add: a test cell needs exactly one hidden block, found markers begin, end, begin, end" \
        in lint_notebook(nb)
    nb.cells[2].source = TEST_SOURCE.replace("# Instructor notes:", "# notes:")
    assert any(p.startswith("test_add: the hidden block must start with") for p in lint_notebook(nb))


# --- the status of one student ------------------------------------------------------------------

def test_a_notebook_killed_at_the_limit_timed_out():
    assert autograde_status(None, "", ["uses eval"], [], "75 s of CPU time") == \
        (TIMED_OUT, ["stopped after 75 s of CPU time", "uses eval"])


@pytest.mark.parametrize("log, status, detail", [
    ("[AutogradeApp | ERROR] nbclient.exceptions.DeadKernelError: Kernel died\nbye", KERNEL_DIED,
     "[AutogradeApp | ERROR] nbclient.exceptions.DeadKernelError: Kernel died"),
    ("[AutogradeApp | ERROR] CellTimeoutError: A cell timed out", TIMED_OUT,
     "[AutogradeApp | ERROR] CellTimeoutError: A cell timed out"),
    ("Timeout waiting for execute reply\nKernel died while waiting", KERNEL_DIED, "Kernel died while waiting"),
    ("a RuntimeError was caught\n[AutogradeApp | ERROR] There was an error processing assignment\ndone", MANUAL,
     "[AutogradeApp | ERROR] There was an error processing assignment"),
    ("", MANUAL, "nbgrader autograde failed with exit code 1 (see the log)"),
])
def test_a_failed_autograde_is_explained_by_its_log(log, status, detail):
    assert autograde_status(1, log, ["edited locked cell test_add"], [], "") == \
        (status, [detail, "edited locked cell test_add"])


def test_a_grader_killed_by_a_signal_says_which():
    # a failed run whose log names no error was seen once, on a loaded machine (a hostile student, 2026-11-29,
    # its log complete); how the process ended was not recorded then
    assert autograde_status(-11, "[course] grader peak memory: 293 MiB", [], [], "") == \
        (MANUAL, ["nbgrader autograde was killed by SIGSEGV (see the log)"])


@pytest.mark.parametrize("returncode, log, again", [
    (1, "sqlite3.OperationalError: database is locked", True),  # two writers at once
    (-11, "[course] grader peak memory: 293 MiB", True),  # ended with nothing said: once more
    (1, "", True),
    (1, "[AutogradeApp | ERROR] There was an error processing assignment", False),  # the notebook's own failure
    (1, "nbclient.exceptions.DeadKernelError: Kernel died", False),
    (1, "Timeout waiting for execute reply", False),
    (None, "", False),  # stopped at the notebook's limit
    (0, "", False),
])
def test_a_failed_run_runs_again_only_when_nothing_says_why(returncode, log, again):
    assert worth_another_run(returncode, log) is again


def test_a_finished_autograde_is_tampered_manual_or_ok():
    assert autograde_status(0, "", ["assigns to torch.allclose"], ["test_add"], "") == \
        (TAMPERED, ["assigns to torch.allclose"])
    assert autograde_status(0, "", [], ["test_add", "test_mul"], "") == \
        (MANUAL, ["no automatic score for test_add, test_mul"])
    assert autograde_status(0, "", [], [], "") == (OK, [])


def test_a_cell_stopped_at_the_time_limit_is_named():
    """Issue 28: a timed-out cell left the student ``ok`` with empty details."""
    nb = tiny_release()
    nb.cells[1].outputs = [new_output("error", ename="KeyboardInterrupt", evalue="", traceback=[])]
    assert cells_stopped_at_limit(nb) == ["add"]
    status, details = autograde_status(0, "", [], [], "", ["add"])
    assert status == CELL_TIMED_OUT and details == ["add stopped at the per-cell time limit (an endless or very "
                                                    "slow loop?)"]


def test_the_grading_fingerprint_changes_with_a_test_not_with_prose():
    nb = tiny_release()
    before = grading_fingerprint(nb)
    nb.cells.append(new_markdown_cell("More explanation."))
    assert grading_fingerprint(nb) == before
    nb.cells[2].source += "\nassert add(2, 2) == 4"
    assert grading_fingerprint(nb) != before


def test_a_locked_cell_as_an_earlier_release_had_it_is_not_an_edit():
    """Issue 28: a submission started from the previous release was flagged ``tampered``."""
    earlier, current = tiny_release(), tiny_release()
    current.cells[2] = graded_cell(TEST_SOURCE + "\nassert add(0, 0) == 0", "test_add", test=True, points=2)
    assert locked_cell_changes(current, earlier) == ["edited locked cell test_add"]
    assert locked_cell_changes(current, earlier, [earlier]) == []


def test_checksum_warnings_of_unedited_cells_are_explained():
    """Issue 28: every log warned "checksum ... has changed!" for cells the student never touched."""
    warning = "[AutogradeApp | WARNING] Attribute 'checksum' for cell {} has changed! (should be: 0f, got: 6e)"
    log = "\n".join([warning.format("test_add"), warning.format("test_mul"), "done"])
    assert explained_log(log, {"test_mul"}).splitlines() == [
        "[course] test_add: as released (nbgrader's checksum warning for it only means that the hidden tests "
        "were put back)", warning.format("test_mul"), "done"]


def test_last_error_line_is_cut_to_300_characters():
    assert last_error_line("error " + "x" * 400, 1) == ("error " + "x" * 400)[:300]


def test_the_tests_own_tampering_reports_are_collected():
    nb = tiny_release()
    nb.cells[2].outputs = [new_output("error", ename="TamperingError", evalue="torch.allclose was replaced",
                                      traceback=[]),
                           new_output("error", ename="AssertionError", evalue="wrong", traceback=[])]
    assert tampering_seen_by_tests(nb) == ["tests saw: torch.allclose was replaced"]


@pytest.mark.parametrize("record, sha, has_autograded, expected", [
    (None, "abc", True, False),
    ({"status": OK, "submission_sha": "old"}, "abc", True, False),
    ({"status": OK, "submission_sha": "abc"}, "abc", True, True),
    ({"status": TAMPERED, "submission_sha": "abc"}, "abc", False, False),
    ({"status": KERNEL_DIED, "submission_sha": "abc"}, "abc", False, True),
    ({"status": MISSING, "submission_sha": ""}, "", False, True),
])
def test_a_recorded_outcome_stands_only_for_the_same_file(record, sha, has_autograded, expected):
    assert already_graded(record, sha, has_autograded) is expected


def test_a_recorded_outcome_stands_only_for_the_same_tests():
    """Issue 28: a changed hidden test did not regrade ("0 to grade, 10 already graded")."""
    record = {"status": OK, "submission_sha": "abc", "tests_sha": "v1"}
    assert already_graded(record, "abc", True, "v1")
    assert not already_graded(record, "abc", True, "v2")


# --- the class table and its CSV ----------------------------------------------------------------

CELLS = [GradedCell("test_add", True, 2.0), GradedCell("why", False, 1.0)]


def class_table() -> ClassTable:
    return ClassTable([
        class_row("ann", {"status": OK, "details": []}, {"test_add": 2.0, "why": None}, CELLS),
        class_row("bob", {"status": KERNEL_DIED, "details": ["Kernel died"]}, {}, CELLS),
        class_row("cat", {"status": MANUAL, "details": []}, {"test_add": 0.0, "why": 1.0}, CELLS),
    ], CELLS)


def test_graded_cells_are_read_from_the_release():
    assert graded_cells(tiny_release()) == CELLS


def test_csv_rows_leave_ungraded_totals_blank_and_count_answers_to_grade():
    assert csv_rows(class_table()) == [
        ["student", "name", "email", "lms_id", "status", "test_add", "why", "total", "max_total", "manual_to_grade",
         "late", "details"],
        ["ann", "", "", "", OK, "2", "", "2", "3", "1", "", ""],
        ["bob", "", "", "", KERNEL_DIED, "", "", "", "3", "", "", "Kernel died"],
        ["cat", "", "", "", MANUAL, "0", "1", "1", "3", "0", "", ""],
    ]


def test_grade_it_again_is_said_until_the_answer_has_its_new_hand_grade():
    """Issue 42: after hand grading, the CSV and the report still said "grade it again"."""
    record = {"status": OK, "details": ["why" + HAND_GRADE_AGAIN, "other detail"]}
    assert class_row("ann", record, {"test_add": 2.0, "why": None}, CELLS).details == record["details"]
    assert class_row("ann", record, {"test_add": 2.0, "why": 1.0}, CELLS).details == ["other detail"]


def test_a_use_outside_the_allow_list_costs_its_exercise_until_a_review_clears_it():
    """Issue 49: the scan's finding in an answer withholds its exercise's test cells; a cleared review counts them."""
    record = {"status": TAMPERED, "details": ["add, line 2: uses torch.ops.aten.add ..."], "submission_sha": "a",
              "withheld": ["test_add"]}
    row = class_row("ann", record, {"test_add": 2.0, "why": 1.0}, CELLS)
    assert (row.scores["test_add"], row.total) == (0.0, 1.0)
    assert any(d.startswith("test_add: 0, its answer used") for d in row.details)
    cleared = reviewed(record, {"decision": CLEARED, "note": "an honest use", "status": TAMPERED,
                                "submission_sha": "a"})
    assert class_row("ann", cleared, {"test_add": 2.0, "why": 1.0}, CELLS).total == 3.0
    kept = reviewed(record, {"decision": KEPT, "note": "the refused kernel", "status": TAMPERED, "submission_sha": "a"})
    assert class_row("ann", kept, {"test_add": 2.0, "why": 1.0}, CELLS).total == 1.0


def test_the_run_names_every_student_not_ok_graded_in_it_or_before():
    """Issue 42: a resumed run printed "not ok: none" while two students graded before stayed flagged."""
    record = {"status": TAMPERED, "details": ["uses comm_manager"], "submission_sha": "a"}
    state = {"ann": record, "bob": {**record, "status": OK}, REVIEWS: {}, "submitted": {"ann": {"file": "x"}}}
    assert not_ok(state) == {"ann": TAMPERED}
    state[REVIEWS] = {"ann": {"submission_sha": "a", "status": TAMPERED, "decision": "cleared", "note": "fine"}}
    assert not_ok(state) == {}


def test_write_csv_round_trips_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "exports" / "tiny_grades.csv"
    write_csv(path, csv_rows(class_table()))
    with path.open(newline="", encoding="utf-8") as handle:
        assert list(csv.reader(handle)) == csv_rows(class_table())
    assert [p.name for p in path.parent.iterdir()] == ["tiny_grades.csv"]


def test_exercise_stats_put_the_hardest_first_and_count_answers_to_grade_by_hand():
    assert exercise_stats(class_table().rows, CELLS) == [ExerciseStats("test_add", True, 0.5, 0.5, 2, 0),
                                                         ExerciseStats("why", False, 1.0, 1.0, 1, 1)]


def test_the_report_shows_pending_hand_grading_and_says_what_its_means_count():
    """Issue 28: the report said "needs manual grade: 0" while the CSV had manual_to_grade=1, and
    its mean counted ungraded answers as 0."""
    page = render("tiny", class_table().rows, CELLS, [])
    assert "Hand grading pending: 1 answers of 1 students</strong> (ann)" in page
    assert "<tr><td>answers still to grade by hand</td><td>1</td></tr>" in page
    assert "Autograded tests: mean 50.0 % of their 2 points over the 2 graded students." in page
    assert ("Total: mean 33.3 % of 3 points over the 1 students whose grading is complete (the 1 with answers "
            "still to grade by hand are left out).") in page
    assert "<td>ann</td><td>ok</td><td>to grade by hand: why</td>" in page


def test_lateness_against_the_due_date():
    from datetime import datetime
    due = datetime(2026, 1, 12, 23, 59)
    assert lateness(datetime(2026, 1, 12, 23, 0), due) == ""
    assert lateness(datetime(2026, 1, 14, 2, 4), due) == "late by 1 d 2 h 5 min"
    assert lateness(None, due, marked_late=True) == "marked late by the LMS"
    assert lateness(datetime(2026, 1, 14), None) == ""


def test_histogram_bins_scores_by_tens():
    counts = re.findall(r'font-size="11"[^>]*>(\d+)</text>', histogram_svg([0, 5, 55, 100, 100]))
    assert counts == ["2", "0", "0", "0", "0", "1", "0", "0", "0", "2"]


# --- file names and paths -----------------------------------------------------------------------

@pytest.fixture()
def course_root(tmp_path):
    shutil.copy(REPO_ROOT / "nbgrader_config.py", tmp_path / "nbgrader_config.py")
    return tmp_path


def test_the_layout_is_nbgraders(course_root):
    course, nbgrader = Course(course_root), course_directory(course_root)
    assert course.notebook("submitted", "tiny", "bob") == course_root / "grading/submitted/bob/tiny/tiny.ipynb"
    for step in ("submitted", "autograded", "feedback"):
        folder = nbgrader.format_path(getattr(nbgrader, f"{step}_directory"), "bob", "tiny")
        assert str(course.folder(step, "tiny", "bob")) == folder
    assert course.notebook("release", "tiny") == course_root / "notebooks/tiny/tiny.ipynb"
    assert course.staged_release("tiny") == course_root / "grading/release/tiny/tiny.ipynb"
    assert course.gradebook == course_root / "grading/gradebook.db"
    with pytest.raises(ValueError, match="unknown nbgrader step 'graded'"):
        course.folder("graded", "tiny", "bob")


def test_the_layout_follows_the_configuration(course_root):
    (course_root / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        "c.CourseDirectory.submitted_directory = 'inbox'\n"
        "c.CourseDirectory.directory_structure = '{nbgrader_step}/{assignment_id}/{student_id}'\n")
    course = Course(course_root)
    assert course.notebook("submitted", "tiny", "bob") == course_root / "inbox/tiny/bob/tiny.ipynb"
    assert course.gradebook == course_root / "gradebook.db"
    for student in ("eve", "bob"):
        course.folder("submitted", "tiny", student).mkdir(parents=True)
    (course_root / "inbox" / "tiny" / "notes.txt").write_text("not a student")
    (course_root / "inbox" / "other" / "zed").mkdir(parents=True)
    assert course.students("submitted", "tiny") == ["bob", "eve"]


def test_course_paths_outside_nbgrader_stay_under_grading(course_root):
    course = Course(course_root)
    own = [course.state_file("tiny"), course.log_file("tiny", "bob"), course.exports(), course.report("tiny"),
           course.backups(), course.roster()]
    assert all(path.is_relative_to(course_root / "grading") for path in own)
    assert len(set(own)) == len(own)

