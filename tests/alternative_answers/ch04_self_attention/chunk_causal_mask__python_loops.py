# Fills the mask with two Python loops over queries and keys (the condition written per entry) instead of tensor ops.
def chunk_causal_mask(T: int, S: int, window: int | None = None) -> torch.Tensor:
    """(T, S) boolean mask, True = may attend, for the last T of S positions.

    Query t sits at position p = S - T + t and may attend keys s with s <= p (and, with a
    window, s > p - window).
    """
    if window is not None and window < 1:
        raise ValueError(f"window must be >= 1 or None, got {window}")
    if T < 1 or T > S:
        raise ValueError(f"need 1 <= T <= S, got T={T} and S={S}")
    rows = []
    for t in range(T):
        p = S - T + t
        lowest = 0 if window is None else p - window + 1
        rows.append([lowest <= s <= p for s in range(S)])
    return torch.tensor(rows, dtype=torch.bool)
