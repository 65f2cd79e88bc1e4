"""The benchmark scripts still run (smoke runs at tiny sizes); their numbers are not asserted."""

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each runs a benchmark script in a subprocess
BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.mark.parametrize("script, args, expected", [
    ("bench_modules.py", ["--quick"], ["MultiHeadAttention", "GPT (train step)", "identical tokens: True"]),
    ("bench_training.py", ["--quick", "--only", "throughput"], ["| throughput, ours", "ratio"]),
    ("bench_g2p.py", ["--quick"], ["valid WER", "as one ensemble, greedy and beam 4", "100 valid words"]),
    ("bench_scale.py", ["--quick", "--jobs", "1"], ["d_model  16,    64 steps", "4 runs in"]),
    ("train_lm.py", ["--quick", "--jobs", "1", "--d-model", "32", "--context", "64"], ["3 runs in"]),
    ("pretrain_reviews.py", ["--quick", "--jobs", "1"], ["5 runs in"]),
    ("adapt_reviews.py", ["--quick", "--jobs", "1"], ["6 runs in"]),
])
def test_benchmark_smoke_run(script, args, expected):
    done = subprocess.run([sys.executable, str(BENCHMARKS / script), *args], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, f"{script} {' '.join(args)} failed:\n{done.stderr[-3000:]}"
    for text in expected:
        assert text in done.stdout, f"{script}: {text!r} missing from its output:\n{done.stdout[-3000:]}"


def test_every_benchmark_script_starts():
    """Each script imports and parses its arguments (bench_grading.py once imported a module that a move of
    coursetools had renamed, and nothing ran it)."""
    others = ("train_lm.py", "pretrain_reviews.py", "adapt_reviews.py", "make_python_corpus.py")
    scripts = [*BENCHMARKS.glob("bench_*.py"), *(BENCHMARKS / name for name in others)]
    for script in sorted(scripts):
        done = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and "usage" in done.stdout, f"{script.name} --help failed:\n{done.stderr[-2000:]}"
