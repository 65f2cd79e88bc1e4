"""``course``: grade a class, one command per step (``python -m coursetools.cli`` works too).

    course grade ch01_tokens [--from DIR | --zip LMS.zip] [--due 2026-01-12T23:59] [--times times.csv]
                             [--student ID ...] [--force]
    course feedback ch01_tokens [--ready-only]
    course review ch01_tokens jdoe --clear "the edit was a blank line" | --keep "replaced the test"
    course report ch01_tokens [--canvas-column "Homework 1 (4242)"] [--late-penalty "10%/day, max 50%"]
                              (also the CSVs and LMS uploads)

The course is the folder holding ``nbgrader_config.py``: the current folder or the nearest one
above it (``--root`` to name another). Everything is written under its git-ignored ``grading/``.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from datetime import datetime
from pathlib import Path

from coursetools.common.layout import CONFIG_FILE, Course, check_assignment
from coursetools.grading.gradebook import flag_submissions, unflag_submission
from coursetools.grading.outcomes import CLEARED, GRADED, KEPT, OK, reviewed
from coursetools.grading.penalty import record_late_penalty
from coursetools.grading.state import (
    DUE,
    LMS_IDS,
    REVIEWS,
    TIMES,
    load_state,
    merge_state,
    student_records,
    update_state,
)
from coursetools.reports.exports import NO_SUBMISSION, class_table, export, submission_time
from coursetools.reports.report import write_report
from coursetools.reports.uploads import write_uploads


def not_ok(state: dict) -> dict[str, str]:
    """student -> status, for every student whose recorded status is not ``ok`` after review, graded
    in the last run or before it (a resumed run once said "none" while earlier ones stayed flagged)."""
    reviews = state.get(REVIEWS, {})
    return {s: r["status"] for s, r in sorted(state.items()) if isinstance(r, dict) and "status" in r
            and reviewed(r, reviews.get(s))["status"] != OK}


# The grading pipeline (nbconvert, the checker, torch) is imported by the two commands that run it,
# `grade` and `feedback`: `course report` and `course review` start in a fraction of the time.


def _grade(course: Course, args: argparse.Namespace) -> int:
    from coursetools.grading import autograde
    from coursetools.grading.collect import collect_folder, collect_zip, read_submission_times
    from coursetools.grading.sandbox import SandboxUnavailable

    if args.due:
        update_state(course, args.assignment, {DUE: args.due.isoformat()})
    if args.from_folder:
        try:
            records = collect_folder(course, args.assignment, args.from_folder)
        except (OSError, ValueError) as error:
            print(f"course: error: {error}", file=sys.stderr)
            return 2
        print(f"collected {len(records)} students from {args.from_folder}")
        for student, record in records.items():
            print(f"  {student}: submitted {record['timestamp']} ({record['time_from']})" if record["timestamp"]
                  else f"  {student}: no notebook, no time")
    if args.zip:
        choice = collect_zip(course, args.assignment, args.zip, replace_folders=args.replace_folders)
        print(f"collected {len(choice.chosen)} students from {args.zip}")
        for student, whys in choice.left_out.items():
            for why in whys:
                print(f"  LEFT OUT for {student}: {why}")
        for name in choice.unmatched:
            print(f"  NOT COLLECTED (name matches no student): {name}")
    if args.times:
        try:
            times = read_submission_times(args.times, load_state(course, args.assignment).get(LMS_IDS, {}))
        except (OSError, ValueError) as error:
            print(f"course: error: {error}", file=sys.stderr)
            return 2
        due = load_state(course, args.assignment).get(DUE)
        if len({datetime.fromisoformat(t).tzinfo is None for t in [*times.values(), *([due] if due else [])]}) > 1:
            print(f"course: error: {args.times} and the due date {due}: some times have a UTC offset and others "
                  "none; give every time, and --due, with an offset (2026-01-12T23:59-05:00) or none of them",
                  file=sys.stderr)
            return 2
        merge_state(course, args.assignment, TIMES, times)
        print(f"submission times of {len(times)} students read from {args.times} (they stand before any other)")
    try:
        outcomes = autograde.grade(course, args.assignment, args.student or None, force=args.force, jobs=args.jobs,
                                 cell_timeout=args.cell_timeout,
                                 notebook_timeout=args.notebook_timeout or autograde.DEFAULT_NOTEBOOK_TIMEOUT,
                                 confine=not args.unsafe_no_sandbox)
    except SandboxUnavailable as error:
        print(f"NOT GRADED: student code runs only in a sandbox, and {error}.\n"
              "To grade without one anyway (every student's code can then read the solutions and change "
              "grades): --unsafe-no-sandbox (make grade ... ARGS=--unsafe-no-sandbox)", file=sys.stderr)
        return 2
    state = load_state(course, args.assignment)
    reviews = state.get(REVIEWS, {})
    flag_submissions(course, args.assignment, [s for s, o in outcomes.items()
                                               if reviewed(asdict(o), reviews.get(s))["status"] != OK])
    print(f"graded {len(outcomes)}; not ok (flagged in formgrader): {not_ok(state) or 'none'}")
    _say_unknown_times(course, args.assignment)
    return 0


def _say_unknown_times(course: Course, assignment: str) -> None:
    """With a due date, name the students whose submission time is unknown (Canvas and Moodle file
    names carry none): only the LMS's own LATE mark says anything of them."""
    state = load_state(course, assignment)
    if not state.get(DUE):
        return
    unknown = [s for s in student_records(state) if submission_time(course, assignment, s, state) is None]
    if unknown:
        print(f"DUE: no submission time for {len(unknown)} students ({', '.join(unknown)}): the file names carry "
              "none (Canvas and Moodle's do not), so only an LMS's LATE mark shows; give their times with "
              "--times times.csv (README, 'Grading a class').")


def _feedback(course: Course, args: argparse.Namespace) -> int:
    from coursetools.grading import autograde

    table = class_table(course, args.assignment)
    pending = {row.student: row.to_grade_by_hand for row in table.rows if row.to_grade_by_hand}
    not_graded = {row.student: row.status for row in table.rows if row.status not in (*GRADED, NO_SUBMISSION)}
    if pending and not args.ready_only:
        for student in pending:
            for page in course.folder("feedback", args.assignment, student).glob("*.html"):
                page.unlink()
                print(f"removed stale feedback {page.relative_to(course.root)}")
        listed = "; ".join(f"{student}: {', '.join(ids)}" for student, ids in pending.items())
        print(f"REFUSED: {len(pending)} students have answers still to grade by hand ({listed}); their feedback "
              "would show 0 for those answers. Grade them in formgrader (README, 'Grading a class') and run this "
              "again, "
              "or add --ready-only to write feedback only for the students whose grading is complete.",
              file=sys.stderr)
        return 1
    files, withheld = autograde.feedback(course, args.assignment)
    held_back = []
    for student in pending:  # --ready-only: nobody gets a page with an answer still ungraded
        for page in course.folder("feedback", args.assignment, student).glob("*.html"):
            page.unlink()
            held_back.append(student)
    files = [f for f in files if f.is_file()]
    print(f"{len(files)} feedback files under grading/feedback/<student>/{args.assignment}/ "
          "(hand back these HTML files, never grading/autograded/)")
    if held_back:
        print(f"NOT WRITTEN (answers still to grade by hand): {sorted(set(held_back))}")
    if not_graded:
        print("NOT WRITTEN (the notebook did not finish, so nothing was graded; grade it again once fixed): "
              + ", ".join(f"{student} ({status})" for student, status in not_graded.items()))
    if withheld:
        print(f"WITHHELD (feedback quoted a hidden test): {withheld}")
    return 1 if withheld else 0


def _report(course: Course, args: argparse.Namespace) -> int:
    try:
        policy = record_late_penalty(course, args.assignment, args.late_penalty)
    except ValueError as error:
        print(f"course: error: --late-penalty: {error}", file=sys.stderr)
        return 2
    table = class_table(course, args.assignment)
    if policy:
        unknown = [row.student for row in table.rows if row.penalty is None]
        print(f"late penalty {policy} (kept until --late-penalty none): "
              f"{sum(1 for row in table.rows if row.penalty)} students lose points in the exported totals"
              + (f"; late by a time nobody gave, left out of the LMS uploads: {', '.join(unknown)}" if unknown else ""))
    for path in export(course, args.assignment, table):
        print(f"wrote {path}")
    for path, upload in write_uploads(course, args.assignment, table, args.canvas_column).items():
        whys = {why: [s for s, w in upload.left_out.items() if w == why] for why in upload.left_out.values()}
        print(f"wrote {path} (for the LMS's grade import; {len(upload.left_out)} students left out"
              + "".join(f"; {why}: {', '.join(students)}" for why, students in whys.items()) + ")")
    print(f"wrote {write_report(course, args.assignment, table)}")
    refused = [f"{row.student}: {', '.join(row.refused)}" for row in table.rows if row.refused]
    if refused:
        print(f"SCORES NOT COUNTED (a hand score outside its cell's points, written in formgrader; score them again "
              f"there): {'; '.join(refused)}")
    pending = [row.student for row in table.rows if row.to_grade_by_hand]
    if pending:
        print(f"HAND GRADING PENDING for {len(pending)} students ({', '.join(pending)}): their totals are "
              "incomplete; grade them in formgrader, then run the report again.")
    return 0


def _review(course: Course, args: argparse.Namespace) -> int:
    record = load_state(course, args.assignment).get(args.student)
    if record is None:
        print(f"course: error: {args.student!r} has not been graded on {args.assignment}", file=sys.stderr)
        return 2
    if record["status"] == OK:
        print(f"course: error: {args.student} is ok on {args.assignment}: nothing to review", file=sys.stderr)
        return 2
    if args.clear is not None and record["status"] not in GRADED:
        print(f"course: error: {args.student} is {record['status']} on {args.assignment}: the notebook did not finish, "
              "so it has no score a cleared flag could count; fix the cause (or record --keep) and grade again",
              file=sys.stderr)
        return 2
    decision, note = (CLEARED, args.clear) if args.clear is not None else (KEPT, args.keep)
    merge_state(course, args.assignment, REVIEWS, {args.student: {
        "decision": decision, "note": note, "status": record["status"], "submission_sha": record["submission_sha"]}})
    if decision == CLEARED:
        unflag_submission(course, args.assignment, args.student)
    print(f"{args.student}: {record['status']} {decision} ({note}); the report, the CSV and formgrader's flag follow "
          "it until the student submits another file. Run the report again.")
    return 0


def _due(text: str) -> datetime:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date and time like 2026-01-12T23:59, got {text!r}") from None


def find_course_root(start: Path) -> Path:
    """The folder holding ``nbgrader_config.py``: ``start`` or the nearest one above it."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / CONFIG_FILE).is_file():
            return folder
    raise FileNotFoundError(f"no {CONFIG_FILE} in {start} or any folder above it: run `course` in the course "
                            "directory, or pass --root")


def parser() -> argparse.ArgumentParser:
    """The command line: one sub-command per step."""
    main_parser = argparse.ArgumentParser(prog="course", description=__doc__.splitlines()[0])
    main_parser.add_argument("--root", type=Path, help="course directory (default: the current folder, or the "
                                                       f"nearest one above it holding {CONFIG_FILE})")
    steps = main_parser.add_subparsers(dest="step", required=True)
    grade = steps.add_parser("grade", help="collect (optional) and autograde every student")
    source = grade.add_mutually_exclusive_group()
    source.add_argument("--from", dest="from_folder", type=Path, help="folder of <student>/[<assignment>/]*.ipynb")
    source.add_argument("--zip", type=Path, help="an LMS download (Canvas, Moodle, Blackboard or the course's own "
                                                 "<student>_<assignment>.ipynb names; see coursetools/README.md)")
    grade.add_argument("--replace-folders", action="store_true",
                       help="with --zip: replace submissions collected from a folder since (kept by default)")
    grade.add_argument("--due", type=_due, help="due date and time (ISO, the LMS's time zone), e.g. "
                                                "2026-01-12T23:59: later submissions are marked late")
    grade.add_argument("--times", type=Path, help="CSV of submission times (columns submitted_at and student or "
                                                  "lms_id/user_id), for LMS downloads whose names carry none")
    grade.add_argument("--student", action="append", help="grade only this student (repeatable)")
    grade.add_argument("--force", action="store_true", help="grade again students already graded")
    grade.add_argument("--jobs", type=int, default=2, help="students graded at once (default 2)")
    grade.add_argument("--cell-timeout", type=int, help="seconds per cell (default: nbgrader_config.py, 30)")
    grade.add_argument("--notebook-timeout", type=float,
                       help="seconds per student notebook before it is killed and marked 'timed out' "
                            "(default: coursetools.grading.autograde.DEFAULT_NOTEBOOK_TIMEOUT)")
    grade.add_argument("--unsafe-no-sandbox", action="store_true",
                       help="grade without bubblewrap: student code can read and change everything "
                            "(marked in the report and the CSV)")
    grade.set_defaults(run=_grade)
    feedback = steps.add_parser("feedback", help="feedback HTML without hidden tests (refused while hand "
                                                 "grading is pending)")
    feedback.add_argument("--ready-only", action="store_true",
                          help="write feedback for the students whose grading is complete, none for the others")
    feedback.set_defaults(run=_feedback)
    review = steps.add_parser("review", help="record your review of a flagged student (tampered, cell timed "
                                             "out...): clear the flag or keep it, with a note")
    decision = review.add_mutually_exclusive_group(required=True)
    decision.add_argument("--clear", metavar="NOTE", help="the flag was wrong: the student counts as ok")
    decision.add_argument("--keep", metavar="NOTE", help="the flag stands (the note says what you found)")
    review.set_defaults(run=_review)
    report = steps.add_parser("report", help="CSV exports, the LMS uploads and the class report")
    report.add_argument("--canvas-column", help="the assignment's column header in Canvas's gradebook export, "
                                                "e.g. 'Homework 8 (4242)' (default: the assignment id, which "
                                                "Canvas imports as a new assignment)")
    report.add_argument("--late-penalty", metavar="POLICY",
                        help="e.g. '10%%/day, max 50%%' or '5%%/hour': a percentage of the maximum points per started "
                             "day or hour late, taken off the exported totals and the LMS uploads (never the "
                             "gradebook); kept for the assignment until changed ('none' removes it)")
    report.set_defaults(run=_report)
    for step in steps.choices.values():
        step.add_argument("assignment", help="assignment id, e.g. ch01_tokens")
    review.add_argument("student", help="the student's id")
    return main_parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``course``: 2 and a one-line error for a wrong course or assignment."""
    args = parser().parse_args(argv)
    try:
        root = args.root.resolve() if args.root else find_course_root(Path.cwd())
        if not (root / CONFIG_FILE).is_file():
            raise FileNotFoundError(f"{root} is not a course directory: it has no {CONFIG_FILE}")
        check_assignment(args.assignment, root)
    except (FileNotFoundError, ValueError) as error:
        print(f"course: error: {error}", file=sys.stderr)
        return 2
    return args.run(Course(root), args)


if __name__ == "__main__":
    raise SystemExit(main())
