"""Shared pytest set-up: tests/ on sys.path (for course_helpers and library_helpers), a headless
matplotlib, and the fixtures more than one test module uses."""

import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")
sys.path.insert(0, str(Path(__file__).parent))


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
