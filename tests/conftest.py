"""Shared pytest set-up: tests/ on sys.path (for course_helpers), a headless matplotlib."""

import os
import sys
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")
sys.path.insert(0, str(Path(__file__).parent))
