"""Where the instructions promise the instructor's version of an earlier function while a later exercise is
graded, a student whose earlier function is wrong, and whose later function calls it, earns the later points.

Each promise below is tried in one kernel with the instructor's source (hidden tests in the checker): the
model answers, except the earlier function (a plausible bug, which its own tests catch) and the later one
(written, as a student may, to call the earlier one by name).
"""

from __future__ import annotations

import pytest

from coursetools.authoring import sources
from coursetools.common.layout import REPO_ROOT
from coursetools.devtools.session import KernelSession, notebook_plan

pytestmark = pytest.mark.slow

STEP_WITHOUT_BIAS = '''
def rnn_step(x_t, h_prev, W_xh, W_hh, b_h, starts=None):
    if starts is not None:
        h_prev = h_prev.masked_fill(starts[:, None], 0.0)
    return torch.tanh(x_t @ W_xh + h_prev @ W_hh)  # the bias forgotten
'''
UNROLL_CALLING_THE_STEP = '''
def masked_rnn_unroll(xs, lengths, h0, W_xh, W_hh, b_h):
    state, states = h0, []
    for t in range(xs.shape[1]):
        reading = (t < lengths)[:, None]
        new_state = rnn_step(xs[:, t], state, W_xh, W_hh, b_h)
        state = torch.where(reading, new_state, state)
        states.append(torch.where(reading, new_state, torch.zeros_like(new_state)))
    return torch.stack(states, dim=1), state
'''
ERROR_NOT_RELATIVE = '''
def relative_output_error(reference, approximation, x):
    with torch.no_grad():
        return float((approximation(x, x, x)[0] - reference(x, x, x)[0]).norm())  # not divided by ||reference(x)||
'''
# assignment -> (earlier answer, its bug, later answer, the later one calling the earlier one; None: the model does)
PROMISES = {
    "ch02_rnn_bottleneck": ("rnn_step", STEP_WITHOUT_BIAS, "masked_rnn_unroll", UNROLL_CALLING_THE_STEP),
    "ch05_multi_head": ("relative_output_error", ERROR_NOT_RELATIVE, "pooling_sweep", None),
}


@pytest.mark.parametrize("assignment", sorted(PROMISES))
def test_a_wrong_earlier_function_costs_only_its_own_exercise(assignment: str):
    earlier, bug, later, calling = PROMISES[assignment]
    plan = notebook_plan(sources.read_text_source(sources.text_source(REPO_ROOT, assignment)))
    assert {earlier, later} <= {answer.grade_id for answer in plan}
    results: dict[str, list[str]] = {}
    with KernelSession(REPO_ROOT, timeout=60) as kernel:
        for answer in plan:
            kernel.reach(answer, {earlier: bug, later: calling or answer.source}.get(answer.grade_id, answer.source))
            results[answer.grade_id] = kernel.failing_tests(answer)
            if answer.grade_id == later:
                break
    assert results[earlier], f"the bug in {earlier} should fail its own tests"
    assert not results[later], f"{later} lost points for {earlier}'s bug: {results[later]}"
