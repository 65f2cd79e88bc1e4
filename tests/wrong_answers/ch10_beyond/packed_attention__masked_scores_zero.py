# Wrong answer: two bugs fixed; masked scores set to 0 instead of -inf.
def packed_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                     cu_seqlens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Causal attention within each packed sequence. q, k, v (h, N, d_k) -> (out (h, N, d_k), weights (h, N, N))."""
    n_tokens = q.shape[-2]
    bounds = cu_seqlens.tolist()
    if not bounds or bounds[0] != 0 or bounds[-1] != n_tokens or any(b <= a for a, b in zip(bounds, bounds[1:])):
        raise ValueError(f"cu_seqlens must start at 0, end at N={n_tokens} and strictly increase, got {bounds}")
    positions = torch.arange(n_tokens)
  
    sequence = torch.searchsorted(cu_seqlens, positions, right=True) - 1
    allowed = (sequence[:, None] == sequence[None, :]) & (positions[:, None] >= positions[None, :])
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
  
    weights = torch.softmax(scores.masked_fill(~allowed, 0.0), dim=-1)
    return weights @ v, weights
