"""The benchmark scripts still run (smoke runs at tiny sizes); their numbers are not asserted."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each runs a benchmark script in a subprocess
BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.mark.deep  # 160 s on one core: every one starts in make test (below)
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


# Runs each script named on its command line with --help, in this one process (one torch import, not one a
# script); prints a JSON list of [name, exit code, what it printed, the error].
HELP_EACH = r"""
import contextlib, io, json, os, runpy, sys, traceback
results = []
for script in sys.argv[1:]:
    out, code, error = io.StringIO(), None, ""
    sys.argv = [script, "--help"]
    sys.path[0] = os.path.dirname(script)  # as `python <script>` has it
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(script, run_name="__main__")
    except SystemExit as stop:
        code = stop.code or 0
    except BaseException:
        error = traceback.format_exc()[-2000:]
    results.append([script, code, out.getvalue(), error])
print(json.dumps(results))
"""


def test_every_benchmark_script_starts():
    """Each script imports and parses its arguments (bench_grading.py once imported a module that a move of
    coursetools had renamed, and nothing ran it)."""
    others = ("train_lm.py", "pretrain_reviews.py", "adapt_reviews.py", "make_python_corpus.py")
    scripts = sorted([*BENCHMARKS.glob("bench_*.py"), *(BENCHMARKS / name for name in others)])
    done = subprocess.run([sys.executable, "-c", HELP_EACH, *map(str, scripts)], capture_output=True, text=True,
                          timeout=300, cwd=BENCHMARKS.parent)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert [Path(script).name for script, *_ in results] == [script.name for script in scripts]
    failed = {Path(script).name: error or f"exit code {code}" for script, code, printed, error in results
              if code != 0 or "usage" not in printed}
    assert not failed, f"scripts whose --help failed: {failed}"
