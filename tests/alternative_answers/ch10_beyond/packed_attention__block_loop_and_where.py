# Builds the block-diagonal causal mask with a loop over the sequences (tril per block), fills with torch.where, einsum
# for the products; checks cu_seqlens with tensor ops.
def packed_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                     cu_seqlens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Causal attention within each packed sequence. q, k, v (h, N, d_k) -> (out (h, N, d_k), weights (h, N, N))."""
    N = q.shape[-2]
    if cu_seqlens.numel() == 0:
        raise ValueError("cu_seqlens is empty")
    if int(cu_seqlens[0]) != 0 or int(cu_seqlens[-1]) != N:
        raise ValueError(f"cu_seqlens must start at 0 and end at N={N}")
    if not bool((torch.diff(cu_seqlens) > 0).all()):
        raise ValueError("cu_seqlens must strictly increase")
    # fix of the sequence ids: each block is [cu[i], cu[i+1]) exactly (searchsorted without right=True
    # put each sequence's first token in the sequence before)
    allowed = torch.zeros(N, N, dtype=torch.bool)
    for start, end in zip(cu_seqlens[:-1].tolist(), cu_seqlens[1:].tolist()):
        n = end - start
        allowed[start:end, start:end] = torch.ones(n, n, dtype=torch.bool).tril()
    scores = torch.einsum("hqd,hkd->hqk", q, k) / q.shape[-1] ** 0.5
    # fix: masked scores to -inf, not 0 (0 still gets weight); fix: softmax over the keys, dim=-1
    scores = torch.where(allowed, scores, torch.full_like(scores, float("-inf")))
    weights = torch.softmax(scores, dim=-1)
    return torch.einsum("hqk,hkd->hqd", weights, v), weights
