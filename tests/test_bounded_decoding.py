"""Replies that would grow in the grader are refused while they are read (issue 49, item 3).

A reply is the student's: the kernel's bridge can be replaced. The wire (``coursetools/checks/wire.py``)
is JSON only, and every limit (a tensor's claimed bytes, nesting, items) holds before anything is
built. Measured by ``python tests/bounded_decoding_attack.py nests`` (or ``expands``) on 2 busy cores,
the checker's process (torch and Jupyter's client loaded: about 340 MiB at rest):

* twelve million nested lists: before, a pickle the grader unpickled in full (5.5 GiB all three cells,
  with the expand); now refused at the 101st level: 382 MiB, 0.2 s;
* ``torch.zeros(1).expand(2**27)``: before, 8 bytes of storage that the hidden block's ``.tolist()``
  grew; now refused by the kernel's side by its claimed 536,870,912 bytes: 336 MiB, 0.01 s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from coursetools.checks import wire

GRADER_PEAK_MIB = 1024
ATTACK = Path(__file__).with_name("bounded_decoding_attack.py")


FORGED = {  # Python expressions of the texts, built in the measuring process
    "nested more than 100 levels": 'wire.JSON + "[" * 12_000_000 + "]" * 12_000_000',
    "more than 1,048,576 items": 'wire.JSON + "[" + "[]," * 12_000_000 + "[]]"',
    "536,870,912 bytes": 'wire.JSON + \'{"x":["float32",[134217728],"AAAAAA==",false]}\'',  # an expand, forged
}
MEASURE = """
import json, sys, time
from bounded_decoding_attack import peak_mib
from coursetools.checks import wire
found = []
for text_code in json.loads(sys.argv[1]):
    text = eval(text_code)
    start = time.monotonic()
    try:
        wire.from_text(text)
        found.append(["", time.monotonic() - start])
    except wire.NotPlainData as error:
        found.append([str(error), time.monotonic() - start])
    del text
print(json.dumps({"found": found, "peak_mib": peak_mib()}))
"""


def test_forged_replies_are_refused_before_they_grow():
    """Decoded in a process of their own (one torch import for the three): each is refused, within a
    second, and the process's peak memory stays far below the grader's limit."""
    tests_folder = {**os.environ, "PYTHONPATH": str(Path(__file__).parent)}  # for bounded_decoding_attack.peak_mib
    done = subprocess.run([sys.executable, "-c", MEASURE, json.dumps(list(FORGED.values()))], capture_output=True,
                          text=True, timeout=300, check=True, env=tests_folder)
    result = json.loads(done.stdout)
    for refused, (raised, seconds) in zip(FORGED, result["found"]):
        assert refused in raised and seconds < 2, (refused, raised, seconds)
    assert result["peak_mib"] < GRADER_PEAK_MIB, result


def test_the_limits_are_stated_in_one_place():
    assert wire.MAX_TENSOR_BYTES == 48 * 2**20 and wire.MAX_TENSOR_BYTES // 3 * 4 <= wire.MAX_TEXT
    assert wire.MAX_JSON_DEPTH == 100 and wire.MAX_ITEMS == 2**20


@pytest.mark.slow
def test_growing_replies_fail_their_cell_and_the_rest_is_graded():
    """Through a real kernel and checker: the grader stays under 1 GiB, each attacked cell fails with
    the limit it passed, and the honest cell after them passes."""
    done = subprocess.run([sys.executable, str(ATTACK)], capture_output=True, text=True, timeout=600, check=True)
    found = json.loads(done.stdout)
    cells = found["cells"]
    assert "nested more than 100 levels" in cells["nests"]["reason"], cells
    assert "536,870,912 bytes" in cells["expands"]["reason"], cells
    assert not cells["nests"]["passed"] and not cells["expands"]["passed"] and cells["honest"]["passed"], cells
    assert found["peak_mib"] < GRADER_PEAK_MIB, found
