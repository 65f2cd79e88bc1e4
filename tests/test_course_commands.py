"""The instructor's commands around grading, without running nbgrader: which course ``course``
grades, unknown assignment ids, when ``make release`` skips an assignment, the student README."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import nbformat
import pytest

from coursetools.authoring.release import SHARED_INPUTS, check_assignment, earlier_releases, release_inputs_sha
from coursetools.authoring.student import readme
from coursetools.cli import find_course_root, main
from coursetools.common.layout import REPO_ROOT


def test_course_grades_the_course_it_is_run_in(tmp_path, monkeypatch):
    """Issue 28: without --root, ``course`` graded the checkout it was installed from."""
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n")
    (tmp_path / "grading" / "deep").mkdir(parents=True)
    assert find_course_root(tmp_path / "grading" / "deep") == tmp_path.resolve()
    monkeypatch.chdir(tmp_path.parent)
    with pytest.raises(FileNotFoundError, match="no nbgrader_config.py in .* or any folder above it"):
        find_course_root(Path.cwd())


def test_an_unknown_assignment_is_a_one_line_error(capsys):
    """Issue 28: a typo in A= gave a Python traceback."""
    assert main(["--root", str(REPO_ROOT), "report", "ch04_self_atention"]) == 2
    assert "course: error: unknown assignment 'ch04_self_atention': did you mean ch04_self_attention" \
        in capsys.readouterr().err
    assert check_assignment("ch01_tokens") == "ch01_tokens"


def test_a_release_is_redone_only_when_what_it_is_made_of_changed(tmp_path):
    """Issue 28: ``make release`` regenerated all eleven assignments every time."""
    for relative in (*SHARED_INPUTS, "solutions/x/x.md"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO_ROOT / relative if relative in SHARED_INPUTS else REPO_ROOT / "LICENSE", tmp_path / relative)
    before = release_inputs_sha("x", tmp_path)
    assert release_inputs_sha("x", tmp_path) == before
    (tmp_path / "solutions/x/x.md").write_text("a changed test")
    after_edit = release_inputs_sha("x", tmp_path)
    assert after_edit != before
    (tmp_path / "notebooks/x").mkdir(parents=True)
    (tmp_path / "notebooks/x/x.ipynb").write_text("{}")  # a release edited by hand is made again
    assert release_inputs_sha("x", tmp_path) != after_edit


def test_the_student_readme_names_the_book_and_says_to_keep_the_file_name():
    """Issue 28: the student edition named no book URL and did not say to keep the file name."""
    text = readme("https://example.org/transformer-book/")
    assert "<https://example.org/transformer-book/>" in text and "**Keep the file name**" in text
    assert "{book}" not in readme("") and "online book first;" in readme("")


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                   capture_output=True)


def test_every_committed_release_is_found_in_git_history(tmp_path):
    """Issue 34: ``git -C notebooks/<id> log -- notebooks/<id>/<id>.ipynb`` read the path relative to
    ``-C`` and found no earlier release, so a re-release flagged every student ``tampered``."""
    released = tmp_path / "notebooks" / "x" / "x.ipynb"
    released.parent.mkdir(parents=True)
    _git(tmp_path, "init", "-q")
    for test in ("assert first()", "assert second()", "assert third()"):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(test)])
        nbformat.write(nb, released)
        _git(tmp_path, "add", str(released))
        _git(tmp_path, "commit", "-qm", test)
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("assert not_committed()")]), released)
    sources_found = [nb.cells[0].source for nb in earlier_releases(released)]
    assert sources_found == ["assert not_committed()", "assert third()", "assert second()", "assert first()"]


def test_a_release_outside_git_is_its_only_version(tmp_path):
    released = tmp_path / "x.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("assert only()")]), released)
    assert [nb.cells[0].source for nb in earlier_releases(released)] == ["assert only()"]


def _make(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "--no-print-directory", "-C", str(REPO_ROOT), *args], capture_output=True,
                          text=True, env=env)


@pytest.mark.parametrize("uid, as_root", [("0", True), ("1000", False)])
def test_formgrader_allows_root_only_when_run_as_root(tmp_path, uid, as_root):
    """Issue 34: as root (a container) ``make formgrader`` failed: "Running as root is not recommended"."""
    fake_id = tmp_path / "id"
    fake_id.write_text(f"#!/bin/sh\necho {uid}\n")
    fake_id.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}"}
    command = _make("-n", "formgrader", env=env).stdout
    assert "--ip=127.0.0.1" in command and ("--allow-root" in command) == as_root


@pytest.mark.slow
def test_formgrader_starts_on_localhost_with_a_token(tmp_path):
    """``make formgrader`` as whoever runs the tests (root in a container, a user elsewhere) serves
    JupyterLab on 127.0.0.1 behind a token."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path), "JUPYTER_CONFIG_DIR": str(tmp_path)}
    server = subprocess.Popen(["make", "--no-print-directory", "-C", str(REPO_ROOT), "formgrader",
                               f"FORMGRADER_PORT={port}"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, env=env, start_new_session=True)
    seen: list[str] = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and server.poll() is None:
            line = server.stdout.readline()
            seen.append(line)
            if f"http://127.0.0.1:{port}/lab?token=" in line:
                break
        assert any(f"http://127.0.0.1:{port}/lab?token=" in line for line in seen), "".join(seen)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
