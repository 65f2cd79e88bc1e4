# Gets the slopes from torch.logspace with base 2 and writes the share with plain exp, (1 - e^{-m w}) / (1 - e^{-m T}),
# clamping the window with torch.clamp on a tensor instead of min() and expm1.
def alibi_recent_share(num_heads: int, window: int, T: int) -> torch.Tensor:
    """(num_heads,) float64: the share of the last query's attention on its `window` most recent keys, equal
    contents."""
    if num_heads <= 0 or num_heads != 2 ** int(round(math.log2(num_heads))):
        raise ValueError(f"num_heads={num_heads} is not a power of two")
    if T < 1 or window < 1:
        raise ValueError(f"T and window must both be >= 1, got T={T}, window={window}")
    slopes = torch.logspace(-8 / num_heads, -8, num_heads, base=2, dtype=torch.float64)  # 2^(-8/H), ..., 2^-8
    length = torch.tensor(float(T), dtype=torch.float64)
    kept = torch.clamp(torch.tensor(float(window), dtype=torch.float64), max=length)
    return (1 - torch.exp(-slopes * kept)) / (1 - torch.exp(-slopes * length))
