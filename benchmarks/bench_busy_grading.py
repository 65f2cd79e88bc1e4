"""Grading and reporting on a busy machine: what a machine doing other work changes (issue 51).

    python benchmarks/bench_busy_grading.py [--assignment ch06_positional] [--runs 10] [--runs-as-is N]
                                            [--busy-per-core 4]

In a course copy (as the README's instructors make one: the configuration, the assignment's source,
``make grade ... COURSE=<copy>``), two students' notebooks, each the model answers with a flood first:
one prints 300 MB in 1 MB lines, the other two million short lines. Each is graded ``--runs`` times
through ``make grade ... ARGS="--force --student <id>"`` itself, first on the machine as it is
(``--runs-as-is`` times, ``--runs`` by default), then ``--runs`` times beside ``--busy-per-core`` spinning
processes per core; each run prints its status, points and
seconds. Then ``make report`` is timed three times as the machine is and three times beside one
spinning process per core (the median of each, and their ratio). Every block prints the load
average measured just before it (``os.getloadavg``): other work on the machine counts too.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from coursetools.common.cells import graded_cells  # noqa: E402
from coursetools.common.layout import REPO_ROOT  # noqa: E402
from coursetools.grading import autograde  # noqa: E402
from coursetools.grading.gradebook import gradebook_scores  # noqa: E402
from coursetools.grading.state import load_state  # noqa: E402

from course_helpers import FLOODS, CourseCopy, answered, busy_processes, cells_of  # noqa: E402

PRINTERS = ("print_300_mb", "print_2m_lines")


def make(*args: str) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    done = subprocess.run(["make", "--no-print-directory", "-C", str(REPO_ROOT), *args], capture_output=True,
                          text=True)
    return done, time.monotonic() - start


def load() -> str:
    return "load average " + ", ".join(f"{value:.1f}" for value in os.getloadavg())


def grade_runs(copy_: CourseCopy, runs: int, full: float) -> list[bool]:
    """Each printer graded ``runs`` times through ``make grade``; whether each run was `output cut` with every point."""
    assignment, results = copy_.assignment, []
    for student in PRINTERS:
        for run in range(1, runs + 1):
            done, seconds = make("grade", f"A={assignment}", f"COURSE={copy_.root}",
                                 f"ARGS=--force --student {student}")
            record = load_state(copy_.course, assignment)[student]
            points = sum(v or 0 for v in gradebook_scores(copy_.course, assignment, student).values())
            results.append(done.returncode == 0 and record["status"] == "output cut" and points == full)
            print(f"  {student} run {run}: {record['status']}, {points:g} of {full:g} points, {seconds:.0f} s "
                  f"(make exit {done.returncode})", flush=True)
    return results


def report_seconds(copy_: CourseCopy, times: int = 3) -> float:
    """The median wall-clock seconds of ``make report`` for the copy."""
    seconds = []
    for _ in range(times):
        done, elapsed = make("report", f"A={copy_.assignment}", f"COURSE={copy_.root}")
        if done.returncode != 0:
            raise RuntimeError(done.stdout + done.stderr)
        seconds.append(elapsed)
    return statistics.median(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assignment", default="ch06_positional")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--runs-as-is", type=int, default=None, help="runs on the machine as it is (default: --runs)")
    parser.add_argument("--busy-per-core", type=int, default=4)
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as folder:
        copy_ = CourseCopy.create(Path(folder), args.assignment)
        release = autograde.prepare(copy_.course, args.assignment)
        solution = answered(release, nbformat.read(copy_.source, as_version=4))
        for student in PRINTERS:
            flooded = copy.deepcopy(solution)
            answer = cells_of(flooded, "solution")[0]
            answer.source = FLOODS[student] + answer.source
            copy_.submit(student, flooded)
        full = sum(cell.points for cell in graded_cells(release) if cell.automatic)
        print(f"{args.assignment}, {cores} cores; the machine as it is ({load()}):", flush=True)
        as_is = grade_runs(copy_, args.runs if args.runs_as_is is None else args.runs_as_is, full)
        busy = args.busy_per_core * cores
        with busy_processes(busy):
            time.sleep(5)
            print(f"beside {busy} spinning processes ({load()}):", flush=True)
            beside = grade_runs(copy_, args.runs, full)
        print(f"output cut with every point: {sum(as_is)} of {len(as_is)} as it is, "
              f"{sum(beside)} of {len(beside)} beside {busy} spinning processes")
        print(f"make report ({load()}):", flush=True)
        alone = report_seconds(copy_)
        with busy_processes(cores):
            time.sleep(5)
            print(f"make report beside {cores} spinning processes ({load()}):", flush=True)
            loaded = report_seconds(copy_)
        print(f"make report: {alone:.1f} s as it is, {loaded:.1f} s beside one spinning process per core "
              f"({loaded / alone:.2f} times)")


if __name__ == "__main__":
    main()
