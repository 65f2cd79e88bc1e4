"""The book's parallel executor (``book/_ext/parallel_execution.py``, issue 51): a page whose kernel failed
(a ZeroMQ error, a dead kernel) is started again in a fresh kernel; a page whose own code fails is not.
"""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest
from nbformat.v4 import new_code_cell, new_notebook

from coursetools.common.layout import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "book" / "_ext"))
import parallel_execution  # noqa: E402

ENOTSOCK = 88  # "Socket operation on non-socket", what a kernel raised during a build beside other work


def fake_runs(monkeypatch, outcomes: list) -> list:
    """``single_nb_execution`` giving ``outcomes`` in turn (an exception is raised, a string is a failed
    cell's report); returns the notebooks it was given."""
    import jupyter_cache.executors.utils

    given = []

    def execute(notebook, **kwargs):
        given.append((notebook, kwargs))
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return SimpleNamespace(time=1.0, err=RuntimeError(outcome) if outcome else None, exc_string=outcome)

    monkeypatch.setattr(jupyter_cache.executors.utils, "single_nb_execution", execute)
    monkeypatch.setattr(parallel_execution.time, "sleep", lambda seconds: None)
    return given


def test_a_page_whose_kernel_raised_a_zeromq_error_is_started_again(monkeypatch):
    import zmq

    page = new_notebook(cells=[new_code_cell("1 + 1")])
    given = fake_runs(monkeypatch, [zmq.error.ZMQError(ENOTSOCK), "CellExecutionError: ... ZMQError: Socket ...", ""])
    executed, seconds, failure, starts = parallel_execution._execute(page, ".", 60, False)
    assert (failure, starts) == (None, 3)
    assert all(notebook == page and notebook is not page for notebook, _ in given), "each start from the page"


def test_a_cells_late_output_is_awaited_and_never_dropped_silently(monkeypatch):
    """Beside other work, a kernel's last glued values came after nbclient's 4 s wait and were dropped."""
    given = fake_runs(monkeypatch, [""])
    parallel_execution._execute(new_notebook(), ".", 60, False)
    (_, options), = given
    assert options["iopub_timeout"] == parallel_execution.IOPUB_WAIT >= 60 and options["raise_on_iopub_timeout"]


def test_a_page_whose_own_code_fails_is_left_to_myst_nb_at_once(monkeypatch):
    fake_runs(monkeypatch, ["CellExecutionError: ValueError: a bug in the page"])
    _, _, failure, starts = parallel_execution._execute(new_notebook(), ".", 60, False)
    assert starts == 1 and "a bug in the page" in failure


def test_a_kernel_that_keeps_failing_is_left_to_myst_nb_after_its_starts(monkeypatch):
    from nbclient.exceptions import DeadKernelError

    fake_runs(monkeypatch, [DeadKernelError("Kernel died")] * parallel_execution.PAGE_STARTS)
    _, _, failure, starts = parallel_execution._execute(new_notebook(), ".", 60, False)
    assert starts == parallel_execution.PAGE_STARTS and failure == "DeadKernelError: Kernel died"


@pytest.mark.slow
def test_a_real_kernel_that_raised_a_zeromq_error_gets_its_page_run_again(tmp_path):
    """A page whose first start raises ZMQError in its kernel (a marker file says it already started)."""
    page = new_notebook(cells=[new_code_cell(
        "from pathlib import Path\n"
        "if not Path('started').exists():\n"
        "    Path('started').write_text('')\n"
        "    import zmq\n"
        f"    raise zmq.error.ZMQError({ENOTSOCK})\n"
        "print('ran')")])
    page.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    executed, _, failure, starts = parallel_execution._execute(page, str(tmp_path), 120, False)
    assert (failure, starts) == (None, 2)
    assert [output.get("text") for output in executed.cells[0].outputs] == ["ran\n"], "the second start's outputs"
