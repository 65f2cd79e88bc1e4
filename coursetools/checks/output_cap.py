"""The cap on a graded cell's output where the output is made: in the student's kernel, before ZeroMQ.

A cell that printed 300 MB pushed all of it through the kernel's IOPub socket when the only cap was
the grader's (:mod:`coursetools.grading.output_cap`, which drops a cell's output past the limit as it
arrives): on a busy machine the grader could not drain it within nbclient's wait, and the student
lost the grade ("Timeout waiting for IOPub output"). Grading therefore installs this cap in the
kernel (:func:`install`, with the bridge, before the notebook's first cell), at the limit of
``CapOutputBytes.max_bytes``. Per cell (the request whose output it is: its parent message), it
counts what the cell prints and displays, in two places:

* **each write to stdout and stderr** (ipykernel's ``OutStream``, class-wide: prints from any thread,
  and what a subprocess or C code writes to the file descriptors, which ipykernel reads back
  through the same ``write``): once the cell has written ``max_bytes``, the write that crosses the
  cap is cut at the byte and every later one is counted and dropped before it is even buffered,
  so a loop of two million prints costs its prints and no more;
* **each message the kernel sends** (its ``Session.send``): printed text, displays and the cell's
  result (:func:`counted`), together, as the grader counts them; past ``max_bytes`` a message is
  dropped (printed text cut at the byte) before it is serialised.

Where the cut is, the kernel sends one note, "output cut at N bytes" (a display whose metadata
holds :data:`NOTE_KEY`), and when the cell ends (its ``idle`` status) it updates that note with the
bytes that were not sent. The grader reads the notes back (``output cut``, with the score the tests
gave). Errors are never counted nor dropped: an error is what fails a test. A notebook can undo
this cap (it runs in its own kernel); the grader's cap stays as the second wall.
"""

from __future__ import annotations

import json
import threading
import uuid
from typing import Any

NOTE_KEY = "course_output_cut"  # in a note's metadata: the bytes of output not kept at that point
DROPPED_KEY = "course_output_dropped_while_running"  # and how many of them were dropped as they came
# What notebook front ends display; output of other types is a protocol's, not a student's print.
DISPLAYED = ("text/", "image/", "application/json", "application/javascript", "application/pdf",
             "application/vnd.")
OUTPUT_MESSAGES = ("stream", "display_data", "update_display_data", "execute_result")


def note_text(cut: int, max_bytes: int) -> str:
    """What a note says: where the cut is, and the bytes not kept (``cut``)."""
    return (f"[output cut at {max_bytes:,} bytes: this cell's output passed the {max_bytes:,} bytes a cell keeps "
            f"when graded; {cut:,} bytes of it are not kept]")


def note_content(cut: int, max_bytes: int) -> dict[str, Any]:
    """The data and metadata of a note (a ``display_data`` output)."""
    return {"data": {"text/plain": note_text(cut, max_bytes)}, "metadata": {NOTE_KEY: cut, DROPPED_KEY: cut}}


def text_bytes(value: Any) -> int:
    """The bytes an output's text or data takes: UTF-8 for text, JSON for anything else."""
    if isinstance(value, list):
        return sum(text_bytes(item) for item in value)
    if isinstance(value, str):
        return len(value) if value.isascii() else len(value.encode("utf-8", errors="replace"))
    return len(json.dumps(value, default=str))


def head(text: str, size: int) -> str:
    """The first ``size`` bytes of ``text`` (UTF-8), without a broken character."""
    if text.isascii():
        return text[:max(size, 0)]
    return text.encode("utf-8", errors="replace")[:max(size, 0)].decode("utf-8", errors="ignore")


def counted(msg_type: str, content: dict) -> bool:
    """Whether a message is output a cell shows (a print, a display, its result), which the cap counts."""
    if msg_type == "stream":
        return True
    return msg_type in OUTPUT_MESSAGES and all(mime.startswith(DISPLAYED) for mime in content.get("data", {}))


def content_bytes(content: dict) -> int:
    """The bytes of an output message's content, as the cap counts them."""
    return text_bytes(content.get("text", content.get("data", "")))


class _Cell:
    """What one cell (one parent message) has written, sent and dropped, and its note's display id."""

    __slots__ = ("written", "sent", "dropped", "note")

    def __init__(self) -> None:
        self.written = self.sent = self.dropped = 0
        self.note: str | None = None


class KernelOutputCap:
    """The cap of one kernel (see the module's text): ``write`` stands for ``OutStream.write`` and
    ``send`` for the kernel session's ``send``; ``original_send`` is the session's own."""

    def __init__(self, max_bytes: int, original_send: Any, iopub: Any) -> None:
        self.max_bytes = max_bytes
        self._send, self._iopub = original_send, iopub
        self._cells: dict[str, _Cell] = {}
        self._lock = threading.Lock()

    def write(self, original_write: Any, stream: Any, text: Any) -> int | None:
        """``stream.write(text)``, cut at the cell's cap (printed text counts at ``write`` first)."""
        if not isinstance(text, str) or not text:
            return original_write(stream, text)
        parent = stream.parent_header
        size = text_bytes(text)
        with self._lock:
            cell = self._cell(parent.get("msg_id", ""))
            room = self.max_bytes - cell.written
            passed = text if size <= room else head(text, room)
            cell.written += size if size <= room else max(room, 0)
            cell.dropped += size - text_bytes(passed)
            first_cut = size > room and cell.note is None
            if first_cut:
                cell.note = uuid.uuid4().hex
        if passed:
            original_write(stream, passed)
        if first_cut:
            stream.flush()  # what was kept goes before the note
            self._send_note("display_data", parent, cell)
        return len(text)

    def send(self, stream: Any, msg_or_type: Any, content: dict | None = None, parent: dict | None = None,
             *args: Any, **kwargs: Any) -> Any:
        """The session's ``send``, dropping a cell's output past the cap and updating its note when it ends."""
        if isinstance(msg_or_type, dict):
            msg_type, content, header = msg_or_type["msg_type"], msg_or_type["content"], msg_or_type["parent_header"]
        else:
            msg_type, header = msg_or_type, _header(parent)
        if msg_type == "status" and (content or {}).get("execution_state") == "idle":
            with self._lock:
                cell = self._cells.pop(header.get("msg_id", ""), None)
            if cell is not None and cell.note is not None:
                self._send_note("update_display_data", header, cell)
        elif counted(msg_type, content or {}):
            kept, cut_cell = self._kept(msg_type, content or {}, header)
            sent = msg_or_type
            if kept is not None:
                sent = self._send(stream, _with_content(msg_or_type, kept), kept, parent, *args, **kwargs)
            if cut_cell is not None:
                self._send_note("display_data", header, cut_cell)
            return sent
        return self._send(stream, msg_or_type, content, parent, *args, **kwargs)

    def _kept(self, msg_type: str, content: dict, header: dict) -> tuple[dict | None, _Cell | None]:
        """The content to send (``content``, or printed text cut at the cap; None: drop the message), and
        the cell when this is its first cut (its note is to be sent)."""
        size = content_bytes(content)
        with self._lock:
            cell = self._cell(header.get("msg_id", ""))
            room = self.max_bytes - cell.sent
            if size <= room:
                cell.sent += size
                return content, None
            kept = {**content, "text": head(content["text"], room)} if msg_type == "stream" and room > 0 else None
            cell.sent = self.max_bytes
            cell.dropped += size - (content_bytes(kept) if kept else 0)
            first_cut = cell.note is None
            if first_cut:
                cell.note = uuid.uuid4().hex
        return kept, cell if first_cut else None

    def _send_note(self, msg_type: str, header: dict, cell: _Cell) -> None:
        content = {**note_content(cell.dropped, self.max_bytes), "transient": {"display_id": cell.note}}
        self._send(self._iopub, msg_type, content, parent=header)

    def _cell(self, parent_id: str) -> _Cell:
        return self._cells.setdefault(parent_id, _Cell())


def _header(parent: Any) -> dict:
    """The parent header of a message sent with ``parent`` (a message, a header or None), as the session makes it."""
    if not parent:
        return {}
    return parent.get("header", parent) if isinstance(parent, dict) else {}


def _with_content(msg: Any, content: dict) -> Any:
    return {**msg, "content": content} if isinstance(msg, dict) else msg


def install(max_bytes: int) -> KernelOutputCap:
    """Cap every cell's output in this kernel at ``max_bytes`` (grading runs this before the first cell)."""
    from ipykernel.iostream import OutStream
    from IPython import get_ipython

    kernel = get_ipython().kernel
    cap = KernelOutputCap(max_bytes, kernel.session.send, kernel.iopub_socket)
    original_write = OutStream.write

    def write(stream: Any, text: Any) -> int | None:
        return cap.write(original_write, stream, text)

    OutStream.write = write
    kernel.session.send = cap.send
    return cap
