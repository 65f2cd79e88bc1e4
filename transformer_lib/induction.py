"""Induction heads: a task with repeated segments, an attention-only model, and the scores that find the head.

An *induction head* (Olsson et al., 2022, "In-context Learning and Induction Heads") completes a
pattern it has seen earlier in its context: at a token ``A`` it looks back to the token that
followed the previous ``A`` and predicts that token again (``... A B ... A -> B``). It needs two
heads in two layers: a *previous-token* head in the first layer writes into each position which
token came before it, and the induction head in the second layer matches the current token
against that record, so its query at ``A`` finds the key of the position after the earlier ``A``.

:func:`repeat_task` builds sequences where that is the only way to predict many of the tokens:
each sequence starts with a segment of ``L`` tokens drawn from a fixed Markov chain (a "language"
whose next token depends on the current one only), then the same ``L`` tokens again, then the
chain goes on to the sequence's length. ``L`` is drawn anew for each sequence, so the repeat
starts at no fixed position: a head that attends a fixed distance back (positions alone) cannot
find it, matching tokens can. A counted n-gram learns the chain and nothing more (the repeat is
as random to it as the segment); a model that copies from its context predicts the repeat almost
exactly.

:class:`AttentionOnlyLM` is a small model in which it can form: token and learned position
embeddings, ``num_layers`` residual blocks of pre-LN multi-head causal self-attention
(:class:`~transformer_lib.multihead.MultiHeadAttention`) and no feed-forward network, then a
layer norm and a linear read-out. It keeps every layer's attention weights of its last call in
:attr:`AttentionOnlyLM.weights`. :func:`induction_scores` and :func:`previous_token_scores`
measure, per head, the attention that goes where each pattern says it should.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from transformer_lib.attention import causal_mask
from transformer_lib.lm_training import sequence_losses
from transformer_lib.models import init_gpt2_
from transformer_lib.multihead import MultiHeadAttention

__all__ = ["RepeatTask", "repeat_task", "parts", "AttentionOnlyLM", "induction_scores", "previous_token_scores",
           "train_on_repeats"]


@dataclass
class RepeatTask:
    """Sequences of ``2 * half`` tokens: a segment of ``L`` chain tokens, the same again, then the chain.

    ``L`` is drawn uniformly from ``half // 2 .. half`` for each sequence.

    Attributes:
        transitions: ``(V, V)``, row ``a`` the distribution of the token after ``a``.
        half: the longest segment; every sequence has ``2 * half`` tokens.
    """

    transitions: Tensor
    half: int

    @property
    def vocab_size(self) -> int:
        return self.transitions.shape[0]

    def _chain(self, start: Tensor, length: int, generator: torch.Generator) -> Tensor:
        """``(n, length)``: the chain run on from the tokens ``start`` ``(n,)`` (which are not included)."""
        tokens, last = [], start
        for _ in range(length):
            last = torch.multinomial(self.transitions[last], 1, generator=generator)[:, 0]
            tokens.append(last)
        return torch.stack(tokens, dim=1)

    def sample(self, n: int, generator: torch.Generator) -> tuple[Tensor, Tensor]:
        """``(ids, lengths)``: ``(n, 2 * half)`` token ids and ``(n,)`` segment lengths ``L``.

        Row ``i`` is ``s, s, c`` with ``s`` a chain segment of ``lengths[i]`` tokens (its first
        uniform) and ``c`` the chain continued from the last token of ``s``.
        """
        first = torch.randint(self.vocab_size, (n,), generator=generator)
        stream = torch.cat([first[:, None], self._chain(first, 2 * self.half - 1, generator)], dim=1)  # (n, 2 half)
        lengths = torch.randint(self.half // 2, self.half + 1, (n,), generator=generator)
        ids = stream.clone()
        for i, L in enumerate(lengths.tolist()):
            # the segment, its repeat, then the rest of the chain (which picks up after the segment's end)
            ids[i, L:2 * L] = stream[i, :L]
            ids[i, 2 * L:] = stream[i, L:2 * self.half - L]
        return ids, lengths

    def entropy_rate(self) -> float:
        """The chain's entropy per token in nats (its stationary mean): what knowing the chain alone leaves."""
        p = self.transitions.double()
        V = p.shape[0]
        # The stationary distribution pi: pi p = pi and sum(pi) = 1, solved by least squares, (V,).
        a = torch.cat([p.T - torch.eye(V, dtype=p.dtype), torch.ones(1, V, dtype=p.dtype)])  # (V + 1, V)
        b = torch.cat([torch.zeros(V, dtype=p.dtype), torch.ones(1, dtype=p.dtype)])[:, None]  # (V + 1, 1)
        stationary = torch.linalg.lstsq(a, b).solution[:, 0]
        row_entropy = -(p * p.clamp_min(1e-300).log()).sum(1)  # (V,)
        return float(stationary @ row_entropy)


def parts(lengths: Tensor, T: int) -> dict[str, Tensor]:
    """Boolean masks ``(n, T - 1)`` over a model's predictions (column ``t`` predicts token ``t + 1``).

    ``"segment"``: the segment's own tokens ``1 .. L - 1`` (from the chain only); ``"repeat"``:
    tokens ``L + 1 .. 2 L - 1``, each the successor of an earlier occurrence of the token before
    it (the repeat's first token ``L`` is excluded: nothing before it says the repeat starts);
    ``"rest"``: every other prediction.
    """
    t = torch.arange(T - 1)[None, :]  # (1, T - 1): the column; the target is token t + 1
    L = lengths[:, None]  # (n, 1)
    segment = t + 1 <= L - 1
    repeat = (t + 1 >= L + 1) & (t + 1 <= 2 * L - 1)
    return {"segment": segment, "repeat": repeat, "rest": ~(segment | repeat)}


def repeat_task(vocab_size: int = 64, half: int = 32, concentration: float = 0.3, seed: int = 0) -> RepeatTask:
    """A :class:`RepeatTask` whose chain has rows drawn from a symmetric Dirichlet(``concentration``).

    A small ``concentration`` makes each row peaked (a few likely successors), so the chain has
    structure that counting can learn; the repeated half is predictable only from the context.
    """
    if vocab_size < 2 or half < 2 or concentration <= 0:
        raise ValueError(f"need vocab_size >= 2, half >= 2 and concentration > 0, got {vocab_size}, {half}, "
                         f"{concentration}")
    generator = torch.Generator().manual_seed(seed)
    gammas = torch._standard_gamma(torch.full((vocab_size, vocab_size), float(concentration), dtype=torch.float64),
                                   generator=generator)
    transitions = (gammas / gammas.sum(1, keepdim=True)).float()
    return RepeatTask(transitions, half)


class AttentionOnlyLM(nn.Module):
    """Embeddings, ``num_layers`` pre-LN causal self-attention blocks (no feed-forward), a read-out.

    ``forward(ids)`` maps ``(B, T)`` ids to ``(B, T, vocab_size)`` logits and stores each layer's
    attention weights, ``(B, num_heads, T, T)``, in :attr:`weights`.
    """

    def __init__(self, vocab_size: int, d_model: int, num_heads: int, num_layers: int, max_len: int) -> None:
        super().__init__()
        self.token = nn.Embedding(vocab_size, d_model)
        self.position = nn.Embedding(max_len, d_model)
        self.norms = nn.ModuleList(nn.LayerNorm(d_model) for _ in range(num_layers))
        self.attention = nn.ModuleList(MultiHeadAttention(d_model, num_heads) for _ in range(num_layers))
        self.final_norm = nn.LayerNorm(d_model)
        self.read_out = nn.Linear(d_model, vocab_size)
        self.max_len = max_len
        self.weights: list[Tensor] = []
        init_gpt2_(self, num_layers)  # as chapter 8's GPT: its first loss is close to ln(vocab_size)

    def forward(self, ids: Tensor) -> Tensor:
        if ids.dim() != 2 or ids.shape[1] > self.max_len:
            raise ValueError(f"expected ids of shape (batch, seq <= {self.max_len}), got {tuple(ids.shape)}")
        T = ids.shape[1]
        x = self.token(ids) + self.position(torch.arange(T, device=ids.device))  # (B, T, d_model)
        mask = causal_mask(T, device=ids.device)  # (T, T), True = may attend
        self.weights = []
        for norm, attention in zip(self.norms, self.attention):
            h = norm(x)
            out, w = attention(h, h, h, mask)  # (B, T, d_model), (B, heads, T, T)
            x = x + out
            self.weights.append(w.detach())
        return self.read_out(self.final_norm(x))


def induction_scores(weights: Tensor, lengths: Tensor) -> Tensor:
    """Per head, the mean attention from each repeated token to the token after its first occurrence.

    ``weights``: ``(B, h, T, T)`` of a model reading ``x[:-1]`` of :class:`RepeatTask` sequences
    whose segment lengths are ``lengths`` ``(B,)``. Query ``t`` with ``L <= t <= 2 L - 2`` holds
    ``x[t] = x[t - L]``; the induction pattern attends to key ``t - L + 1``. Returns ``(h,)``, each
    in ``[0, 1]`` (1: all of the attention of every such query there).
    """
    rows, queries, keys = [], [], []
    for i, L in enumerate(lengths.tolist()):
        t = torch.arange(L, 2 * L - 1)
        rows.append(torch.full_like(t, i))
        queries.append(t)
        keys.append(t - L + 1)
    rows, queries, keys = torch.cat(rows), torch.cat(queries), torch.cat(keys)
    return weights[rows, :, queries, keys].mean(dim=0)  # (pairs, h) -> (h,)


def previous_token_scores(weights: Tensor) -> Tensor:
    """Per head, the mean attention from each position ``t >= 1`` to ``t - 1``: ``(B, h, T, T)`` -> ``(h,)``."""
    T = weights.shape[-1]
    queries = torch.arange(1, T)
    return weights[:, :, queries, queries - 1].mean(dim=(0, 2))


def train_on_repeats(model: nn.Module, task: RepeatTask, steps: int, batch_size: int = 32, lr: float = 3e-3,
                     seed: int = 0, eval_every: int = 50,
                     eval_sequences: tuple[Tensor, Tensor] | None = None) -> dict[str, list]:
    """Train ``model`` (ids ``(B, T)`` -> logits ``(B, T, V)``) on fresh :class:`RepeatTask` batches.

    AdamW with a linear warm-up over the first tenth of the steps, then a cosine to zero. Every
    ``eval_every`` steps (and at the end) on ``eval_sequences`` (``(ids, lengths)`` as
    :meth:`RepeatTask.sample` returns them) it records the mean loss of the segment's predictions
    (``segment``) and of the repeat's (``repeat``), see :func:`parts`, and for an
    :class:`AttentionOnlyLM` the best head's induction score in its last layer (``induction``).
    Returns ``{"step": [...], "segment": [...], "repeat": [...], "induction": [...]}``.
    """
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    warmup = max(1, steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min((s + 1) / warmup, 0.5 * (1 + math.cos(
        math.pi * min(1.0, max(0, s - warmup) / max(1, steps - warmup))))))
    history: dict[str, list] = {"step": [], "segment": [], "repeat": [], "induction": []}

    def record(step: int) -> None:
        if eval_sequences is None:
            return
        ids, lengths = eval_sequences
        losses = sequence_losses(model, ids)  # (n, T - 1); an AttentionOnlyLM's weights now hold these sequences
        masks = parts(lengths, ids.shape[1])
        history["step"].append(step)
        history["segment"].append(losses[masks["segment"]].mean().item())
        history["repeat"].append(losses[masks["repeat"]].mean().item())
        if isinstance(model, AttentionOnlyLM):
            history["induction"].append(induction_scores(model.weights[-1], lengths).max().item())

    for step in range(steps):
        if step % eval_every == 0:
            record(step)
        batch, _ = task.sample(batch_size, generator)  # (B, 2 half)
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
    record(steps)
    return history
