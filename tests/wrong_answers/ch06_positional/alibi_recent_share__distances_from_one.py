# The distances counted 1 .. T instead of 0 .. T - 1 (a shift that the ratio does not cancel when the window is capped).
def alibi_recent_share(num_heads, window, T):
    if num_heads < 1 or num_heads & (num_heads - 1) or T < 1 or window < 1:
        raise ValueError(f"num_heads={num_heads}, window={window}, T={T}")
    slopes = 2.0 ** (-8.0 * torch.arange(1, num_heads + 1, dtype=torch.float64) / num_heads)
    return torch.expm1(-slopes * window) / torch.expm1(-slopes * T)
