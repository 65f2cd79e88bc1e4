"""An optional late penalty: what an instructor writes (``10%/day, max 50%``) and the points it takes off.

A policy takes ``percent`` of the assignment's maximum points for each started ``unit`` (day or
hour) a submission is late, at most ``cap`` percent (all of them when no cap is given), as
Canvas's late policy does; a total never goes below 0. It is recorded per assignment in the state
file (``course report --late-penalty``) and applied only to the totals the course exports (the
course's CSV and the LMS uploads): the gradebook, formgrader and the feedback keep the points scored.
"""

from __future__ import annotations

import math
import re
from datetime import timedelta
from typing import NamedTuple

from coursetools.common.layout import Course
from coursetools.grading.state import LATE_PENALTY, load_state, update_state

UNITS = {"day": timedelta(days=1), "hour": timedelta(hours=1)}
EXAMPLE = "10%/day, max 50%"
_POLICY = re.compile(r"\s*(\d+(?:\.\d+)?)\s*%\s*/\s*(day|hour)\s*(?:,\s*max\s+(\d+(?:\.\d+)?)\s*%)?\s*", re.IGNORECASE)
NONE = "none"  # what removes a recorded policy


class LatePenalty(NamedTuple):
    """``percent`` of the maximum points per started ``unit`` late, at most ``cap`` percent (None: 100)."""

    percent: float
    unit: str
    cap: float | None

    def __str__(self) -> str:
        return f"{self.percent:g}%/{self.unit}" + (f", max {self.cap:g}%" if self.cap is not None else "")


def parse_late_penalty(text: str) -> LatePenalty:
    """The policy ``text`` writes: ``<p>%/day`` or ``<p>%/hour``, optionally ``, max <m>%``
    (0 < p, m <= 100); a ValueError naming the expected form otherwise."""
    found = _POLICY.fullmatch(text)
    policy = LatePenalty(float(found[1]), found[2].lower(), float(found[3]) if found[3] else None) if found else None
    if policy is None or not 0 < policy.percent <= 100 or not 0 < (100 if policy.cap is None else policy.cap) <= 100:
        raise ValueError(f"expected a late penalty like '{EXAMPLE}' or '5%/hour' (percentages of the maximum "
                         f"points, above 0 and at most 100), or '{NONE}', got {text!r}")
    return policy


def penalty_points(policy: LatePenalty | None, late_by: timedelta | None, marked_late: bool,
                   max_total: float) -> float | None:
    """The points ``policy`` takes off a submission ``late_by`` after the due date (None: on time or
    not known to be late); None when it is late by a time nobody knows (``marked_late`` by an LMS
    only), 0 without a policy."""
    if policy is None:
        return 0.0
    if late_by is None:
        return None if marked_late else 0.0
    started = math.ceil(late_by / UNITS[policy.unit])
    return max_total * min(policy.percent * started, 100.0 if policy.cap is None else policy.cap) / 100


def recorded_late_penalty(state: dict) -> LatePenalty | None:
    """The policy recorded in an assignment's state (None: no penalty)."""
    return parse_late_penalty(state[LATE_PENALTY]) if state.get(LATE_PENALTY) else None


def record_late_penalty(course: Course, assignment: str, text: str | None) -> LatePenalty | None:
    """The assignment's policy after recording ``text`` in its state: ``text`` parsed (``none``
    removes the policy), or the one recorded before when ``text`` is None."""
    if text is not None:
        policy = None if text.strip().lower() == NONE else parse_late_penalty(text)
        update_state(course, assignment, {LATE_PENALTY: str(policy) if policy else None})
    return recorded_late_penalty(load_state(course, assignment))
