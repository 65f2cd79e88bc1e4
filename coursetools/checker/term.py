"""Hidden inputs that change each term.

A class that records the inputs its functions are called with during the hidden checks can print
them into its feedback, and next term's class could fit a lookup table to them. So the hidden blocks
take their seeds through ``term_seed(n)`` (a name the checker gives every hidden block): with the
term seed an instructor sets in ``nbgrader_config.py`` (``c.CheckedExecute.term_seed``; 0 keeps the
seeds as written), each ``n`` becomes another seed, the same for every student of the term, or for
one student only with ``c.CheckedExecute.seed_per_student = True``. The checker computes every
expected value from its own references, so any seed grades the same.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable


def term_seeds(term: int, student: str = "") -> Callable[[int], int]:
    """The ``term_seed`` function of a term (and of one student when ``student`` is given): ``n`` itself
    for term 0 and no student, else a 48-bit number drawn from the term, the student and ``n``."""
    if term == 0 and not student:
        return int

    def term_seed(n: int) -> int:
        digest = hashlib.sha256(f"{term}:{student}:{int(n)}".encode()).digest()
        return int.from_bytes(digest[:6], "little")

    return term_seed
