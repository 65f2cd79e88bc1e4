"""The class report: one self-contained HTML page per assignment, written after grading.

Score histogram, pass rate per exercise, the exercises the class found hardest, and the students
whose notebook could not be graded normally (kernel died, timed out, tampered, missing), with the
reason recorded by :mod:`coursetools.grading`. :func:`render` and what it draws on are pure
functions of the class table (:mod:`coursetools.exports`).
"""

from __future__ import annotations

from collections import Counter
from html import escape
from pathlib import Path

from coursetools.cells import GradedCell
from coursetools.exports import ClassTable, Row, class_table
from coursetools.files import write_atomically
from coursetools.layout import Course
from coursetools.outcomes import OK, STATUSES, UNCONFINED
from coursetools.state import UNMATCHED, load_state

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


def exercise_stats(rows: list[Row], cells: list[GradedCell]) -> list[tuple[str, float, float, int]]:
    """(exercise, pass rate, mean fraction of points, students scored) over the graded students,
    hardest first."""
    stats = []
    for cell in cells:
        scored = [row.scores[cell.grade_id] for row in rows if row.scores[cell.grade_id] is not None]
        if not scored:
            continue
        passed = sum(1 for s in scored if s >= cell.points)
        stats.append((cell.grade_id, passed / len(scored), sum(scored) / (cell.points * len(scored)), len(scored)))
    return sorted(stats, key=lambda s: (s[2], s[1]))


def render(assignment: str, rows: list[Row], cells: list[GradedCell], unmatched: list[str]) -> str:
    """The report's HTML."""
    max_total = sum(cell.points for cell in cells)
    graded = [row for row in rows if row.total is not None]
    percentages = [100 * row.total / max_total for row in graded] if max_total else []
    counts = Counter(row.status for row in rows)
    stats = exercise_stats(rows, cells)
    unconfined = [row.student for row in rows if UNCONFINED in row.details]
    problems = [row for row in rows if row.status != OK or row.student in unconfined]
    out = [f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(assignment)}: class report</title>",
           "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}td,th{padding:.2em .6em;"
           "border-bottom:1px solid #ddd;text-align:left}</style></head><body>",
           f"<h1>{escape(assignment)}: class report</h1>",
           f"<p><strong>{len(unconfined)} students were graded without a sandbox (--unsafe-no-sandbox)"
           f"</strong>: {escape(UNCONFINED)}.</p>" if unconfined else "",
           f"<p>{len(rows)} students, {len(graded)} graded; mean "
           f"{sum(percentages) / len(percentages):.1f} % of {max_total:g} points.</p>" if percentages else
           f"<p>{len(rows)} students, none graded.</p>",
           "<h2>Status</h2><table>" + "".join(f"<tr><td>{escape(s)}</td><td>{counts.get(s, 0)}</td></tr>"
                                            for s in STATUSES) + "</table>",
           "<h2>Scores</h2>", histogram_svg(percentages),
           "<h2>Exercises, hardest first</h2><table><tr><th>exercise</th><th>pass rate</th>"
           "<th>mean score</th><th>students</th></tr>"]
    out += [f"<tr><td>{escape(n)}</td><td>{rate:.0%}</td><td>{mean:.0%}</td><td>{k}</td></tr>"
            for n, rate, mean, k in stats]
    out.append("</table><h2>Students to look at</h2>")
    out.append("<table><tr><th>student</th><th>status</th><th>why</th></tr>" + "".join(
        f"<tr><td>{escape(r.student)}</td><td>{escape(r.status)}</td><td>{escape('; '.join(r.details))}</td></tr>"
        for r in problems) + "</table>" if problems else "<p>None.</p>")
    if unmatched:
        out.append("<h2>Files in the LMS download that name no student</h2><ul>"
                   + "".join(f"<li>{escape(f)}</li>" for f in unmatched) + "</ul>")
    out.append("</body></html>")
    return "\n".join(out)


def write_report(course: Course, assignment: str, table: ClassTable | None = None) -> Path:
    """Write the report (``course.report(assignment)``) and return its path (``table`` as in
    :func:`coursetools.exports.export`)."""
    rows, cells = table or class_table(course, assignment)
    unmatched = load_state(course, assignment).get(UNMATCHED, [])
    path = course.report(assignment)
    write_atomically(path, render(assignment, rows, cells, unmatched))
    return path
