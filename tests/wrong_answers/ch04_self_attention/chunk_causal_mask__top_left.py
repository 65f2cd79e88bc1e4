# The top-left aligned mask (the first T rows of causal_mask(S), PyTorch's is_causal for T != S).
def chunk_causal_mask(T, S, window=None):
    if not 1 <= T <= S or (window is not None and window < 1):
        raise ValueError(f"got T={T}, S={S}, window={window}")
    mask = torch.ones(S, S, dtype=torch.bool).tril()[:T]
    return mask if window is None else mask & ~torch.ones(T, S, dtype=torch.bool).tril(-window)
