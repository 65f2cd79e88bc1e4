"""The grader's end of the hidden tests: a :class:`Checker` in the grading process runs each hidden block
and reaches the student's kernel only through calls carrying plain data (the kernel's end is
:mod:`coursetools.checks`).

``from coursetools.checker import Fake`` is what a hidden block writes (the checker gives it its own
module with ``Fake`` and ``substitute``); the grading stages import :class:`Checker` from here.
"""

from coursetools.checker.errors import CheckTimeout
from coursetools.checker.proxies import Fake
from coursetools.checker.runner import BRIDGE_IMPORT, Checker

__all__ = ["BRIDGE_IMPORT", "CheckTimeout", "Checker", "Fake"]
