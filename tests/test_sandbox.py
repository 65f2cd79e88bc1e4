"""A hostile class graded in the sandbox (``coursetools.grading.sandbox``): every attack fails.

One course copy of a tiny assignment, one ``course grade`` run over a correct student and the
attackers below; each attack runs in the first answer cell, before the correct answer, and prints
``ATTACK <name>: blocked (...)`` or ``ATTACK <name>: WORKED ...``. The tests read those lines from
the autograded notebooks and check, from outside, that nothing it aimed at changed: the course
directory (except what nbgrader writes), the Python environment, the grader's processes, a TCP
listener. Needs ``bwrap``: skipped without it, a failure when ``COURSE_REQUIRE_SANDBOX=1`` (CI).
"""

from __future__ import annotations

import copy
import hashlib
import os
import re
import shutil
import socket
import sysconfig
import time
from pathlib import Path

import nbformat
import psutil
import pytest

from coursetools.cli import main
from coursetools.grading import autograde, sandbox
from coursetools.grading.outcomes import KERNEL_DIED, OK, UNCONFINED
from coursetools.grading.state import load_state

from course_helpers import TINY_SOURCE, CourseCopy, answered, cells_of, require_sandbox

pytestmark = pytest.mark.slow
SECRET = "grader-secret-5f1c"  # an environment variable of the grader's, which no kernel may see
TOKEN = "lingering-7b2e"  # in the command line of the process an attacker leaves behind
# Low limits, so that the bombs stay small on the machine running the tests.
LIMITS = {"memory_bytes": 1536 << 20, "processes": 128, "file_bytes": 8 << 20, "scratch_bytes": 32 << 20,
          "tmp_bytes": 16 << 20}

# Each attack is a function body run in the kernel; returning normally is "WORKED" with what it
# returned, an exception is "blocked". ROOT, SITE, PORT, GRADER are filled in by the test.
PROBE = '''
def _attack(name, action):
    try:
        found = action()
    except BaseException as error:  # noqa: BLE001
        print(f"ATTACK {name}: blocked ({type(error).__name__}: {error})"[:300])
    else:
        print(f"ATTACK {name}: WORKED {found!r}"[:300])
'''
FILE_ATTACKS = '''
import base64, glob, os, signal, socket, subprocess, sys
ROOT, SITE, PORT, GRADER = {root!r}, {site!r}, {port}, {grader}
def read(path):
    return base64.b64encode(open(path, "rb").read()).decode()[:40]
def write(path, mode="w"):
    with open(path, mode) as handle:
        handle.write("pwned")
    return path
def other_students():
    return [read(p) for p in glob.glob(ROOT + "/grading/submitted/*/tiny/tiny.ipynb") if "/attacker/" not in p] or 1/0
def secret_environment():
    seen = [open(f"/proc/{{p}}/environ", "rb").read() for p in os.listdir("/proc") if p.isdigit()]
    return [e for e in seen + [repr(dict(os.environ)).encode()] if b"{secret}" in e] or 1/0
def grader_processes():
    names = [open(f"/proc/{{p}}/cmdline", "rb").read().split(b"\\0") for p in os.listdir("/proc") if p.isdigit()]
    return [n for n in names if b"nbgrader" in n or b"pytest" in n] or 1/0
def kill_grader():
    os.kill(GRADER, signal.SIGKILL)
    return GRADER
def kill_everything_else():
    mine = {{os.getpid(), 1}}
    killed = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in mine
              and b"ipykernel" in open(f"/proc/{{p}}/cmdline", "rb").read()]
    for pid in killed:
        os.kill(pid, signal.SIGKILL)
    return killed or 1/0
def symlink_out():
    os.symlink(ROOT + "/solutions", "escape")
    return read("escape/tiny/tiny.md")
def linger():
    subprocess.Popen([sys.executable, "-c", "import sqlite3, time, sys\\n"
                      "while True:\\n"
                      "    time.sleep(0.2)\\n"
                      "    try:\\n"
                      "        open(sys.argv[1] + '/grading/lingered.txt', 'a').write('x')\\n"
                      "    except OSError:\\n"
                      "        pass\\n", ROOT, "{token}"],
                     start_new_session=True)
    time.sleep(0.5)
    return open(ROOT + "/grading/lingered.txt").read() or 1/0
import time
_attack("read solutions", lambda: read(ROOT + "/solutions/tiny/tiny.md"))
_attack("read another student", other_students)
_attack("write gradebook", lambda: write(ROOT + "/grading/gradebook.db", "a"))
_attack("create in solutions", lambda: write(ROOT + "/solutions/planted.txt"))
_attack("write site-packages", lambda: write(SITE + "/zz_planted.pth"))
_attack("lingering process", linger)
_attack("tcp connection", lambda: socket.create_connection(("127.0.0.1", PORT), timeout=2))
_attack("grader environment", secret_environment)
_attack("grader command lines", grader_processes)
_attack("kill the grader", kill_grader)
_attack("kill other kernels", kill_everything_else)
_attack("symlink out", symlink_out)
_attack("plant feedback", lambda: write(ROOT + "/grading/feedback/attacker/tiny/tiny.html"))
_attack("plant autograded", lambda: write(ROOT + "/grading/autograded/attacker/tiny/extra.html"))
'''
BOMBS = '''
import subprocess, sys
FORK = (
    "import os, time\\n"
    "for count in range(1000):  # never more, should the limits fail\\n"
    "    try:\\n"
    "        if os.fork() == 0:\\n"
    "            os.closerange(0, 3)\\n"
    "            time.sleep(600)  # {token}\\n"
    "            os._exit(0)\\n"
    "    except OSError as error:\\n"
    "        print(f'blocked after {{count}} processes: {{error}}')\\n"
    "        break\\n"
    "else:  # a real bomb never stops: stay alive as it would (the cap above is only a safety net)\\n"
    "    time.sleep(10)\\n")
def fork_bomb():
    said = subprocess.run([sys.executable, "-c", FORK], capture_output=True, text=True, timeout=60).stdout
    if "blocked" in said:
        raise OSError(said.strip())
    return said
def memory_bomb():
    hoard = []
    while True:
        hoard.append(b"x" * (64 << 20))
def fill_file():
    with open("big.bin", "wb") as handle:
        while True:
            handle.write(b"x" * (1 << 20))
def fill_tmp():
    for i in range(1000):
        with open(f"/tmp/{{i}}.bin", "wb") as handle:
            handle.write(b"x" * (4 << 20))
_attack("memory bomb", memory_bomb)
_attack("fill a file", fill_file)
_attack("fill /tmp", fill_tmp)
'''
FORK_BOMB = BOMBS + '''
_attack("fork bomb", fork_bomb)
'''
FILL_SCRATCH = '''
import time
for i in range(1000):
    with open(f"part{{i}}.bin", "wb") as handle:
        handle.write(b"x" * (4 << 20))
    time.sleep(0.05)
'''
ATTACKERS = {"attacker": FILE_ATTACKS, "bomber": BOMBS, "fork_bomber": FORK_BOMB, "disk_filler": FILL_SCRATCH}


def with_attack(notebook, code: str):
    """``notebook`` with ``code`` run first in its first answer cell."""
    notebook = copy.deepcopy(notebook)
    cell = cells_of(notebook, "solution")[0]
    cell.source = PROBE + code + "\n" + cell.source
    return notebook


def snapshot(folder: Path, skip: tuple[str, ...] = ()) -> dict[str, str]:
    """Relative path -> SHA-256 of every file under ``folder``, except under the ``skip`` folders."""
    found = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if path.is_file() and not relative.startswith(skip):
            found[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


# What nbgrader and the course's grading write; everything else of the course must stay as it was.
GRADER_WRITES = ("grading/autograded/", "grading/feedback/", "grading/gradebook.db", "grading/state/",
                 "grading/logs/", "grading/backups/", "grading/exports/", "grading/reports/")


@pytest.fixture(scope="module")
def hostile_class(tmp_path_factory):
    """Grade the class in one run; returns (course copy, state, seconds, exit code, before, after, accepted)."""
    require_sandbox()
    copy_ = CourseCopy.create(tmp_path_factory.mktemp("hostile"), "tiny", source_text=TINY_SOURCE)
    with open(copy_.root / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write("".join(f"\nc.ConfinedKernelManager.{name} = {value}" for name, value in LIMITS.items()))
    course = copy_.course
    release = autograde.prepare(course, "tiny")
    correct = answered(release, nbformat.read(copy_.source, as_version=4))
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    site = sysconfig.get_paths()["purelib"]
    fields = {"root": str(copy_.root), "site": site, "port": listener.getsockname()[1], "grader": os.getpid(),
              "secret": SECRET, "token": TOKEN}
    copy_.submit("correct", correct)
    for student, code in ATTACKERS.items():
        copy_.submit(student, with_attack(correct, code.format(**fields)))
    before = snapshot(copy_.root, GRADER_WRITES), snapshot(Path(site))
    os.environ["COURSE_GRADER_SECRET"] = SECRET
    start = time.monotonic()
    try:
        code = main(["--root", str(copy_.root), "grade", "tiny", "--cell-timeout=20", "--notebook-timeout=90"])
    finally:
        del os.environ["COURSE_GRADER_SECRET"]
    seconds = time.monotonic() - start
    time.sleep(1)  # a process left behind would write again by now
    after = snapshot(copy_.root, GRADER_WRITES), snapshot(Path(site))
    try:
        accepted = listener.accept()
    except BlockingIOError:
        accepted = None
    listener.close()
    print(f"hostile class graded in {seconds:.1f} s")
    return copy_, load_state(course, "tiny"), seconds, code, before, after, accepted


def attack_lines(copy_: CourseCopy, student: str) -> dict[str, str]:
    """Attack name -> what happened, from the student's autograded notebook."""
    text = "".join(output.get("text", "") for cell in copy_.autograded(student).cells if cell.cell_type == "code"
                   for output in cell.get("outputs", []))
    return dict(re.findall(r"ATTACK ([^:]+): (.*)", text))


def test_the_run_succeeds_and_the_correct_student_keeps_full_marks(hostile_class):
    copy_, state, seconds, code, *_ = hostile_class
    assert code == 0
    assert state["correct"]["status"] == OK, state["correct"]
    earned, possible = copy_.autograded_points("correct")
    assert possible > 0 and earned == possible


@pytest.mark.parametrize("student, attacks", [
    ("attacker", ["read solutions", "read another student", "write gradebook", "create in solutions",
                  "write site-packages", "lingering process", "tcp connection", "grader environment",
                  "grader command lines", "kill the grader", "kill other kernels", "symlink out",
                  "plant feedback", "plant autograded"]),
    ("bomber", ["memory bomb", "fill a file", "fill /tmp"]),
])
def test_every_attack_is_blocked_and_the_honest_answers_score(hostile_class, student, attacks):
    copy_, state, *_ = hostile_class
    assert state[student]["status"] in (OK, "tampered"), state[student]
    seen = attack_lines(copy_, student)
    assert sorted(seen) == sorted(attacks), seen
    worked = {name: what for name, what in seen.items() if not what.startswith("blocked")}
    assert not worked, worked
    earned, possible = copy_.autograded_points(student)
    assert earned == possible, f"{student}: {earned} of {possible}"


def test_the_fork_bomb_is_bounded(hostile_class):
    """Unprivileged, the box's RLIMIT_NPROC stops it; a grader running as root is exempt from that
    limit (the kernel's rule for uid 0), and the box's watchdog kills it instead."""
    copy_, state, *_ = hostile_class
    if state["fork_bomber"]["status"] == KERNEL_DIED:
        log = copy_.course.log_file("tiny", "fork_bomber").read_text(encoding="utf-8")
        assert f"ran more than {LIMITS['processes']} processes" in log
    else:
        seen = attack_lines(copy_, "fork_bomber")
        assert "Resource temporarily unavailable" in seen["fork bomb"], seen
        assert copy_.autograded_points("fork_bomber")[0] > 0


def test_the_bombs_hit_the_limits(hostile_class):
    seen = attack_lines(hostile_class[0], "bomber")
    assert "MemoryError" in seen["memory bomb"]
    assert "File too large" in seen["fill a file"]
    assert "No space left" in seen["fill /tmp"]


def test_filling_the_scratch_folder_kills_only_that_kernel(hostile_class):
    state = hostile_class[1]
    assert state["disk_filler"]["status"] == KERNEL_DIED, state["disk_filler"]
    log = hostile_class[0].course.log_file("tiny", "disk_filler").read_text(encoding="utf-8")
    assert f"wrote more than {LIMITS['scratch_bytes']} bytes" in log


def test_nothing_outside_what_nbgrader_writes_changed(hostile_class):
    _, _, _, _, before, after, accepted = hostile_class
    assert after[0] == before[0], sorted(set(after[0].items()) ^ set(before[0].items()))
    assert after[1] == before[1], "the Python environment's site-packages changed"
    assert accepted is None, "a kernel reached a TCP port of the grader's machine"


def test_no_process_outlives_the_grading(hostile_class):
    left = [p.pid for p in psutil.process_iter(["cmdline"]) if TOKEN in " ".join(p.info["cmdline"] or [])]
    assert not left, f"processes left behind: {left}"
    assert not list(Path(hostile_class[0].root).rglob("lingered.txt"))


def test_grading_refuses_to_run_without_a_sandbox(tmp_path, monkeypatch, capsys):
    copy_ = CourseCopy.create(tmp_path / "course", "tiny", source_text=TINY_SOURCE)
    copy_.submit("jdoe", nbformat.read(copy_.source, as_version=4))
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None if name == sandbox.BWRAP else "/bin/" + name)
    assert main(["--root", str(copy_.root), "grade", "tiny"]) == 2
    message = capsys.readouterr().err
    for text in ("apt install bubblewrap", "dnf install bubblewrap", "--unsafe-no-sandbox"):
        assert text in message
    assert not copy_.course.state_file("tiny").exists(), "a student was graded without a sandbox"


def test_unconfined_grading_is_marked_for_every_student(tmp_path):
    copy_ = CourseCopy.create(tmp_path / "course", "tiny", source_text=TINY_SOURCE)
    release = autograde.prepare(copy_.course, "tiny")
    copy_.submit("jdoe", answered(release, nbformat.read(copy_.source, as_version=4)))
    root = ["--root", str(copy_.root)]
    assert main(root + ["grade", "tiny", "--unsafe-no-sandbox"]) == 0  # a correct notebook: harmless
    assert main(root + ["report", "tiny"]) == 0
    assert load_state(copy_.course, "tiny")["jdoe"]["details"][0] == UNCONFINED
    csv_text = (copy_.course.exports() / "tiny_grades.csv").read_text(encoding="utf-8")
    assert UNCONFINED in csv_text
    assert "graded without a sandbox" in copy_.course.report("tiny").read_text(encoding="utf-8")
