"""A cap, in bytes, on the output each cell of a graded notebook keeps.

nbgrader's ``LimitOutput`` counts lines, not bytes: an answer cell that printed 300 MB in 1 MB
lines kept 199 MB in the autograded notebook and in the feedback page. One limit,
``CapOutputBytes.max_bytes`` in ``nbgrader_config.py`` (:data:`DEFAULT_MAX_BYTES` by default),
applied three times:

* **in the kernel, where the output is made**, by :mod:`coursetools.checks.output_cap`, which grading
  installs before the notebook's first cell (:mod:`coursetools.grading.checked_execute`): past the
  limit a cell's prints and displays are dropped before they reach ZeroMQ, and a note says where
  the cut is and, once the cell ends, how many bytes were not sent. A flood then costs the grader
  nothing: 300 MB pushed through the kernel's socket had made the grader miss nbclient's wait on a
  busy machine, and the student lose the grade;
* **as the output arrives**, by :class:`CappedIOPubChannel`, the IOPub channel of the kernel client
  nbclient gets from the kernel manager (:mod:`coursetools.grading.kernel_client`): the second wall, against a
  notebook that undid the kernel's cap (it runs in the student's kernel). nbclient keeps every
  output message of a cell in memory until the cell ends, so the channel passes a cell's printed and
  displayed output on until it has passed the limit, then drops the rest as it arrives; when the
  cell ends it says how many bytes it dropped in a note (:func:`note`) that nbclient adds to the
  cell's outputs. The grader then holds at most the limit plus one message per cell. One message
  is not cut: ipykernel sends what a cell printed within 0.2 s as one message, so a tight loop's
  prints can arrive as one, bounded only by the kernel's memory limit (``Limits.memory_bytes``:
  4 GiB). Messages whose MIME type no notebook front end shows
  (the course's own protocols) are passed on uncounted: the stored cap below still applies to
  anything they put in a cell; so is the one update of the kernel's note (its count of bytes not sent);
* **once the notebook has run**, by :class:`CapOutputBytes`, an autograde preprocessor listed
  after nbgrader's ``LimitOutput``: each code cell keeps its outputs in order up to the limit,
  the output that crosses it is cut (text at the byte) and one note stands where the cut is,
  saying how many bytes were not kept (the kernel's and the client's notes folded into it).
  Errors are always kept, shortened if need be: an error is what fails a test, so dropping one
  would turn a failure into full marks.

:func:`output_cut` reads the notes back from an autograded notebook (the details of the status ``output
cut``, :mod:`coursetools.grading.outcomes`).
"""

from __future__ import annotations

import time
from typing import Any

from jupyter_client.channels import AsyncZMQSocketChannel
from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from nbformat.v4 import new_output
from traitlets import Bool, Int

from coursetools.checks.output_cap import DROPPED_KEY, NOTE_KEY, content_bytes, counted, head, note_text, text_bytes

DEFAULT_MAX_BYTES = 300_000
ERROR_ROOM = 4_000  # bytes an error keeps, at least, after the limit was reached
NOTE_BYTES = 1_000  # a note is shorter: its update passes uncounted only then (forged notes pass little)


def note(cut: int, max_bytes: int, dropped: int = 0) -> NotebookNode:
    """The output that says ``cut`` bytes of a cell's output were not kept at this point (``dropped``
    of them as they arrived)."""
    return new_output("display_data", data={"text/plain": note_text(cut, max_bytes)},
                      metadata={NOTE_KEY: cut, DROPPED_KEY: dropped})


def noted_bytes(output: dict, key: str = NOTE_KEY) -> int | None:
    """The bytes a note says were not kept (``DROPPED_KEY``: dropped as they arrived); None for an
    output that is not a note."""
    cut = output.get("metadata", {}).get(key) if output.get("output_type") == "display_data" else None
    return cut if isinstance(cut, int) and not isinstance(cut, bool) and cut >= 0 else None


def output_bytes(output: dict) -> int:
    """The bytes an output's content takes (its text, data or error), as kept in the notebook."""
    if output.get("output_type") == "stream":
        return text_bytes(output.get("text", ""))
    if output.get("output_type") == "error":
        return text_bytes([output.get("ename", ""), output.get("evalue", ""), output.get("traceback", [])])
    return text_bytes(list(output.get("data", {}).values()))


def _shortened_error(output: NotebookNode, room: int) -> NotebookNode:
    """An error output within ``room`` bytes: its name, its message's head, its traceback's last lines."""
    half = max(room - text_bytes(output.ename), 0) // 2
    output.evalue = head(output.get("evalue", ""), half)
    kept, used = [], 0
    for line in reversed(output.get("traceback", [])):
        used += text_bytes(line)
        if used > half:
            break
        kept.append(line)
    output.traceback = kept[::-1]
    return output


def cap_outputs(outputs: list[NotebookNode], max_bytes: int) -> tuple[list[NotebookNode], int]:
    """A cell's outputs within ``max_bytes`` (and one note where the cut is), and the bytes not kept.

    Notes already there (the kernel client's) are folded into the one note; errors are kept.
    """
    kept: list[NotebookNode] = []
    used = cut = dropped = 0
    at: int | None = None  # where the note goes
    for output in outputs:
        noted = noted_bytes(output)
        if noted is not None:
            cut += noted
            dropped += noted_bytes(output, DROPPED_KEY) or 0
            at = len(kept) if at is None else at
            continue
        size, room = output_bytes(output), max_bytes - used
        if size <= room:
            kept.append(output)
            used += size
            continue
        if output.output_type == "error":
            kept.append(_shortened_error(output, max(room, ERROR_ROOM)))
            cut += max(size - output_bytes(kept[-1]), 0)
        elif output.output_type == "stream" and room > 0:
            output.text = head(output.text, room)
            kept.append(output)
            cut += size - output_bytes(output)
        else:
            cut += size
        used = max_bytes
        at = len(kept) if at is None else at
    if cut:
        kept.insert(at, note(cut, max_bytes, dropped))
    return kept, cut


class CapOutputBytes(Preprocessor):
    """Keep at most ``max_bytes`` of each code cell's output (autograde, after execution)."""

    enabled = Bool(True, help="Run whenever it is listed (nbconvert's default is off)").tag(config=True)
    max_bytes = Int(DEFAULT_MAX_BYTES, help="bytes of output each cell keeps in the autograded notebook "
                                            "and the feedback (and the grader holds while it runs)").tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code":
            cell.outputs, _ = cap_outputs(cell.get("outputs", []), self.max_bytes)
        return cell, resources


def output_cut(autograded: NotebookNode) -> list[str]:
    """What the cap cut in the autograded notebook, a line per cell (the details of ``output cut``)."""
    return [f"{name}: {cut:,} bytes of output not kept (more than a cell keeps: CapOutputBytes.max_bytes)"
            for name, cut in cut_cells(autograded)]


def cut_cells(nb: NotebookNode) -> list[tuple[str, int]]:
    """(grade_id or "cell N", bytes not kept) of each code cell whose output was cut."""
    found = []
    for index, cell in enumerate(nb.cells):
        cut = sum(noted_bytes(output) or 0 for output in cell.get("outputs", [])) if cell.cell_type == "code" else 0
        if cut:
            found.append((cell.metadata.get("nbgrader", {}).get("grade_id") or f"cell {index + 1}", cut))
    return found


# --- while a cell runs ------------------------------------------------------------------------

class CappedIOPubChannel(AsyncZMQSocketChannel):
    """The IOPub channel, dropping a cell's output past ``max_bytes`` (see the module's text)."""

    max_bytes = DEFAULT_MAX_BYTES

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._used: dict[str, int] = {}  # parent msg_id -> bytes of output passed on
        self._dropped: dict[str, int] = {}  # parent msg_id -> bytes of output dropped
        self._held: list[dict] = []  # a status message held back behind the note that precedes it
        self._notes: dict[str, set[str]] = {}  # parent msg_id -> display ids of the kernel's notes passed on

    async def get_msg(self, timeout: float | None = None) -> dict[str, Any]:
        if self._held:
            return self._held.pop()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            msg = await super().get_msg(timeout=remaining)
            passed = self._pass(msg)
            if passed is not None:
                return passed
            if deadline is not None and not await self.socket.poll(int(max(0.0, deadline - time.monotonic()) * 1000)):
                return _emptied(msg)  # a caller that polled first must get a message

    def _pass(self, msg: dict) -> dict | None:
        """The message to hand on (a note before an idle status), or None to drop it."""
        parent, content = msg["parent_header"].get("msg_id", ""), msg["content"]
        display_id = (content.get("transient") or {}).get("display_id")
        if (msg["msg_type"] == "update_display_data" and display_id in self._notes.get(parent, ())
                and content_bytes(content) <= NOTE_BYTES):
            self._notes[parent].discard(display_id)  # the kernel's note, updated once, as its cell ends
            return msg
        if counted(msg["msg_type"], content):
            used = self._used.get(parent, 0)
            if used > self.max_bytes:
                self._dropped[parent] = self._dropped.get(parent, 0) + content_bytes(content)
                return None
            self._used[parent] = used + content_bytes(content)
            if display_id and NOTE_KEY in (content.get("metadata") or {}):
                self._notes.setdefault(parent, set()).add(display_id)
        elif msg["msg_type"] == "status" and content.get("execution_state") == "idle":
            self._used.pop(parent, None)
            self._notes.pop(parent, None)
            dropped = self._dropped.pop(parent, 0)
            if dropped:
                self._held.append(msg)
                return {**msg, "msg_type": "display_data", "header": {**msg["header"], "msg_type": "display_data"},
                        "content": {key: note(dropped, self.max_bytes, dropped)[key] for key in ("data", "metadata")}}
        return msg


def _emptied(msg: dict) -> dict:
    """An output message with its content emptied (what stands for a dropped one, when need be)."""
    emptied = {"text": ""} if msg["msg_type"] == "stream" else {"data": {}, "metadata": {}}
    return {**msg, "content": {**msg["content"], **emptied}}
