"""The cap on each graded cell's output in bytes, and the message of a cell stopped at the time
limit, without a kernel: the rules on made-up outputs and kernel messages (the kernel's cap, the
grader's), and their place in ``nbgrader_config.py``. One slow test grades floods through the real
pipeline beside busy processes; ``test_hostile_submissions.py`` grades a student who prints 20 MB
and one who loops.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest
import zmq
import zmq.asyncio
from nbformat.v4 import new_code_cell, new_notebook, new_output
from nbgrader.converters.autograde import Autograde
from nbgrader.preprocessors import Execute, LimitOutput, SaveAutoGrades
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader
from traitlets.utils.importstring import import_item

from coursetools.checker.clock import WALL_FACTOR
from coursetools.checks.output_cap import KernelOutputCap, note_content
from coursetools.common.layout import REPO_ROOT
from coursetools.grading.checked_execute import CheckedExecute
from coursetools.grading.kernel_client import GradingKernelClient
from coursetools.grading.nbgrader_plugins import WALL_STOP, ExplainTimeouts, timeout_message
from coursetools.grading.outcomes import OUTPUT_CUT, TAMPERED, autograde_status
from coursetools.grading.output_cap import (
    DROPPED_KEY,
    NOTE_KEY,
    CapOutputBytes,
    CappedIOPubChannel,
    cap_outputs,
    noted_bytes,
    output_bytes,
    output_cut,
)

MB = 2**20
LINE = "x" * (MB - 1) + "\n"


def flooded_cell():
    """An answer cell that printed 20 MB in 1 MB lines, then failed a test."""
    streams = [new_output("stream", name="stdout", text=LINE) for _ in range(20)]
    error = new_output("error", ename="AssertionError", evalue="add(1, 1) should be 2",
                       traceback=["Traceback", "  line 1", "AssertionError: add(1, 1) should be 2"])
    return new_code_cell("for _ in range(20): print('x' * (2**20 - 1))", outputs=[*streams, error],
                         metadata={"nbgrader": {"grade_id": "add"}})


def test_a_cell_keeps_its_first_bytes_and_says_where_the_cut_is():
    cell = flooded_cell()
    kept, cut = cap_outputs(cell.outputs, 300_000)
    stream, note, error = kept
    assert stream.output_type == "stream" and output_bytes(stream) == 300_000
    assert note.output_type == "display_data" and "output cut at 300,000 bytes" in note.data["text/plain"]
    assert noted_bytes(note) == cut == 20 * MB - 300_000
    assert f"{cut:,} bytes of it are not kept" in note.data["text/plain"] and "300,000 bytes" in note.data["text/plain"]
    # the error decides the score: it is kept, with its message
    assert error.ename == "AssertionError" and error.evalue == "add(1, 1) should be 2"
    assert sum(output_bytes(o) for o in kept) < 300_000 + 1_000


def test_a_huge_error_is_kept_shortened_and_small_output_untouched():
    huge = new_output("error", ename="AssertionError", evalue="y" * MB, traceback=["z" * 100] * 10_000)
    (error, note), cut = cap_outputs([huge], 300_000)
    assert error.ename == "AssertionError" and error.evalue.startswith("y") and output_bytes(error) <= 300_000
    assert noted_bytes(note) == cut > 0
    small = [new_output("stream", name="stdout", text="hello\n"), new_output("display_data", data={"text/plain": "1"})]
    assert cap_outputs(small, 300_000) == (small, 0)


def test_the_preprocessor_caps_each_cell_at_the_configured_limit():
    nb = new_notebook(cells=[flooded_cell(), flooded_cell()])
    config = Config()
    config.CapOutputBytes.max_bytes = 50_000
    nb, _ = CapOutputBytes(config=config).preprocess(nb, {})
    for cell in nb.cells:
        assert sum(output_bytes(o) for o in cell.outputs) < 50_000 + 1_000
        assert [noted_bytes(o) for o in cell.outputs if noted_bytes(o)] == [20 * MB - 50_000]


def test_a_cut_flags_the_student_and_says_how_much():
    nb = new_notebook(cells=[flooded_cell()])
    nb, _ = CapOutputBytes().preprocess(nb, {})
    cut = output_cut(nb)
    assert cut == [f"add: {20 * MB - 300_000:,} bytes of output not kept (more than a cell keeps: "
                   "CapOutputBytes.max_bytes)"]
    assert autograde_status(0, "", [], [], "", [], cut) == (OUTPUT_CUT, cut)
    assert autograde_status(0, "", ["edited locked cell test_add"], [], "", [], cut)[0] == TAMPERED
    assert output_cut(new_notebook(cells=[new_code_cell("1")])) == []


def message(kind: str, parent: str, **content) -> dict:
    return {"msg_type": kind, "header": {"msg_type": kind, "msg_id": f"{kind}-{parent}"},
            "parent_header": {"msg_id": parent}, "metadata": {}, "content": content, "buffers": []}


class FakeIOPub(CappedIOPubChannel):
    """The capped channel reading from a list instead of a socket."""

    def __init__(self, messages: list[dict], max_bytes: int) -> None:
        socket = zmq.asyncio.Context.instance().socket(zmq.SUB)  # the channel checks its type
        super().__init__(socket, None)
        socket.close(linger=0)
        self.messages, self.max_bytes = list(messages), max_bytes
        channel = self

        class Socket:
            async def poll(self, timeout=None) -> bool:
                return bool(channel.messages)

        self.socket = Socket()

    async def _recv(self, **kwargs) -> dict:
        return self.messages.pop(0)

    def received(self) -> list[dict]:
        async def drain() -> list[dict]:
            return [await self.get_msg() for _ in iter(lambda: bool(self.messages or self._held), False)]
        return asyncio.run(drain())


def test_while_a_cell_runs_its_output_past_the_limit_is_dropped_as_it_arrives():
    """nbclient holds a cell's outputs until it ends: the grader held all 20 MB."""
    floods = [message("stream", "cell-1", name="stdout", text=LINE) for _ in range(20)]
    reply = message("display_data", "request-2", data={"application/x-course-protocol": "r" * MB}, metadata={})
    idle = message("status", "cell-1", execution_state="idle")
    got = FakeIOPub([*floods, reply, idle], 300_000).received()
    assert [m for m in got if m["msg_type"] == "stream"] == floods[:1], "past the limit, prints are dropped"
    assert reply in got, "a message of a protocol's MIME type (not a display) passes uncounted"
    note, last = got[-2:]
    assert note["msg_type"] == "display_data" and last == idle, "the note comes just before the cell ends"
    assert note["content"]["metadata"][NOTE_KEY] == note["content"]["metadata"][DROPPED_KEY] == 19 * MB


def test_a_caller_with_a_timeout_gets_a_message_even_when_it_was_dropped():
    """jupyter_client's execute_interactive polls, then asks with timeout 0: a dropped message
    must not become ``queue.Empty``."""
    first, second = (message("stream", "cell-1", name="stdout", text=LINE) for _ in range(2))
    channel = FakeIOPub([first, second], 1000)
    assert asyncio.run(channel.get_msg(timeout=0)) == first
    emptied = asyncio.run(channel.get_msg(timeout=0))
    assert emptied["msg_type"] == "stream" and emptied["content"]["text"] == ""


def test_the_kernels_note_is_updated_once_past_the_grader_and_a_forged_update_is_counted():
    """The kernel's cap sends its note where the cut is and updates it (the bytes not sent) as the cell
    ends, when the cell has used its bytes: the update passes the grader's cap, once, if it is a note's."""
    kept = message("stream", "cell-1", name="stdout", text="x" * 1000)
    note = message("display_data", "cell-1", **note_content(5, 1000), transient={"display_id": "n1"})
    update = message("update_display_data", "cell-1", **note_content(9000, 1000), transient={"display_id": "n1"})
    forged = message("update_display_data", "cell-1", data={"text/plain": "f" * MB}, metadata={NOTE_KEY: 1},
                     transient={"display_id": "n1"})
    idle = message("status", "cell-1", execution_state="idle")
    got = FakeIOPub([kept, note, update, forged, idle], 1000).received()
    assert [m["msg_type"] for m in got[:3]] == ["stream", "display_data", "update_display_data"]
    assert got[2]["content"]["metadata"][NOTE_KEY] == 9000
    assert forged not in got, "a second update of the note is output like any other, dropped past the cap"


class FakeStream:
    """What the kernel's cap uses of ipykernel's ``OutStream``: its parent header and ``flush``."""

    def __init__(self, parent: str, log: list) -> None:
        self.parent_header, self.log = {"msg_id": parent}, log

    def flush(self) -> None:
        self.log.append(("flush",))


def kernel_cap(max_bytes: int) -> tuple[KernelOutputCap, list]:
    """A kernel's cap whose original ``write`` and ``send`` record what passes, in order."""
    log: list = []

    def send(stream, msg_or_type, content=None, parent=None, *args, **kwargs):
        msg_type = msg_or_type["msg_type"] if isinstance(msg_or_type, dict) else msg_or_type
        log.append(("send", msg_type, msg_or_type["content"] if isinstance(msg_or_type, dict) else content))
        return msg_or_type

    return KernelOutputCap(max_bytes, send, "iopub"), log


def write_original(stream, text):
    stream.log.append(("write", text))
    return len(text)


def test_in_the_kernel_prints_past_the_cap_are_dropped_before_they_are_buffered():
    """Issue 51: the 300 MB went through the kernel's socket, and a busy grader lost the grade."""
    cap, log = kernel_cap(1000)
    stream = FakeStream("cell-1", log)
    for _ in range(30):
        assert cap.write(write_original, stream, "y" * 99 + "\n") == 100
    writes = [entry[1] for entry in log if entry[0] == "write"]
    assert "".join(writes) == ("y" * 99 + "\n") * 10, "exactly the cap, cut at the byte"
    cut_at = log.index(("flush",))
    assert cut_at == len(writes) and log[cut_at + 1][:2] == ("send", "display_data"), \
        "the kept text is flushed, then the note goes where the cut is"
    note = log[cut_at + 1][2]
    assert "output cut at 1,000 bytes" in note["data"]["text/plain"] and note["metadata"][NOTE_KEY] == 100
    cap.send("iopub", "status", {"execution_state": "idle"}, parent={"header": {"msg_id": "cell-1"}})
    (_, kind, update), (_, last, _) = log[-2:]
    assert (kind, last) == ("update_display_data", "status"), "the note says the total just before the cell ends"
    assert update["metadata"][NOTE_KEY] == update["metadata"][DROPPED_KEY] == 20 * 100
    assert update["transient"] == note["transient"], "the same note, updated"
    assert cap.write(write_original, stream, "next\n") == 5 and log[-1] == ("write", "next\n"), "a new cell, a new cap"


def test_in_the_kernel_displays_and_prints_share_the_cap_and_errors_pass():
    cap, log = kernel_cap(1000)
    header = {"msg_id": "cell-2"}
    shown = {"msg_type": "display_data", "parent_header": header,
             "content": {"data": {"text/plain": "d" * 600}, "metadata": {}, "transient": {}}}
    cap.send("iopub", shown)
    cap.send("iopub", "stream", {"name": "stdout", "text": "s" * 600}, parent=header)
    cap.send("iopub", shown)
    cap.send("iopub", "error", {"ename": "AssertionError", "evalue": "e" * 5000, "traceback": []}, parent=header)
    protocol = {"data": {"application/x-course-protocol": "p" * 5000}, "metadata": {}}
    cap.send("iopub", "display_data", protocol, parent=header)
    kinds = [(entry[1], entry[2].get("text", "")) for entry in log]
    assert [kind for kind, _ in kinds] == ["display_data", "stream", "display_data", "error", "display_data"]
    assert len(kinds[1][1]) == 1000 - len(json.dumps({"text/plain": "d" * 600})), "the print is cut at the byte"
    assert NOTE_KEY in log[2][2]["metadata"], "the second display is dropped, the note stands for it"
    assert log[3][2]["evalue"] == "e" * 5000 and log[4][2] == protocol, "errors and protocols are never cut"


def test_the_configuration_caps_during_and_after_execution():
    config = PyFileConfigLoader("nbgrader_config.py", path=str(REPO_ROOT)).load_config()
    assert import_item(config.ConfinedKernelManager.client_factory) is GradingKernelClient
    preprocessors = [import_item(p) if isinstance(p, str) else p for p in config.Autograde.autograde_preprocessors]
    order = [preprocessors.index(p) for p in (LimitOutput, ExplainTimeouts, CapOutputBytes, SaveAutoGrades)]
    assert order == sorted(order), "the cap runs after nbgrader's line limit and before the scores are saved"
    nbgraders = Autograde.class_traits()["autograde_preprocessors"].default()
    assert [p for p in preprocessors if p not in (ExplainTimeouts, CapOutputBytes)] == \
        [CheckedExecute if p is Execute else p for p in nbgraders], "nbgrader's steps, Execute replaced"
    assert 100_000 <= config.CapOutputBytes.max_bytes <= 1_000_000


def test_loading_the_configuration_imports_no_part_of_the_grading_pipeline():
    """Issue 51: `make report` loads nbgrader_config.py for the course's folders, and its imports of the
    course's classes brought torch, transformer_lib and matplotlib with them."""
    probe = ("import sys, json; from traitlets.config.loader import PyFileConfigLoader; "
             f"PyFileConfigLoader('nbgrader_config.py', path={str(REPO_ROOT)!r}).load_config(); "
             "print(json.dumps(sorted(sys.modules)))")
    loaded = {name.split(".")[0] for name in json.loads(subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout)}
    assert not loaded & {"torch", "transformer_lib", "matplotlib", "coursetools"}, sorted(loaded)


@pytest.mark.parametrize("seconds", [20, 30])
@pytest.mark.parametrize("asleep", [False, True])
def test_a_cell_stopped_at_the_limit_says_the_limit_and_what_to_do(seconds, asleep):
    """Issue 34: the feedback said only ``KeyboardInterrupt`` / ``CellTimeoutError``. Issue 51: the limit
    is CPU time; a cell stopped at the wall-clock guard (grading writes WALL_STOP) says it waited."""
    cell = new_code_cell("while True: pass", outputs=[
        new_output("error", ename="KeyboardInterrupt", evalue="", traceback=["KeyboardInterrupt: "]),
        new_output("error", ename="CellTimeoutError", evalue=WALL_STOP if asleep else "",
                   traceback=["\x1b[0;31mCellTimeoutError\x1b[0m: No reply from kernel before timeout"])])
    config = Config()
    config.ExecutePreprocessor.timeout = seconds
    nb, _ = ExplainTimeouts(config=config).preprocess(new_notebook(cells=[cell]), {})
    interrupt, timeout = nb.cells[0].outputs
    assert interrupt.ename == "KeyboardInterrupt", "kept: outcomes.cells_stopped_at_limit reads it"
    assert timeout.evalue == timeout_message(seconds, asleep)
    assert timeout.traceback == [f"CellTimeoutError: {timeout.evalue}"]
    if asleep:
        assert f"took more than {seconds * WALL_FACTOR} s (more on a busy machine), most of it waiting" \
            in timeout.evalue
    else:
        assert f"more than the {seconds} s of CPU time each cell may take" in timeout.evalue
        assert "%%time" in timeout.evalue


@pytest.mark.slow
@pytest.mark.deep  # about 80 s with both cores busy: make test-deep
@pytest.mark.busy_machine
def test_floods_are_cut_with_every_point_beside_four_busy_processes_per_core(tmp_path):
    """Issue 42: a notebook printing 300 MB came out `timed out` (nbclient's IOPub wait) on 1 of 4 regrades
    on a busy machine. Issue 51: beside busy loops it lost its grade 3 times in 4, and a notebook printing
    two million lines was `cell timed out`. Four students print 300 MB, one two million lines, one 300 MB
    from a thread, one 300 MB of displays, all graded beside four busy processes per core: every one
    `output cut`, with every point; then each one's feedback page is under 5 MB. One more undoes the
    kernel's cap before flooding through displays: the grader's cap, the second wall, cuts it (the
    scan flags it `tampered`: it names get_ipython). (The assignment is the tests' tiny one: one answer,
    one test cell with a hidden block, so that the run stays short.)"""
    import copy
    import os

    import nbformat

    from coursetools.common.cells import graded_cells
    from coursetools.grading import autograde
    from coursetools.grading.gradebook import gradebook_scores

    from course_helpers import FLOODS, TINY_SOURCE, CourseCopy, answered, busy_processes, cells_of, require_sandbox

    require_sandbox()
    course_copy = CourseCopy.create(tmp_path, "tiny", TINY_SOURCE)
    course = course_copy.course
    release = autograde.prepare(course, "tiny")
    floods = {**{f"print_300_mb_{n}": FLOODS["print_300_mb"] for n in range(4)},  # ten: 88 s in CI
              **{name: FLOODS[name] for name in ("print_2m_lines", "thread_300_mb", "display_300_mb")}}
    solution = answered(release, nbformat.read(course_copy.source, as_version=4))
    undone = "del get_ipython().kernel.session.send  # the kernel's cap, undone\n" + FLOODS["display_300_mb"]
    for student, flood in {**floods, "undoes_the_kernel_cap": undone}.items():
        nb = copy.deepcopy(solution)
        answer = cells_of(nb, "solution")[0]
        answer.source = flood + answer.source
        course_copy.submit(student, nb)
    full = sum(cell.points for cell in graded_cells(release) if cell.automatic)
    with busy_processes(4 * (os.cpu_count() or 1)):
        outcomes = autograde.grade(course, "tiny", jobs=2, progress=lambda _: None)
    pages, withheld = autograde.feedback(course, "tiny")
    runs = {student: (outcome.status, sum(v or 0 for v in gradebook_scores(course, "tiny", student).values()))
            for student, outcome in outcomes.items()}
    assert runs == {**dict.fromkeys(floods, (OUTPUT_CUT, full)), "undoes_the_kernel_cap": (TAMPERED, full)}, runs
    sizes = {page.parent.parent.name: page.stat().st_size for page in pages}
    assert set(sizes) == {*floods, "undoes_the_kernel_cap"} and not withheld
    assert max(sizes.values()) < 5 * MB, sizes
    assert any("bytes of output not kept" in detail for detail in outcomes["undoes_the_kernel_cap"].details)
