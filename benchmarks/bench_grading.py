"""Time to grade a class: N copies of a chapter's notebook, graded end to end by ``course``.

    python benchmarks/bench_grading.py [--assignment ch01_tokens] [--students 30] [--jobs 2] [--unsafe-no-sandbox]

A third of the class submits the solution, a third the untouched release, a third a notebook
whose first answer loops forever (each costs one cell timeout); one more student's notebook
ignores SIGINT and loops (the hostile worst case: killed at the notebook timeout). Prints seconds
per student-notebook, the class total and the worst case. Runs in a temporary course copy, each
kernel in its sandbox (``coursetools.grading.sandbox``) unless ``--unsafe-no-sandbox``, to compare.
"""

from __future__ import annotations

import argparse
import copy
import sys
import tempfile
import time
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from coursetools.common.layout import Course  # noqa: E402
from coursetools.grading import autograde  # noqa: E402

from course_helpers import CourseCopy, answered, cells_of  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assignment", default="ch01_tokens")
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--cell-timeout", type=int, default=30)
    parser.add_argument("--notebook-timeout", type=float, default=autograde.DEFAULT_NOTEBOOK_TIMEOUT)
    parser.add_argument("--unsafe-no-sandbox", action="store_true", help="kernels unconfined, to compare")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        copy_ = CourseCopy.create(Path(folder), args.assignment)
        course = Course(copy_.root)
        release = autograde.prepare(course, args.assignment)
        correct = answered(release, nbformat.read(copy_.source, as_version=4))
        looping = copy.deepcopy(correct)
        cells_of(looping, "solution")[0].source = "while True:\n    pass"
        kinds = [correct, release, looping]
        for i in range(args.students):
            copy_.submit(f"student{i:02d}", kinds[i % 3])
        start = time.monotonic()
        confine = not args.unsafe_no_sandbox
        outcomes = autograde.grade(course, args.assignment, jobs=args.jobs, cell_timeout=args.cell_timeout,
                                 notebook_timeout=args.notebook_timeout, confine=confine, progress=lambda _: None)
        total = time.monotonic() - start
        hostile = copy.deepcopy(correct)
        hostile.cells.insert(1, nbformat.v4.new_code_cell(
            "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass"))
        copy_.submit("hostile", hostile)
        start = time.monotonic()
        worst = autograde.grade(course, args.assignment, ["hostile"], cell_timeout=args.cell_timeout,
                              notebook_timeout=args.notebook_timeout, confine=confine,
                              progress=lambda _: None)["hostile"]
        worst_seconds = time.monotonic() - start
    per_kind = {}
    for i, outcome in enumerate(outcomes[f"student{i:02d}"] for i in range(args.students)):
        per_kind.setdefault(["correct", "stub", "infinite loop"][i % 3], []).append(outcome.seconds)
    print(f"{args.students} students, {args.jobs} jobs, {'UNCONFINED' if args.unsafe_no_sandbox else 'sandboxed'}: "
          f"{total:.0f} s in all, "
          f"{total / args.students:.1f} s per student-notebook")
    for kind, seconds in per_kind.items():
        print(f"  {kind}: {sum(seconds) / len(seconds):.1f} s each (one process)")
    print(f"worst hostile case (ignores SIGINT, loops): {worst_seconds:.0f} s, status {worst.status!r}")


if __name__ == "__main__":
    main()
