# Builds the mask with tril at the offset diagonal S - T (minus a tril shifted back by the window) instead of arange
# distances; checks T < 1 and T > S separately.
def chunk_causal_mask(T: int, S: int, window: int | None = None) -> torch.Tensor:
    """(T, S) boolean mask, True = may attend, for the last T of S positions.

    Query t sits at position p = S - T + t and may attend keys s with s <= p (and, with a
    window, s > p - window).
    """
    if T < 1:
        raise ValueError(f"a chunk holds at least one query, got T={T} (S={S})")
    if T > S:
        raise ValueError(f"the queries are the last T of S positions, so T <= S; got T={T}, S={S}")
    if window is not None and window < 1:
        raise ValueError(f"window must be at least 1, got window={window}")
    ones = torch.ones(T, S, dtype=torch.bool)
    mask = ones.tril(diagonal=S - T)                        # s - t <= S - T, i.e. s <= p
    if window is not None:
        mask = mask & ~ones.tril(diagonal=S - T - window)   # drop s <= p - window
    return mask
