# |i - j| on both sides of the diagonal (the encoder variant), no -inf for the future.
def alibi_bias(num_heads, T):
    if num_heads < 1 or num_heads & (num_heads - 1) or T < 1:
        raise ValueError(f"num_heads={num_heads}, T={T}")
    slopes = 2.0 ** (-8.0 * torch.arange(1, num_heads + 1, dtype=torch.float64) / num_heads)
    i = torch.arange(T, dtype=torch.float64)
    return -slopes[:, None, None] * (i[:, None] - i[None, :]).abs()
