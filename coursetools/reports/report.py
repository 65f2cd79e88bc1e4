"""The class report: one self-contained HTML page per assignment, written after grading.

What is still to grade by hand (first, and loudly: totals are incomplete until it is done), the
means (each saying what it counts), the histogram of complete totals, pass rate per exercise
with the hardest first, the students to look at (every status other than ``ok`` with the reason
recorded by :mod:`coursetools.grading.autograde`, a notebook that scored nothing, late submissions, answers to
grade by hand), every student's row with links to their feedback page and autograded notebook, and
the files of an LMS download that were left out or name no student. Exercises are named as the
notebook names them, students as the roster does. :func:`render` and what it draws on are pure
functions of the class table (:mod:`coursetools.reports.exports`).
"""

from __future__ import annotations

import os
from collections import Counter
from html import escape
from pathlib import Path
from typing import NamedTuple

import nbformat

from coursetools.common.cells import GradedCell, cell_titles, short_title
from coursetools.common.files import write_atomically
from coursetools.common.layout import Course
from coursetools.grading.outcomes import OK, STATUSES, UNCONFINED
from coursetools.grading.penalty import LatePenalty
from coursetools.grading.state import LEFT_OUT, UNMATCHED, load_state
from coursetools.reports.exports import NO_SUBMISSION, ClassTable, Row, class_table

BINS = 10


def histogram_svg(percentages: list[float], width: int = 420, height: int = 160) -> str:
    """An inline SVG bar chart of scores in ten bins of 10 %."""
    counts = [0] * BINS
    for value in percentages:
        counts[min(int(value // (100 / BINS)), BINS - 1)] += 1
    top = max(counts + [1])
    bar = width / BINS
    parts = [f'<svg width="{width}" height="{height + 20}" role="img" aria-label="score histogram">']
    for i, count in enumerate(counts):
        h = (height - 14) * count / top
        x, y = i * bar, height - h
        parts.append(f'<rect x="{x + 2:.0f}" y="{y:.0f}" width="{bar - 4:.0f}" height="{h:.0f}" fill="#4c72b0"/>')
        parts.append(f'<text x="{x + bar / 2:.0f}" y="{y - 3:.0f}" font-size="11" text-anchor="middle">{count}</text>')
        parts.append(f'<text x="{x + bar / 2:.0f}" y="{height + 14}" font-size="10" '
                     f'text-anchor="middle">{i * 10}-{(i + 1) * 10}%</text>')
    return "".join(parts) + "</svg>"


class ExerciseStats(NamedTuple):
    """One graded cell over the class: pass rate and mean fraction of its points over the students
    scored on it, how many were scored, and how many still wait for a hand grade."""

    grade_id: str
    automatic: bool
    pass_rate: float | None
    mean: float | None
    scored: int
    to_grade_by_hand: int


def exercise_stats(rows: list[Row], cells: list[GradedCell]) -> list[ExerciseStats]:
    """Each graded cell's numbers over the graded students, hardest first; cells nobody has a
    score on yet come last."""
    stats = []
    for cell in cells:
        scored = [row.scores[cell.grade_id] for row in rows if row.scores[cell.grade_id] is not None]
        pending = sum(1 for row in rows if cell.grade_id in row.to_grade_by_hand)
        if not scored and not pending:
            continue
        passed = sum(1 for s in scored if s >= cell.points)
        stats.append(ExerciseStats(cell.grade_id, cell.automatic, passed / len(scored) if scored else None,
                                   sum(scored) / (cell.points * len(scored)) if scored else None, len(scored),
                                   pending))
    return sorted(stats, key=lambda s: (s.mean is None, s.mean or 0.0, s.pass_rate or 0.0))


def summary(rows: list[Row], cells: list[GradedCell]) -> list[str]:
    """The report's opening sentences: who was graded, what is still to grade by hand, and the
    means, each saying what it counts."""
    graded = [row for row in rows if row.total is not None]
    if not graded:
        return [f"{len(rows)} students, none graded."]
    automatic = [cell for cell in cells if cell.automatic]
    auto_points = sum(cell.points for cell in automatic)
    max_total = sum(cell.points for cell in cells)
    complete = [row for row in graded if not row.to_grade_by_hand]
    lines = [f"{len(rows)} students, {len(graded)} graded."]
    if auto_points:
        auto_mean = sum(sum(row.scores[c.grade_id] or 0.0 for c in automatic) for row in graded) / len(graded)
        lines.append(f"Autograded tests: mean {100 * auto_mean / auto_points:.1f} % of their {auto_points:g} points "
                     f"over the {len(graded)} graded students.")
    if complete:
        lines.append(f"Total: mean {100 * sum(r.total for r in complete) / (len(complete) * max_total):.1f} % "
                     f"of {max_total:g} points over the {len(complete)} students whose grading is complete"
                     + (f" (the {len(graded) - len(complete)} with answers still to grade by hand are left out)."
                        if len(complete) < len(graded) else "."))
    else:
        lines.append(f"Total: no student's grading is complete yet ({max_total:g} points with the hand-graded "
                     "answers).")
    return lines


def who(row: Row) -> str:
    """A student as the report names them: the roster's name and the id, or the id alone."""
    return f"{row.name} ({row.student})" if row.name else row.student


def render(assignment: str, rows: list[Row], cells: list[GradedCell], unmatched: list[str],
           left_out: dict[str, list[str]] | None = None, titles: dict[str, str] | None = None,
           links: dict[str, list[tuple[str, str]]] | None = None, penalty: LatePenalty | None = None) -> str:
    """The report's HTML. ``titles``: grade_id -> the exercise's name in the notebook
    (:func:`coursetools.common.cells.cell_titles`); ``links``: student -> (label, relative address) of
    their pages (feedback, autograded notebook); ``penalty``: the late penalty (its points are
    shown beside each late student, and taken off only the exported totals)."""
    titles, links = titles or {}, links or {}
    max_total = sum(cell.points for cell in cells)
    graded = [row for row in rows if row.total is not None]
    complete = [row for row in graded if not row.to_grade_by_hand]
    percentages = [100 * row.total / max_total for row in complete] if max_total else []
    counts = Counter(row.status for row in rows)
    pending = [row for row in graded if row.to_grade_by_hand]
    to_look_at = [(row, why) for row in rows if (why := reasons_to_look(row, max_total))]
    out = [f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(assignment)}: class report</title>",
           "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}td,th{padding:.2em .6em;"
           "border-bottom:1px solid #ddd;text-align:left}.warning{background:#fff3cd;border:1px solid #e0b000;"
           "padding:.6em 1em}</style></head><body>",
           f"<h1>{escape(assignment)}: class report</h1>"]
    unconfined = [row.student for row in rows if UNCONFINED in row.details]
    if unconfined:
        out.append(f"<p class='warning' id='unconfined'><strong>{len(unconfined)} students were graded without a "
                   f"sandbox (--unsafe-no-sandbox)</strong> ({escape(', '.join(unconfined))}): "
                   f"{escape(UNCONFINED)}.</p>")
    if pending:
        answers = sum(len(row.to_grade_by_hand) for row in pending)
        out.append(f"<p class='warning' id='hand-grading'><strong>Hand grading pending: {answers} answers of "
                   f"{len(pending)} students</strong> ({escape(', '.join(who(r) for r in pending))}) have no "
                   "score yet. Their totals are incomplete: do not publish them or hand back feedback. Grade "
                   "them in formgrader, then run <code>make report</code> again.</p>")
    out += [f"<p>{escape(line)}</p>" for line in summary(rows, cells)]
    if penalty:
        out.append(f"<p id='late-penalty'>{escape(penalty_sentence(rows, penalty, max_total))}</p>")
    out += ["<h2>Status</h2><table>" + "".join(f"<tr><td>{escape(s)}</td><td>{counts.get(s, 0)}</td></tr>"
                                           for s in (*STATUSES, NO_SUBMISSION) if counts.get(s) or s == OK)
            + f"<tr><td>answers still to grade by hand</td><td>{sum(len(r.to_grade_by_hand) for r in rows)}"
              f"</td></tr></table>",
            f"<h2>Scores</h2><p>Totals of the {len(complete)} students whose grading is complete.</p>",
            histogram_svg(percentages),
            "<h2>Exercises, hardest first</h2><table><tr><th>exercise</th><th>graded</th><th>pass rate</th>"
            "<th>mean score</th><th>students scored</th><th>still to grade by hand</th></tr>"]
    out += [f"<tr><td>{escape(titles.get(s.grade_id, s.grade_id))}</td>"
            f"<td>{'automatically' if s.automatic else 'by hand'}</td>"
            f"<td>{_percent(s.pass_rate)}</td><td>{_percent(s.mean)}</td><td>{s.scored}</td>"
            f"<td>{s.to_grade_by_hand or ''}</td></tr>" for s in exercise_stats(rows, cells)]
    out.append("</table><h2>Students to look at</h2>")
    out.append("<table><tr><th>student</th><th>status</th><th>why</th></tr>" + "".join(
        f"<tr><td>{escape(who(r))}</td><td>{escape(r.status)}</td><td>{escape('; '.join(why))}</td></tr>"
        for r, why in to_look_at) + "</table>" if to_look_at else "<p>None.</p>")
    out.append(student_table(rows, cells, titles, links))
    if left_out:
        out.append("<h2>Files in the LMS download left out</h2><p>A student with several files is graded on "
                   "the latest; rename a file and collect again to grade another.</p><ul>"
                   + "".join(f"<li>{escape(student)}: {escape(why)}</li>" for student, whys in sorted(left_out.items())
                             for why in whys) + "</ul>")
    if unmatched:
        out.append("<h2>Files in the LMS download that name no student</h2><ul>"
                   + "".join(f"<li>{escape(f)}</li>" for f in unmatched) + "</ul>")
    out.append("</body></html>")
    return "\n".join(out)


def student_table(rows: list[Row], cells: list[GradedCell], titles: dict[str, str],
                  links: dict[str, list[tuple[str, str]]]) -> str:
    """Every student's row: name, status, the points of each graded cell (headed by the exercise's
    short name, the full one on hover), total, answers to grade by hand, lateness and their pages."""
    labels = [short_title(titles.get(cell.grade_id, ""), cell.grade_id) for cell in cells]
    labels = [f"{label} ({cell.grade_id})" if labels.count(label) > 1 else label for label, cell in zip(labels, cells)]
    head = "".join(f"<th title='{escape(titles.get(cell.grade_id, cell.grade_id))}'>{escape(label)} "
                   f"/ {cell.points:g}</th>" for label, cell in zip(labels, cells))
    lines = [f"<h2>Students</h2><table id='students'><tr><th>student</th><th>status</th>{head}<th>total</th>"
             "<th>to grade by hand</th><th>late</th><th>pages</th></tr>"]
    for row in rows:
        scores = "".join(f"<td>{_points(row.scores[cell.grade_id])}</td>" for cell in cells)
        pages = " ".join(f"<a href='{escape(href)}'>{escape(label)}</a>" for label, href in links.get(row.student, []))
        lines.append(f"<tr><td>{escape(who(row))}</td><td>{escape(row.status)}</td>{scores}"
                     f"<td>{_points(row.total)}</td><td>{len(row.to_grade_by_hand) or ''}</td>"
                     f"<td>{escape(row.late + _points_off(row))}</td><td>{pages}</td></tr>")
    return "".join(lines) + "</table>"


def reasons_to_look(row: Row, max_total: float = 0.0) -> list[str]:
    """Why an instructor should look at a student's row (empty: nothing to look at). A graded
    notebook that scored nothing at all (the release handed in as it was, or a wrong file) is one."""
    nothing = row.total == 0 and not row.to_grade_by_hand and max_total > 0
    return ([] if row.status == OK and UNCONFINED not in row.details else row.details or [row.status]) + \
        ([f"0 of {max_total:g} points: nothing answered, or the wrong file?"] if nothing else []) + \
        ([row.late] if row.late else []) + \
        ([f"to grade by hand: {', '.join(row.to_grade_by_hand)}"] if row.to_grade_by_hand else [])


def penalty_sentence(rows: list[Row], penalty: LatePenalty, max_total: float) -> str:
    """What the late penalty does to this class, in one sentence."""
    losing = sum(1 for row in rows if row.total is not None and row.penalty)
    unknown = [who(row) for row in rows if row.total is not None and row.penalty is None]
    return (f"Late penalty {penalty} of the {max_total:g} points, per started {penalty.unit} late: {losing} students "
            "lose points in the CSV (final_total) and the LMS uploads (the totals above, the gradebook, formgrader "
            "and the feedback keep the points scored)"
            + (f"; late by a time nobody gave, left out of the uploads until their submission time is given "
               f"(--times): {', '.join(unknown)}." if unknown else "."))


def _points_off(row: Row) -> str:
    """`` (-3 points)`` for a row a late penalty takes points off, `` (penalty unknown)`` for one late
    by a time nobody gave."""
    if row.penalty is None:
        return " (penalty unknown)"
    return f" (-{row.penalty:g} points)" if row.penalty else ""


def _points(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def _percent(value: float | None) -> str:
    return "" if value is None else f"{value:.0%}"


def write_report(course: Course, assignment: str, table: ClassTable | None = None) -> Path:
    """Write the report (``course.report(assignment)``) and return its path (``table`` as in
    :func:`coursetools.reports.exports.export`)."""
    rows, cells, penalty = table or class_table(course, assignment)
    state = load_state(course, assignment)
    path = course.report(assignment)
    titles = cell_titles(nbformat.read(course.staged_release(assignment), as_version=4))
    write_atomically(path, render(assignment, rows, cells, state.get(UNMATCHED, []), state.get(LEFT_OUT, {}),
                                  titles, student_links(course, assignment, [row.student for row in rows]), penalty))
    return path


def student_links(course: Course, assignment: str, students: list[str]) -> dict[str, list[tuple[str, str]]]:
    """Each student's pages that exist, as addresses relative to the report: the feedback page
    (what the student gets) and the autograded notebook (hidden tests included: the instructor's)."""
    folder = course.report(assignment).parent
    pages = {"feedback": lambda s: course.feedback_page(assignment, s),
             "autograded notebook": lambda s: course.notebook("autograded", assignment, s)}
    return {student: [(label, Path(os.path.relpath(where(student), folder)).as_posix())
                      for label, where in pages.items() if where(student).is_file()] for student in students}
