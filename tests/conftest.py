"""Shared pytest set-up: tests/ on sys.path (for course_helpers and library_helpers), a headless
matplotlib, the order of the tests in a parallel run, and the fixtures more than one test module
uses."""

import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")
sys.path.insert(0, str(Path(__file__).parent))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """For ``make test`` (pytest-xdist, ``--dist loadgroup``): every test without an
    ``xdist_group`` mark joins its module's group, so a module runs on one worker and its
    module-scoped fixtures (a graded course copy, a virtual environment) are built once; the slow
    tests come first, so that the long groups start early and the short ones fill in around them.
    Without xdist the marks change nothing and the order only moves slow tests first."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: slow ones first


@pytest.fixture()
def beam_search_calls(monkeypatch) -> list[tuple[int, float]]:
    """(beam_size, alpha) of every beam search that ``transformer_lib.objectives`` runs in the test;
    each call still searches (the real ``beam_search`` answers)."""
    from transformer_lib import objectives

    search = objectives.beam_search
    calls: list[tuple[int, float]] = []

    def recording_beam_search(*args, **kwargs):
        calls.append((kwargs["beam_size"], kwargs["alpha"]))
        return search(*args, **kwargs)

    monkeypatch.setattr(objectives, "beam_search", recording_beam_search)
    return calls
