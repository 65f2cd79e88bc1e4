"""The visible tests' check of what an answer uses: the grader's scan, on the code run in this kernel.

An exercise whose instructions restrict the means states one line, ``**May use:** ...; **not:** ...``
(:mod:`coursetools.common.allowlist`). Its first visible test cell starts with
``assert_may_use("<the answer's names>", "<that line, verbatim>")``, which reads the cells run in
this kernel (IPython's input history: for each name only the latest cell that binds it, so an answer
fixed and run again replaces the flagged one; the test cell itself left out) with the grader's
:func:`~coursetools.common.pyscan.rule_findings` and the allow-list parsed from the same line, and
fails naming each use outside it (cell, line, what was used, the rule that refuses it). A student
learns at once what the grader would withhold the exercise's points for.

When the notebook is being graded (the kernel imported :mod:`coursetools.checks.bridge`, which only
grading does) the scan of the submitted file decides, and an instructor can clear its finding with
``make review``; a failed visible test could not be cleared, so here the check only prints what it found.
"""

from __future__ import annotations

import sys

from IPython import get_ipython

from coursetools.common.allowlist import parse_may_use
from coursetools.common.pyscan import Finding, history_findings

GRADING = "coursetools.checks.bridge"  # imported into the kernel by grading only (coursetools.grading.checked_execute)


def assert_may_use(names: str, line: str) -> None:
    """Fail unless the answer that binds ``names`` (comma-separated: ``"rnn_step"``), and the code of this
    kernel it reaches, keep to the exercise's May-use ``line``; under grading, print what is outside it."""
    allowed = parse_may_use(line)
    if allowed is None:
        raise ValueError(f"not a '**May use:** ...; **not:** ...' line: {line!r}")
    shell = get_ipython()
    inputs = list(shell.history_manager.input_hist_parsed) if shell is not None else []
    if len(inputs) < 2:  # no kernel history (a plain Python process): nothing to read
        return
    history = [(f"In [{number}]", code) for number, code in enumerate(inputs[1:-1], start=1)]
    answer = [name.strip() for name in names.split(",")]
    findings = history_findings(history, inputs[-1], answer, allowed)
    if not findings:
        return
    report = _report(findings, dict(history), names, line)
    if GRADING in sys.modules:
        print(f"{report}\n(Graded: the grader's scan of your notebook decides; your instructor can clear it.)")
        return
    raise AssertionError(report)


def _report(findings: list[Finding], cells: dict[str, str], names: str, line: str) -> str:
    """Each finding with its line of code, then the rule and why it matters."""
    lines = [f"{names} uses what this exercise's May-use line refuses:"]
    for finding in findings:
        code = cells.get(finding.cell, "").splitlines()
        text = code[finding.line - 1].strip() if 0 < finding.line <= len(code) else ""
        lines.append(f"  {finding}" + (f"\n      {text[:160]}" if text else ""))
    lines.append(f"This exercise is to be written with the means its instructions allow:\n  {line}\n"
                 "The grader reads your notebook the same way and withholds this exercise's points for a use "
                 "outside the list. Change the answer, run its cell again, then this test.")
    return "\n".join(lines)
