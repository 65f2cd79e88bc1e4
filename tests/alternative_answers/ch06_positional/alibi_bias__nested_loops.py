# Fills the bias entry by entry in three Python loops (heads, queries, keys), with the slope 2^(-8/H) raised to h + 1
# and math.log2 for the power-of-two check.
def alibi_bias(num_heads: int, T: int) -> torch.Tensor:
    """ALiBi's causal bias: (num_heads, T, T) float64, -m_h (i - j) for j <= i, -inf for j > i."""
    if T < 1:
        raise ValueError(f"T must be >= 1, got {T}")
    if num_heads < 1 or not math.log2(num_heads).is_integer():
        raise ValueError(f"num_heads must be a power of two, got {num_heads}")
    ratio = 2.0 ** (-8.0 / num_heads)
    bias = torch.empty(num_heads, T, T, dtype=torch.float64)
    for h in range(num_heads):
        slope = ratio ** (h + 1)
        for i in range(T):
            for j in range(T):
                bias[h, i, j] = -slope * (i - j) if j <= i else float("-inf")
    return bias
