# Copy of transformer_lib.attention.causal_mask (printed on the chapter page), cut to T rows as the library's is_causal path does (causal_mask(S)[:T]), with the band of the chapter 10 page for the window; renamed.
def chunk_causal_mask(T: int, S: int, window: int | None = None) -> torch.Tensor:
    """(T, S) boolean mask, True = may attend, for the last T of S positions."""
    mask = torch.ones(S, S, dtype=torch.bool).tril()
    if window is not None:
        mask = mask.triu(-(window - 1))
    return mask[:T]
