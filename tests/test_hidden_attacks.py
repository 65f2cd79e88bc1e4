"""Hostile submissions that go after the hidden tests themselves, graded by the real pipeline.

Hidden tests run in a checker outside the student's kernel (``coursetools/checker/runner.py``); the
kernel only answers calls with plain data. Each submission below tries to read the hidden tests
(IPython's history, ``linecache``, ``inspect.stack()``, code objects found by ``gc``, callers'
frames and globals, files) or to fool them (references found in callers' frames, an object whose
``__eq__`` is always true, a Tensor subclass, a pickle payload as the reply, patched
comparisons), or to use the grader (a bridge that puts a link to a socket outside the box where
the grader's socket was). Each must earn nothing beyond its honest part, and nothing a student receives (the
feedback page) may hold a hidden line, plain or base64, hex or zlib-compressed. One more
notebook dumps everything its kernel can reach, during a hidden check and after the last one,
and the dump must hold no hidden line.
"""

from __future__ import annotations

import base64
import binascii
import copy
import hashlib
import os
import re
import socket
import sysconfig
import zlib
from pathlib import Path

import nbformat
import pytest

from coursetools.authoring.sources import assignments
from coursetools.checks.names import COMM_TARGET
from coursetools.cli import main
from coursetools.common.hidden import hidden_lines
from coursetools.common.layout import REPO_ROOT
from coursetools.grading.autograde import PEAK_MEMORY
from coursetools.grading.state import load_state

from course_helpers import CourseCopy, answered, cells_of, public_lines, require_sandbox

pytestmark = [pytest.mark.slow, pytest.mark.deep]
# make test-deep attacks ch04 (about three minutes of grading on one core); COURSE_ATTACK=all attacks every
# assignment (about a quarter of an hour on 2 cores), as before a term or after a change to the checker or the
# bridge; COURSE_ATTACK=ch01_tokens,ch02_seq2seq the ones named.
_CHOSEN = os.environ.get("COURSE_ATTACK", "ch04_self_attention")
ASSIGNMENTS = [a for a in assignments(REPO_ROOT) if _CHOSEN == "all" or a in _CHOSEN.split(",")]
PAYLOAD_MARK = Path("/tmp/course-hidden-attack-payload-ran")
GRADER_SOCKET = Path("/tmp/course-hidden-attack-grader.sock")  # a socket outside the box, on the grader's side

# Defined first in the first answer cell: `_called_by_tests()` is True when a hidden check (or a
# hidden test in the kernel, as before the checker) is the caller; `_each_text()` walks what it can reach.
PRELUDE = r'''
import base64 as _b64, gc as _gc, inspect as _inspect, linecache as _linecache, os as _os, sys as _sys, zlib as _zlib
_LOOT = []


def _called_by_tests():
    return any("bridge" in f.filename or "hidden" in f.filename for f in _inspect.stack()[2:]) or _In_len() > 0


def _In_len():
    # before the checker, hidden tests ran in the kernel: a cell with a hidden line ran in `In`
    return len([c for c in globals().get("_ih", []) if "BEGIN HIDDEN" in c or "_reference" in c])


def _each_text():
    """Every string this kernel can reach, one at a time (a list of them all runs out of memory)."""
    yield "\n".join(globals().get("In", []))
    yield "\n".join(globals().get("_ih", []))
    yield str(globals().get("Out", ""))
    for _, _, lines, _ in list(_linecache.cache.values()):
        if isinstance(lines, list):
            yield "".join(lines)
    for frame in _inspect.stack():
        yield "".join(frame.code_context or [])
        for v in list(frame.frame.f_locals.values()) + list(frame.frame.f_globals.values()):
            if isinstance(v, (str, list, tuple, dict)) and len(v) < 10_000:
                yield repr(v)
    for obj in _gc.get_objects():
        if isinstance(obj, type(_each_text.__code__)):
            yield from (c for c in obj.co_consts if isinstance(c, str))
        elif isinstance(obj, dict):
            yield from (v for v in list(obj.values()) if isinstance(v, str))
        elif isinstance(obj, (list, tuple)):
            yield from (v for v in list(obj) if isinstance(v, str))
    for top in (_os.getcwd(), "/tmp"):
        for root, _, files in _os.walk(top):
            for name in files:
                try:
                    with open(_os.path.join(root, name), encoding="utf-8", errors="ignore") as handle:
                        yield handle.read(2_000_000)
                except OSError:
                    pass
    yield from (f"{k}={v}" for k, v in _os.environ.items())


def _grab():
    if not _LOOT:  # once: a walk of everything takes a while
        _LOOT.extend(dict.fromkeys(t for t in _each_text() if len(t) < 1_000_000))


def _corrupt(value, tensor):
    """``value`` with each tensor replaced by ``tensor(it)`` and each float moved: a wrong answer;
    ``tensor`` of a zero when ``value`` holds no tensor (a tuple of strings, a count, scores)."""
    replaced = []

    def walk(v):
        if isinstance(v, (tuple, list)):
            return type(v)(walk(x) for x in v)
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if type(v).__name__ == "Tensor":
            replaced.append(v)
            return tensor(v)
        return v + 1.0 if isinstance(v, float) else v

    result = walk(value)
    return result if replaced else tensor(__import__("torch").zeros(()))


def _model_or_none(model, args, kwargs):
    """What the model answer returns, or None where it raises (an attack answers anyway)."""
    try:
        return model(*args, **kwargs)
    except Exception:
        return None


def _hijack(default):
    """A reference or expected value found in the callers' frames, else ``default``."""
    for frame in _inspect.stack()[2:]:
        names = {**frame.frame.f_globals, **frame.frame.f_locals}
        for name, value in names.items():
            if any(k in name for k in ("ref", "want", "expected")) and not name.startswith("__"):
                return value
    return default
'''

# Appended to the notebook: prints what it reached, compressed and base64 (to the feedback).
LAST_CELL = r'''
print("HISTORY", _b64.b64encode("\n".join(In).encode()).decode())
print("HEX", "\n".join(In).encode().hex())
_seen, _size, _parts = set(), 0, []
for _text in __import__("itertools").chain(_LOOT, _each_text()):  # one text at a time, not all in memory
    if _text not in _seen and _size < 20_000_000:
        _seen.add(_text)
        _parts.append(_text[:200_000])
        _size += len(_parts[-1])
print("LOOT", _b64.b64encode(_zlib.compress("\n".join(_parts).encode("utf-8", "ignore"))).decode())
'''

# Checks every string the kernel reached against the hashes of the hidden lines (filled in).
DUMP_CELL = r'''
import hashlib as _hashlib
import itertools as _itertools
_SECRET = set(%r)
_seen = set()
for _text in _itertools.chain(_LOOT, _each_text()):  # one text at a time: all of them at once ran out of memory
    for _line in str(_text).splitlines():
        _digest = _hashlib.sha256(_line.strip().encode()).hexdigest()
        if _digest in _SECRET:
            _seen.add(_digest)
print("HIDDEN LINES REACHED:", len(_seen), sorted(_seen))
'''


def wrap_answers(nb: nbformat.NotebookNode, body: str) -> nbformat.NotebookNode:
    """``nb`` with each answer cell's functions, and the ``forward`` of its classes, wrapped:
    ``body`` (code using ``_model``, the model function, ``args`` and ``kwargs``) runs instead of
    them; the prelude goes first."""
    import ast
    nb = copy.deepcopy(nb)
    answers = cells_of(nb, "solution")
    answers[0].source = PRELUDE + "\n" + answers[0].source
    indented = "".join(f"    {line}\n" for line in body.splitlines())
    for cell in answers:
        tree = ast.parse(cell.source).body
        for node in tree:
            if not isinstance(node, (ast.FunctionDef, ast.ClassDef)) or node.name.startswith("_"):
                continue
            if isinstance(node, ast.FunctionDef):
                cell.source += (f"\n\n_model_{node.name} = {node.name}\n\ndef {node.name}(*args, **kwargs):\n"
                                f"    _model = _model_{node.name}\n" + indented)
            elif any(isinstance(n, ast.FunctionDef) and n.name == "forward" for n in node.body):
                name = node.name
                cell.source += (f"\n\n_model_{name}_forward = {name}.forward\n\n"
                                f"def _{name}_forward(self, *args, **kwargs):\n"
                                f"    _model = lambda *a, **k: _model_{name}_forward(self, *a, **k)\n" + indented
                                + f"\n\n{name}.forward = _{name}_forward\n")
    return nb


def first(nb: nbformat.NotebookNode, source: str) -> nbformat.NotebookNode:
    """``nb`` with ``source`` run in its first answer cell, after the prelude."""
    nb = copy.deepcopy(nb)
    cell = cells_of(nb, "solution")[0]
    cell.source = cell.source.replace(PRELUDE, PRELUDE + source, 1)
    return nb


def last(nb: nbformat.NotebookNode, source: str) -> nbformat.NotebookNode:
    """``nb`` with ``source`` run at the end of its last answer code cell."""
    nb = copy.deepcopy(nb)
    cell = [c for c in cells_of(nb, "solution") if c.cell_type == "code"][-1]
    cell.source += "\n" + source
    return nb


def appended(nb: nbformat.NotebookNode, source: str) -> nbformat.NotebookNode:
    nb = copy.deepcopy(nb)
    nb.cells.append(nbformat.v4.new_code_cell(source))
    return nb


EVIL_CLASSES = r'''
import torch as _torch


class _AlwaysEqual:
    def __eq__(self, other):
        return True
    __hash__ = object.__hash__
    shape = property(lambda self: ())


class _Liar(_torch.Tensor):
    def __eq__(self, other):
        return _torch.ones_like(other, dtype=_torch.bool) if isinstance(other, _torch.Tensor) else True


class _Payload:
    def __reduce__(self):
        return (_os.system, ("touch %s",))
''' % PAYLOAD_MARK

PATCH_COMPARISONS = r'''
import numpy as _np, torch as _torch
_torch.allclose = lambda *a, **k: True
_torch.equal = lambda *a, **k: True
_torch.testing.assert_close = lambda *a, **k: None
_np.allclose = lambda *a, **k: True
_torch.Tensor.__eq__ = lambda self, other: _torch.ones((), dtype=_torch.bool)
'''

PICKLE_REPLY = r'''
import pickle as _pickle
import coursetools.checks.bridge as _bridge


def _answer(text):  # a pickle where the checker reads torch.save bytes
    return "torch:" + _b64.b64encode(_pickle.dumps(_Payload())).decode()


vars(_bridge)["answer"] = _answer  # the bridge is guarded: its dict, not its attribute
'''

# The bridge replaced by one that puts, where the grader's socket was, a link to a socket outside
# the box: a grader that connected where the kernel points (the grader runs unconfined) would
# connect there for the notebook. The grader only listens.
REDIRECT_CHECKER = r'''
import coursetools.checks.bridge as _bridge


def _serve(data):
    _path = data["serve"].partition("://")[2]
    if _os.path.lexists(_path):
        _os.remove(_path)
    _os.symlink("%s", _path)


vars(_bridge)["_serve"] = _serve
''' % GRADER_SOCKET

# Issue 40's way round the rules: the bridge reached through IPython's comm targets, with names
# built from strings, the rules' machinery replaced by a no-op (every forbid and refuse off).
RULES_OFF = r'''
import IPython as _IPython, contextlib as _contextlib
_opened = getattr(_IPython, "get_" + "ipython")().kernel.comm_manager.targets["%s"]
vars(getattr(_opened, "__glob" + "als__")["calls"])["_rule"] = lambda rule: _contextlib.nullcontext()
''' % COMM_TARGET

# Issue 40's bomb: every reply a torch.save zip whose one record is 512 MiB of zeros, DEFLATE-compressed
# to half a megabyte (torch.load would inflate it in the grader).
INFLATES = r'''
import io as _io, struct as _struct, zipfile as _zipfile, torch as _torch
import coursetools.checks.bridge as _bridge


def _bomb():
    if "_BOMB" not in globals():
        template = _io.BytesIO()
        _torch.save(_torch.zeros(1, dtype=_torch.uint8), template)
        size, out = 2**29, _io.BytesIO()
        with _zipfile.ZipFile(template) as source, _zipfile.ZipFile(out, "w") as target:
            for info in source.infolist():
                data = source.read(info.filename)
                if info.filename.endswith("data.pkl"):  # the storage and the tensor claim `size` bytes
                    big = b"J" + _struct.pack("<i", size)
                    data = data.replace(b"cpuq\x04K\x01t", b"cpuq\x04" + big + b"t")
                    data = data.replace(b"QK\x00K\x01", b"QK\x00" + big)
                if info.filename.endswith("data/0"):
                    record = _zipfile.ZipInfo(info.filename)
                    record.compress_type = _zipfile.ZIP_DEFLATED
                    with target.open(record, "w", force_zip64=True) as handle:
                        for _ in range(size // 2**24):
                            handle.write(bytes(2**24))
                    continue
                target.writestr(info.filename, data, compress_type=_zipfile.ZIP_DEFLATED)
        globals()["_BOMB"] = "torch:" + _b64.b64encode(out.getvalue()).decode()
    return _BOMB


vars(_bridge)["answer"] = lambda text: _bomb()
'''

# Issue 49's nesting: every reply to a call twelve million nested lists (24 MB, within the message limit),
# which the grader once unpickled in full (1.6 GiB) before its depth check refused it.
NESTS = r'''
import coursetools.checks.bridge as _bridge
_bridge_answer = _bridge.answer


def _nested(text):
    return "json:" + "[" * 12_000_000 + "]" * 12_000_000 if '"op":"call"' in text else _bridge_answer(text)


vars(_bridge)["answer"] = _nested
'''
# Issue 49's expand: one float of storage that claims 512 MiB, which a hidden `.tolist()` once grew to gigabytes.
EXPANDS = ("if _called_by_tests():\n    return __import__('torch').zeros(1).expand(2**27)\n"
           "return _model(*args, **kwargs)")

# Issue 40's flood: from the last answer cell, messages of 64 MiB on the bridge's own socket, which the
# grader used to queue (ZeroMQ's default of 1000 messages) until it read them.
FLOODS = r'''
import zmq as _zmq
import coursetools.checks.bridge as _bridge
_junk = bytes(64 * 2**20)
for _socket in list(vars(_bridge)["_sockets"].values()):
    for _ in range(8):
        try:  # the bridge's sockets are pyzmq's C sockets (no send_multipart): one frame, then the next
            _socket.send(b"0", _zmq.SNDMORE | _zmq.NOBLOCK)
            _socket.send(_junk, _zmq.NOBLOCK)
        except _zmq.Again:
            break
'''
# The grader's peak memory per student (its log): an honest notebook's grader stays well below.
GRADER_PEAK_MIB = 1024


def submissions(solution: nbformat.NotebookNode) -> dict[str, nbformat.NotebookNode]:
    """student -> notebook; each wraps the model answers, which visible tests see."""
    honest = "return _model(*args, **kwargs)"
    return {
        "solution": solution,
        "leaks_history": appended(wrap_answers(solution, honest), LAST_CELL),
        "leaks_from_inside": appended(wrap_answers(solution, "if _called_by_tests():\n    _grab()\n" + honest),
                                      LAST_CELL),
        "hijacks_references": wrap_answers(solution, "if _called_by_tests():\n"
                                                     "    return _hijack(None)\n" + honest),
        "always_equal": wrap_answers(solution, EVIL_CLASSES + "if _called_by_tests():\n"
                                               "    return _AlwaysEqual()\n" + honest),
        "tensor_subclass": wrap_answers(solution, EVIL_CLASSES + "if _called_by_tests():\n"
                                                  "    return _corrupt(_model_or_none(_model, args, kwargs), "
                                                  "lambda t: (t * 0 + 1).as_subclass(_Liar))\n" + honest),
        "pickle_result": wrap_answers(solution, EVIL_CLASSES + "if _called_by_tests():\n"
                                                "    return _Payload()\n" + honest),
        "pickle_reply": first(wrap_answers(solution, honest), EVIL_CLASSES + PICKLE_REPLY),
        "redirects_the_checker": first(wrap_answers(solution, honest), REDIRECT_CHECKER),
        "switches_rules_off": first(wrap_answers(solution, honest), RULES_OFF),
        "inflates_replies": first(wrap_answers(solution, honest), INFLATES),
        "floods_the_socket": last(wrap_answers(solution, honest), FLOODS),
        "nests_replies": first(wrap_answers(solution, honest), NESTS),
        "expands_results": wrap_answers(solution, EXPANDS),
        "patches_comparisons": wrap_answers(solution, "if _called_by_tests():\n" + PATCH_COMPARISONS.replace(
            "\n", "\n    ") + "\n    return _corrupt(_model_or_none(_model, args, kwargs), lambda t: t + 1)\n"
                                                      + honest),
    }


def decoded_views(text: str) -> list[str]:
    """``text``, and every base64 or hex run in it decoded, plain and zlib-decompressed."""
    views = [text]
    blobs = []
    for run in re.findall(r"[A-Za-z0-9+/]{16,}={0,2}", text):
        try:
            blobs.append(base64.b64decode(run + "=" * (-len(run) % 4)))
        except (binascii.Error, ValueError):
            pass
    for run in re.findall(r"(?:[0-9a-f]{2}){8,}", text):
        blobs.append(bytes.fromhex(run))
    for blob in blobs:
        views.append(blob.decode("utf-8", "ignore"))
        try:
            views.append(zlib.decompress(blob).decode("utf-8", "ignore"))
        except zlib.error:
            pass
    return views


DISTINCTIVE = 30  # a hidden line this long is looked for inside longer lines too


def quoted(text: str, secret: set[str]) -> set[str]:
    """The ``secret`` lines that ``text`` holds as lines of its own (stripped), or anywhere when
    they are long enough not to be part of ordinary code (``_mask = None`` is inside
    ``attn_mask = None`` of torch's source, which the kernel may well print)."""
    lines = {line.strip() for line in text.splitlines()}
    return {line for line in secret if line in lines or (len(line) >= DISTINCTIVE and line in text)}


def secret_hidden_lines(source: Path) -> set[str]:
    """The hidden lines of an instructor notebook that nothing public also holds."""
    return hidden_lines(nbformat.read(source, as_version=4)) - public_lines()


@pytest.fixture(scope="module", params=ASSIGNMENTS)
def graded(request, tmp_path_factory):
    require_sandbox()
    PAYLOAD_MARK.unlink(missing_ok=True)
    assignment = request.param
    copy_ = CourseCopy.create(tmp_path_factory.mktemp(assignment), assignment)
    release = nbformat.read(copy_.generate(), as_version=4)
    solution = answered(release, nbformat.read(copy_.source, as_version=4))
    secret = secret_hidden_lines(copy_.source)
    subs = submissions(solution)
    digests = sorted(hashlib.sha256(line.encode()).hexdigest() for line in secret)
    subs["dumps_everything"] = appended(
        wrap_answers(solution, "if _called_by_tests():\n    _grab()\nreturn _model(*args, **kwargs)"),
        DUMP_CELL % (digests,))
    for student, nb in subs.items():
        copy_.submit(student, nb)
    root = ["--root", str(copy_.root)]
    GRADER_SOCKET.unlink(missing_ok=True)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(str(GRADER_SOCKET))
        listener.listen()
        listener.setblocking(False)
        # the dump walks every object, file and line the kernel can reach: over a minute on a loaded machine
        codes = [main(root + ["grade", assignment, "--cell-timeout=180", "--notebook-timeout=600"]),
                 main(root + ["feedback", assignment])]
        try:
            listener.accept()[0].close()
            connected = True
        except BlockingIOError:
            connected = False
    GRADER_SOCKET.unlink(missing_ok=True)
    return copy_, secret, codes, connected


def hidden_cells(copy_: CourseCopy) -> set[str]:
    nb = nbformat.read(copy_.source, as_version=4)
    return {c.metadata["nbgrader"]["grade_id"] for c in cells_of(nb, "test") if "BEGIN HIDDEN TESTS" in c.source}


def test_grading_ran(graded):
    copy_, secret, codes, _ = graded
    assert codes == [0, 0]
    assert secret, "no hidden line to look for"
    earned, possible = copy_.autograded_points("solution")
    assert earned == possible > 0


@pytest.mark.parametrize("student", ["leaks_history", "leaks_from_inside"])
def test_leaks_keep_their_honest_marks(graded, student):
    earned, possible = graded[0].autograded_points(student)
    assert earned == possible, f"{student}: {graded[0].scores(student)}"


@pytest.mark.parametrize("student", ["hijacks_references", "always_equal", "tensor_subclass", "pickle_result",
                                     "pickle_reply", "patches_comparisons", "redirects_the_checker",
                                     "switches_rules_off", "inflates_replies", "nests_replies", "expands_results"])
def test_fooling_the_hidden_tests_earns_nothing_for_them(graded, student):
    copy_ = graded[0]
    scores = copy_.scores(student)
    earned = {cell: scores[cell][0] for cell in hidden_cells(copy_) if scores[cell][0]}
    assert not earned, f"{student} earned points on cells with hidden tests: {earned}"
    assert not PAYLOAD_MARK.exists(), "a pickle payload ran outside the kernel"


def test_switching_the_rules_off_is_flagged(graded):
    record = load_state(graded[0].course, graded[0].assignment)["switches_rules_off"]
    assert record["status"] == "tampered", record
    assert any("comm_manager" in detail for detail in record["details"]), record["details"]


def test_a_flood_costs_the_cell_it_reaches_and_no_grader_memory(graded):
    """The flood fails the hidden block that reads it (the bridge never sends what it was not asked);
    the bomb is refused before it grows; no student's grader, the honest one's included, passes
    ``GRADER_PEAK_MIB``."""
    copy_ = graded[0]
    flooded, honest = copy_.scores("floods_the_socket"), copy_.scores("solution")
    before, reached = cells_around_the_last_answer(copy_)
    assert all(not flooded[cell][0] for cell in reached if honest[cell][0]), f"the flood reached {reached}: {flooded}"
    assert all(flooded[cell][0] == honest[cell][0] for cell in before), "the flood cost a cell graded before it"
    students = copy_.course.students("submitted", copy_.assignment)
    peaks = {student: grader_peak_mib(copy_, student) for student in students}
    assert all(peaks.values()), f"a grader logged no peak: {peaks}"
    assert max(peaks.values()) < GRADER_PEAK_MIB, f"graders' peak memory (MiB): {peaks}"


def cells_around_the_last_answer(copy_: CourseCopy) -> tuple[list[str], list[str]]:
    """(the graded cells before the last answer code cell, the first test cell with hidden tests after
    it, where a flood sent from that answer is read)."""
    cells = nbformat.read(copy_.source, as_version=4).cells
    last = max(i for i, c in enumerate(cells) if c.cell_type == "code"
               and c.metadata.get("nbgrader", {}).get("solution"))
    graded = [(i, c.metadata["nbgrader"]["grade_id"]) for i, c in enumerate(cells)
              if c.metadata.get("nbgrader", {}).get("grade")]
    after = [name for i, name in graded if i > last and "BEGIN HIDDEN TESTS" in cells[i].source]
    return [name for i, name in graded if i < last], after[:1]


def grader_peak_mib(copy_: CourseCopy, student: str) -> int:
    """What the student's grading process logged as its peak resident memory, in MiB (0 when nothing)."""
    log = copy_.course.log_file(copy_.assignment, student)
    found = PEAK_MEMORY.findall(log.read_text(encoding="utf-8")) if log.is_file() else []
    return int(found[-1]) if found else 0


def test_the_grader_connects_nowhere_the_kernel_names(graded):
    assert not graded[3], "the grader connected to a socket outside the box that a notebook's link points to"


@pytest.mark.parametrize("student", ["leaks_history", "leaks_from_inside", "hijacks_references", "always_equal",
                                     "tensor_subclass", "pickle_result", "pickle_reply", "patches_comparisons",
                                     "redirects_the_checker", "switches_rules_off", "inflates_replies",
                                     "floods_the_socket", "nests_replies", "expands_results", "dumps_everything"])
def test_feedback_holds_no_hidden_line_in_any_encoding(graded, student):
    copy_, secret, _, _ = graded
    page = copy_.course.feedback_page(copy_.assignment, student)
    assert page.is_file(), f"{student}: no feedback page (withheld for a leak?)"
    views = decoded_views(page.read_text(encoding="utf-8"))
    leaked = sorted({line for view in views for line in quoted(view, secret)})
    assert not leaked, f"{student}'s feedback holds hidden lines: {leaked[:3]}"


def test_a_kernel_that_dumps_everything_reaches_no_hidden_line(graded):
    copy_ = graded[0]
    outputs = [o for cell in copy_.autograded("dumps_everything").cells for o in cell.get("outputs", [])
               if o.get("output_type") == "stream"]
    reached = [o.text for o in outputs if "HIDDEN LINES REACHED:" in o.text]
    assert reached, "the dump did not run"
    digests = re.findall(r"[0-9a-f]{64}", reached[-1])
    lines = {line for line in graded[1] if hashlib.sha256(line.encode()).hexdigest() in digests}
    assert len(lines) == len(digests)
    # A hidden line that a file of the Python environment also holds (the box reads them all: torch's
    # sources, say `_start = 0`) gives nothing away.
    assert lines - environment_lines(lines) == set(), f"hidden lines the kernel reached: {sorted(lines)}"


def environment_lines(lines: set[str]) -> set[str]:
    """Those of ``lines`` that some Python file of the environment holds as a line of its own."""
    found: set[str] = set()
    for path in Path(sysconfig.get_paths()["purelib"]).rglob("*.py"):
        if lines - found:
            found |= lines & {line.strip() for line in path.read_text(encoding="utf-8", errors="ignore").splitlines()}
    return found
