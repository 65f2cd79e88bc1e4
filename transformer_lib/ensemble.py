"""An ensemble of encoder-decoders, decoded as one model: the mean of their next-token distributions.

Models trained from different seeds make partly different mistakes, and where one is unsure the
others often are not. Averaging their predicted probabilities at every decoding step, and choosing
from the average, is the oldest way to combine them (Hansen and Salamon 1990, "Neural network
ensembles"; Sutskever et al. 2014 decoded with an ensemble of five LSTMs in the same way).

:class:`Ensemble` keeps the encoder-decoder protocol of :mod:`transformer_lib.decoding`:
``encode(src)`` returns the members' memories, ``decode(tgt, memory, src)`` returns
``log(mean_i softmax(logits_i))``, which are normalised logits. Greedy decoding, beam search and
:func:`~transformer_lib.g2p.pronounce` therefore work on an ensemble unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn

__all__ = ["Ensemble", "EnsembleMemory"]


class EnsembleMemory(tuple):
    """One memory per member, in the members' order."""

    def repeat_interleave(self, repeats: int, dim: int = 0) -> EnsembleMemory:
        """Each member's memory with every row repeated (beam search copies the memory so)."""
        return EnsembleMemory(memory.repeat_interleave(repeats, dim=dim) for memory in self)


class Ensemble(nn.Module):
    """Encoder-decoders that decode together.

    Args:
        models: one or more encoder-decoders with the same target vocabulary (each with
            ``encode(src)`` and ``decode(tgt, memory, src)``, such as
            :class:`~transformer_lib.models.Transformer` and the recurrent models).
    """

    def __init__(self, models: Sequence[nn.Module]) -> None:
        super().__init__()
        if len(models) == 0:
            raise ValueError("an ensemble needs at least one model, got none")
        for i, model in enumerate(models):
            if not (hasattr(model, "encode") and hasattr(model, "decode")):
                raise TypeError(f"models[{i}] must have encode(src) and decode(tgt, memory, src), "
                                f"got {type(model).__name__}")
        self.members = nn.ModuleList(models)

    def encode(self, src: torch.Tensor) -> EnsembleMemory:
        """``src`` ``(B, S)`` -> every member's memory."""
        return EnsembleMemory(member.encode(src) for member in self.members)

    def decode(self, tgt: torch.Tensor, memory: EnsembleMemory, src: torch.Tensor) -> torch.Tensor:
        """``tgt`` ``(B, T)`` -> ``(B, T, vocab_size)``: the log of the members' mean probabilities."""
        log_probs = [member.decode(tgt, part, src).log_softmax(dim=-1) for member, part in zip(self.members, memory)]
        shapes = {tuple(lp.shape) for lp in log_probs}
        if len(shapes) > 1:
            raise ValueError(f"the members must predict over the same target vocabulary; their outputs have shapes "
                             f"{[tuple(lp.shape) for lp in log_probs]}")
        return torch.logsumexp(torch.stack(log_probs), dim=0) - math.log(len(log_probs))
