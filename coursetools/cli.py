"""``course``: grade a class, one command per step (``python -m coursetools.cli`` works too).

    course grade ch01_tokens [--from DIR | --zip LMS.zip] [--student ID ...] [--force]
    course feedback ch01_tokens
    course report ch01_tokens          (also exports the CSVs)

Everything is written under the course's git-ignored ``grading/``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from coursetools import grading
from coursetools.exports import class_table, export
from coursetools.layout import Course
from coursetools.outcomes import OK
from coursetools.release import REPO_ROOT
from coursetools.report import write_report
from coursetools.sandbox import SandboxUnavailable


def _grade(course: Course, args: argparse.Namespace) -> int:
    if args.from_folder:
        students = grading.collect_folder(course, args.assignment, args.from_folder)
        print(f"collected {len(students)} students from {args.from_folder}")
    if args.zip:
        students, unmatched = grading.collect_zip(course, args.assignment, args.zip)
        print(f"collected {len(students)} students from {args.zip}")
        for name in unmatched:
            print(f"  NOT COLLECTED (name matches no student): {name}")
    try:
        outcomes = grading.grade(course, args.assignment, args.student or None, force=args.force, jobs=args.jobs,
                                 cell_timeout=args.cell_timeout, notebook_timeout=args.notebook_timeout,
                                 confine=not args.unsafe_no_sandbox)
    except SandboxUnavailable as error:
        print(f"NOT GRADED: student code runs only in a sandbox, and {error}.\n"
              "To grade without one anyway (every student's code can then read the solutions and change "
              "grades): --unsafe-no-sandbox (make grade ... ARGS=--unsafe-no-sandbox)", file=sys.stderr)
        return 2
    problems = {s: o.status for s, o in outcomes.items() if o.status != OK}
    print(f"graded {len(outcomes)}; not ok: {problems or 'none'}")
    return 0


def _feedback(course: Course, args: argparse.Namespace) -> int:
    files, withheld = grading.feedback(course, args.assignment)
    print(f"{len(files)} feedback files under grading/feedback/<student>/{args.assignment}/ "
          "(hand back these HTML files, never grading/autograded/)")
    if withheld:
        print(f"WITHHELD (feedback quoted a hidden test): {withheld}")
    return 1 if withheld else 0


def _report(course: Course, args: argparse.Namespace) -> int:
    table = class_table(course, args.assignment)
    for path in export(course, args.assignment, table):
        print(f"wrote {path}")
    print(f"wrote {write_report(course, args.assignment, table)}")
    return 0


def parser() -> argparse.ArgumentParser:
    """The command line: one sub-command per step."""
    main_parser = argparse.ArgumentParser(prog="course", description=__doc__.splitlines()[0])
    main_parser.add_argument("--root", type=Path, default=REPO_ROOT, help="course directory (default: this repo)")
    steps = main_parser.add_subparsers(dest="step", required=True)
    grade = steps.add_parser("grade", help="collect (optional) and autograde every student")
    source = grade.add_mutually_exclusive_group()
    source.add_argument("--from", dest="from_folder", type=Path, help="folder of <student>/[<assignment>/]*.ipynb")
    source.add_argument("--zip", type=Path, help="an LMS download: <student>_<assignment>.ipynb or "
                                                 "<assignment>--<student>.ipynb inside")
    grade.add_argument("--student", action="append", help="grade only this student (repeatable)")
    grade.add_argument("--force", action="store_true", help="grade again students already graded")
    grade.add_argument("--jobs", type=int, default=2, help="students graded at once (default 2)")
    grade.add_argument("--cell-timeout", type=int, help="seconds per cell (default: nbgrader_config.py, 30)")
    grade.add_argument("--notebook-timeout", type=float, default=grading.DEFAULT_NOTEBOOK_TIMEOUT,
                       help="seconds per student notebook before it is killed and marked 'timed out'")
    grade.add_argument("--unsafe-no-sandbox", action="store_true",
                       help="grade without bubblewrap: student code can read and change everything "
                            "(marked in the report and the CSV)")
    grade.set_defaults(run=_grade)
    steps.add_parser("feedback", help="feedback HTML without hidden tests").set_defaults(run=_feedback)
    steps.add_parser("report", help="CSV exports and the class report").set_defaults(run=_report)
    for step in steps.choices.values():
        step.add_argument("assignment", help="assignment id, e.g. ch01_tokens")
    return main_parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``course``."""
    args = parser().parse_args(argv)
    return args.run(Course(args.root.resolve()), args)


if __name__ == "__main__":
    raise SystemExit(main())
