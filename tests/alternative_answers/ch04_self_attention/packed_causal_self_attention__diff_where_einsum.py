# Numbers the runs with torch.diff and cumsum, masks the scores with torch.where and uses einsum for both products.
def packed_causal_self_attention(x: torch.Tensor, segment_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Causal self-attention within each of the sequences packed in a row.

    Args:
        x: (B, N, d), several sequences back to back in each row.
        segment_ids: (B, N), the sequence each token belongs to.

    Returns:
        (output (B, N, d), weights (B, N, N)): token n attends to the tokens m <= n of its own sequence.
    """
    B, N, d = x.shape
    starts = torch.diff(segment_ids, dim=1, prepend=segment_ids[:, :1]) != 0    # True where a new sequence begins
    run = starts.long().cumsum(dim=1)                                           # (B, N): 0, 0, 0, 1, 1, 2, ...
    positions = torch.arange(N, device=x.device)
    allowed = (run[:, :, None] == run[:, None, :]) & (positions[None, :, None] >= positions[None, None, :])
    scores = torch.einsum("bnd,bmd->bnm", x, x) / d ** 0.5
    scores = torch.where(allowed, scores, torch.full_like(scores, float("-inf")))
    weights = torch.softmax(scores, dim=-1)
    return torch.einsum("bnm,bmd->bnd", weights, x), weights
