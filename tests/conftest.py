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
    """Slow tests first (the sort is stable, so each module stays together): in ``make test``'s
    parallel run (pytest-xdist, ``--dist loadscope``: a module's tests on one worker, its
    module-scoped fixtures built once) the long modules start early and the short ones fill in."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


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
