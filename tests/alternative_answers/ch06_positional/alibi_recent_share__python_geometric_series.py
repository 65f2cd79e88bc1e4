# Sums the geometric series with Python floats per head, r = exp(-m), (1 - r^w) / (1 - r^T), and makes the tensor at
# the end, instead of torch.expm1 on a tensor of slopes.
def alibi_recent_share(num_heads: int, window: int, T: int) -> torch.Tensor:
    """(num_heads,) float64: the share of the last query's attention on its `window` most recent keys, equal
    contents."""
    if window < 1:
        raise ValueError(f"window must be at least 1, got window={window}")
    if T < 1:
        raise ValueError(f"T must be at least 1, got T={T}")
    if num_heads < 1 or (num_heads & (num_heads - 1)) != 0:
        raise ValueError(f"num_heads must be a power of two, got num_heads={num_heads}")
    shares = []
    for h in range(num_heads):
        ratio = math.exp(-(2.0 ** (-8 * (h + 1) / num_heads)))  # weight of distance delta: ratio ** delta
        if window >= T:
            shares.append(1.0)
        else:
            shares.append((1 - ratio ** window) / (1 - ratio ** T))
    return torch.tensor(shares, dtype=torch.float64)
