"""The visible tests' May-use check in a real kernel (issue 49): a student's own Jupyter, then grading.

ch02's ``rnn_step`` through ``torch.ops.aten.rnn_tanh_cell`` (the refused kernel by another route, which
the in-kernel ``refuse`` does not see) fails the first visible test with a message naming the cell and
line; the model answer, run again after it, passes (only the latest cell binding a name counts). Under
grading (the kernel imported the bridge) the scan of the file decides and an instructor can clear it,
so the same cell passes and prints what it found. One kernel, a few seconds.
"""

from __future__ import annotations

import ast

import nbformat
import pytest
from jupyter_client.manager import start_new_kernel

from coursetools.checker import BRIDGE_IMPORT
from coursetools.common.cells import grade_id, nbgrader_meta
from coursetools.common.hidden import split_hidden_block
from coursetools.common.layout import REPO_ROOT

pytestmark = pytest.mark.slow

RELEASE = REPO_ROOT / "notebooks" / "ch02_rnn_bottleneck" / "ch02_rnn_bottleneck.ipynb"
ATTACK = (REPO_ROOT / "tests" / "hostile" / "ch02_ops_aten.py").read_text(encoding="utf-8")
MODEL = '''def rnn_step(x_t, h_prev, W_xh, W_hh, b_h, starts=None):
    if starts is not None:
        h_prev = h_prev.masked_fill(starts[:, None], 0.0)
    return torch.tanh(x_t @ W_xh + h_prev @ W_hh + b_h)
'''


@pytest.fixture(scope="module")
def kernel():
    manager, client = start_new_kernel(kernel_name="python3", cwd=str(REPO_ROOT))
    yield client
    client.stop_channels()
    manager.shutdown_kernel(now=True)


def run(client, code: str) -> tuple[str, str]:
    """Run a cell as a student does (kept in the history): (status or the error's message, what it printed)."""
    printed: list[str] = []

    def collect(message: dict) -> None:
        if message["msg_type"] == "stream":
            printed.append(message["content"]["text"])

    reply = client.execute_interactive(code, timeout=120, output_hook=collect)["content"]
    return reply["status"] if reply["status"] == "ok" else f"{reply['ename']}: {reply['evalue']}", "".join(printed)


def test_a_refused_route_fails_the_visible_test_by_its_line_until_the_answer_is_fixed(kernel):
    nb = nbformat.read(RELEASE, as_version=4)
    answer = next(i for i, cell in enumerate(nb.cells) if grade_id(cell) == "rnn_step")
    setup = [cell.source for cell in nb.cells[:answer]
             if cell.cell_type == "code" and nbgrader_meta(cell).get("locked")]
    test = split_hidden_block(next(cell.source for cell in nb.cells if grade_id(cell) == "test_rnn_step"))[0]
    assert test.startswith('assert_may_use("rnn_step",')
    for code in setup:
        assert run(kernel, code)[0] == "ok"

    assert run(kernel, ATTACK)[0] == "ok"
    rest = "\n".join(test.splitlines()[ast.parse(test).body[0].end_lineno:])
    assert run(kernel, rest)[0] == "ok"  # the attack: the rest of the visible test (refuse included) passes it
    failed, _ = run(kernel, test)
    attack_cell = len(setup) + 1  # In [n]: the attack is the cell run after the setup cells
    assert failed.startswith("AssertionError: rnn_step uses what this exercise's May-use line refuses"), failed
    assert (f"In [{attack_cell}], line 6: uses torch.ops.aten.rnn_tanh_cell (under torch.ops), which this "
            "exercise's allow-list refuses\n      return torch.ops.aten.rnn_tanh_cell(") in failed, failed
    assert "**May use:** public torch" in failed

    assert run(kernel, MODEL)[0] == "ok"  # fixed and run again: the flagged cell is history, not the answer
    status, printed = run(kernel, test)
    assert status == "ok" and "May-use" not in printed, (status, printed)

    # graded: the file scan decides (an instructor may clear it); the visible test prints, it does not fail
    assert run(kernel, BRIDGE_IMPORT)[0] == "ok"
    assert run(kernel, ATTACK)[0] == "ok"
    status, printed = run(kernel, test)
    assert status == "ok", status
    assert "uses torch.ops.aten.rnn_tanh_cell" in printed and "the grader's scan of your notebook decides" in printed
