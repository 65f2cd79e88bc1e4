# The visible test's reference, the library's causal attention looped over the sequences, in block-diagonal out and weights.
# earns 0: the attention it calls is refused, and outside the allow-list (the exercise's two test cells withheld, the checks of cu_seqlens included)
def packed_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                     cu_seqlens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Causal attention within each packed sequence. q, k, v (h, N, d_k) -> (out (h, N, d_k), weights (h, N, N))."""
    h, N, _ = q.shape
    bounds = [int(b) for b in cu_seqlens]
    if len(bounds) < 1 or bounds[0] != 0 or bounds[-1] != N:
        raise ValueError(f"cu_seqlens must start at 0 and end at N={N}, got {bounds}")
    for before, after in zip(bounds, bounds[1:]):
        if after <= before:
            raise ValueError(f"cu_seqlens must strictly increase, got {bounds}")
    # the three bugs (first token in the sequence before, masked scores 0 instead of -inf, softmax over
    # queries) all disappear: each sequence is attended on its own with a causal mask over the keys
    out = torch.zeros_like(v)
    weights = q.new_zeros(h, N, N)
    for start, end in zip(bounds, bounds[1:]):
        block_out, block_weights = scaled_dot_product_attention(q[:, start:end], k[:, start:end], v[:, start:end],
                                                                causal_mask(end - start))
        out[:, start:end] = block_out
        weights[:, start:end, start:end] = block_weights
    return out, weights
