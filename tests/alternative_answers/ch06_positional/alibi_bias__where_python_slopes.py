# Takes the slopes as Python floats, the power-of-two test with bin(), the distance j - i as a positive slope times a
# negative distance, and torch.where with a triu mask for the future instead of masked_fill.
def alibi_bias(num_heads: int, T: int) -> torch.Tensor:
    """ALiBi's causal bias: (num_heads, T, T) float64, -m_h (i - j) for j <= i, -inf for j > i."""
    if num_heads < 1 or bin(num_heads).count("1") != 1:
        raise ValueError(f"ALiBi's slopes need a power-of-two number of heads, got num_heads={num_heads}")
    if T < 1:
        raise ValueError(f"need at least one position, got T={T}")
    slopes = torch.tensor([2.0 ** (-8 * (h + 1) / num_heads) for h in range(num_heads)], dtype=torch.float64)
    index = torch.arange(T)
    key_minus_query = (index[None, :] - index[:, None]).to(torch.float64)   # (T, T): j - i, <= 0 in the past
    bias = slopes.view(-1, 1, 1) * key_minus_query                            # -m (i - j)
    future = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)
    return torch.where(future, torch.tensor(float("-inf"), dtype=torch.float64), bias)
