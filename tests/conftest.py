"""Shared pytest set-up: tests/ on sys.path (for course_helpers and library_helpers), a headless
matplotlib, how a parallel run shares the tests out, and the fixtures more than one test module
uses."""

import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")
sys.path.insert(0, str(Path(__file__).parent))


# The slow modules, longest first (seconds each on one core of 2 busy ones, 2026-11-29: make test-deep's hidden
# attacks ~205 and the student's fresh venv ~200; then the hostile submissions ~110, the class end to end ~100,
# the browser ~60, one assignment's round trip 30-45, the rest < 45).
SLOWEST_FIRST = ["test_hidden_attacks", "test_student_edition", "test_hostile_submissions", "test_class_end_to_end",
                 "test_browser", "test_grading_config", "test_sandbox", "test_notebooks", "test_book",
                 "test_grading_pipeline"]
# Modules whose tests (or module-scoped fixture) are parametrized by assignment: each assignment is a
# unit of its own in a parallel run, so that twelve round trips (or surprise searches) do not queue on one worker.
SPLIT_BY_ASSIGNMENT = {"tests/test_notebooks.py", "tests/test_wrong_answers.py", "tests/test_surprises.py",
                       "tests/test_lazy_answers.py", "tests/test_term_seed.py",
                       "tests/test_each_hidden_block.py"}
# Modules that must share a worker: test_book builds the book that test_browser reads (when make test has not).
SHARED_UNITS = {"tests/test_book.py": "built book", "tests/test_browser.py": "built book"}


def _slowness_rank(item: pytest.Item) -> int:
    if item.get_closest_marker("slow") is None:
        return len(SLOWEST_FIRST) + 1
    module = item.path.stem
    return SLOWEST_FIRST.index(module) if module in SLOWEST_FIRST else len(SLOWEST_FIRST)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Slow modules first, longest first (the sort is stable, so each module stays together): in
    ``make test``'s parallel run the long units start early and the short ones fill in."""
    items.sort(key=_slowness_rank)


def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadscope`` (``make test``): a module's tests run on one worker, so that its
    module-scoped fixtures are built once, except that ``SPLIT_BY_ASSIGNMENT`` modules are split
    by assignment and ``SHARED_UNITS`` modules run together; units are handed out in collection order (see
    ``pytest_collection_modifyitems``)."""
    # Why not xdist's own --dist loadgroup with xdist_group marks: under the pinned pytest 9.2 it
    # does not group at all. xdist 3.8 tags a grouped test by assigning ``item._nodeid``, but
    # pytest 9 derives ``item.nodeid`` from ``item._id``, so the tag never reaches the scheduler,
    # which then makes every test a unit of its own (a module-scoped fixture of a module marked
    # ``xdist_group`` was built on both workers in a two-test-file case). Plain loadscope cannot
    # split one module by assignment nor join two modules, hence this subclass.
    if config.getoption("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    from coursetools.authoring.sources import assignments
    from coursetools.common.layout import REPO_ROOT

    known = set(assignments(REPO_ROOT))

    class AssignmentScopeScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            if module in SHARED_UNITS:
                return SHARED_UNITS[module]
            if module in SPLIT_BY_ASSIGNMENT and nodeid.endswith("]"):
                params = nodeid[nodeid.index("[") + 1:-1].split("-")
                assignment = next((p for p in params if p in known), None)
                if assignment is not None:
                    return f"{module}[{assignment}]"
            return super()._split_scope(nodeid)

    config.option.loadscopereorder = False  # keep the order above, not "most tests first"
    return AssignmentScopeScheduling(config, log)


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
