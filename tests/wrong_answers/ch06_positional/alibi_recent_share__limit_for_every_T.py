# The share of an infinitely long sequence, 1 - e^(-m w), for every T (the denominator of the finite series left out).
def alibi_recent_share(num_heads, window, T):
    if num_heads < 1 or num_heads & (num_heads - 1) or T < 1 or window < 1:
        raise ValueError(f"num_heads={num_heads}, window={window}, T={T}")
    slopes = 2.0 ** (-8.0 * torch.arange(1, num_heads + 1, dtype=torch.float64) / num_heads)
    return -torch.expm1(-slopes * min(window, T))
