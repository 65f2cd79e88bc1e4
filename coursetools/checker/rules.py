"""The rules a hidden block sets (``forbid``, ``refuse``, ``substitute``), recorded here and sent with
each call into the kernel, and the ``coursetools.checks`` a hidden block imports in the checker."""

from __future__ import annotations

import contextlib
import importlib
import types
from typing import TYPE_CHECKING, Any, Iterator

from coursetools import checks
from coursetools.checker.proxies import KernelRef
from coursetools.checks.names import NO_AUTOGRAD_MESSAGE
from coursetools.checks.tamper import torch_original

if TYPE_CHECKING:
    from coursetools.checker.runner import Checker


def qualified(value: Any) -> dict:
    """A module, class or function of an importable module, as the kernel can find it again."""
    if isinstance(value, KernelRef):
        return value._ref
    if isinstance(value, types.ModuleType):
        return {"module": value.__name__, "qualname": ""}
    value = torch_original(value)  # nn.Module.__init__ once torch._dynamo has patched it, say
    module, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", "")
    found = importlib.import_module(module) if module else None
    for part in qualname.split("."):
        found = getattr(found, part, None)
    if torch_original(found) is not value:
        raise ValueError(f"a rule can only name importable modules, classes and functions, got {value!r}")
    return {"module": module, "qualname": qualname}


class Rules:
    """The rules in force (a stack), sent with each call into the kernel."""

    def __init__(self) -> None:
        self.stack: list[dict] = []

    @contextlib.contextmanager
    def active(self, rule: dict) -> Iterator[None]:
        self.stack.append(rule)
        try:
            yield
        finally:
            self.stack.remove(rule)

    def forbid(self, *references: Any) -> contextlib.AbstractContextManager:
        """:func:`coursetools.checks.refusals.forbid`, applied in the kernel around each call inside the block."""
        return self.active({"kind": "forbid", "targets": [qualified(r) for r in references]})

    def refuse(self, owner: Any, names: str | tuple[str, ...], message: str) -> contextlib.AbstractContextManager:
        """:func:`coursetools.checks.refusals.refuse`, applied in the kernel around each call inside the block."""
        names = [names] if isinstance(names, str) else list(names)
        return self.active({"kind": "refuse", "owner": qualified(owner), "names": names, "message": message})

    def no_autograd(self, message: str = NO_AUTOGRAD_MESSAGE) -> contextlib.AbstractContextManager:
        """:func:`coursetools.checks.refusals.no_autograd`, the one "no autograd" rule, applied in the kernel
        around each call inside the block."""
        return self.active({"kind": "no_autograd", "message": message})

    def size_limit(self, max_elements: int, message: str) -> contextlib.AbstractContextManager:
        """:func:`coursetools.checks.refusals.size_limit`, applied in the kernel around each call inside the block."""
        return self.active({"kind": "size_limit", "max_elements": int(max_elements), "message": message})


def checks_module(checker: Checker) -> types.ModuleType:
    """What ``from coursetools.checks import ...`` gives a hidden block: the same comparisons, with
    ``verify_untampered`` asked of the kernel and ``forbid``/``refuse``/``no_autograd``/``size_limit`` recorded for it.

    The comparisons run here, where no student code runs, so they do not check this process for
    tampering before each assertion as they do in the kernel (a millisecond each): the kernel is
    checked after each call made under a rule and at the end of each block."""
    module = types.ModuleType("coursetools.checks")
    untouched = {**vars(checks), "verify_untampered": lambda: None}
    for name in checks.__all__:
        value = original = getattr(checks, name)
        if type(original) is types.FunctionType and original.__globals__ is vars(checks):
            value = types.FunctionType(original.__code__, untouched, name, original.__defaults__, original.__closure__)
            value.__kwdefaults__ = original.__kwdefaults__
        module.__dict__[name] = value
    module.verify_untampered = lambda: checker.request("verify")
    module.forbid, module.refuse = checker.rules.forbid, checker.rules.refuse
    module.no_autograd, module.size_limit = checker.rules.no_autograd, checker.rules.size_limit
    return module
