"""Measuring the memory PyTorch tensors take while some code runs (chapters 10-11), on any device.

Python's ``tracemalloc`` does not see PyTorch's buffers, so ``PeakTensorMemory`` counts them at
the source: a ``TorchDispatchMode`` sees every tensor each PyTorch operation creates, adds its
bytes when it is created and subtracts them when it is freed, and records the peak. Views share
the bytes of their base; views of tensors made before the measurement (the inputs) cost nothing.
A kernel's private scratch space stays invisible to it.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

__all__ = ["PeakTensorMemory", "peak_bytes"]


class PeakTensorMemory(TorchDispatchMode):
    """Peak bytes held by tensors created while the mode is on: ``with PeakTensorMemory() as m: ...; m.peak``."""

    def __init__(self) -> None:
        super().__init__()
        self.owners: dict[int, list[int]] = {}  # address -> [bytes, live users]
        self.current = self.peak = 0

    def _drop(self, address: int) -> None:
        entry = self.owners[address]
        entry[1] -= 1
        if entry[1] == 0:
            self.current -= entry[0]
            del self.owners[address]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        produced = func(*args, **kwargs)
        tensors = [t for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)]
        inputs = {t.untyped_storage().data_ptr() for t in tensors}
        for tensor in tree_flatten(produced)[0]:
            if isinstance(tensor, torch.Tensor):
                storage = tensor.untyped_storage()
                address = storage.data_ptr()
                if address in inputs and address not in self.owners:
                    continue  # a view of (or an in-place change to) a tensor made before the mode
                entry = self.owners.setdefault(address, [storage.nbytes(), 0])
                if entry[1] == 0:
                    self.current += entry[0]
                    self.peak = max(self.peak, self.current)
                entry[1] += 1
                weakref.finalize(tensor, self._drop, address)
        return produced


def peak_bytes(run: Callable[[], object]) -> int:
    """The peak bytes of the tensors that ``run()`` creates (its result included while it lives)."""
    with PeakTensorMemory() as meter:
        run()
    return meter.peak
