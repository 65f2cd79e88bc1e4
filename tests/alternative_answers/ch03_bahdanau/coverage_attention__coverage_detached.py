# Coverage accumulated from detached weights (coverage + step_weights.detach()): the same weights and context, but no gradient reaches w_c, W_q, W_k, w_v or the query through the coverage.
def coverage_attention(query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, W_q: torch.Tensor,
                       W_k: torch.Tensor, w_c: torch.Tensor, w_v: torch.Tensor,
                       mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Additive attention whose score also sees each key's coverage (the weight earlier steps gave it)."""
    projected_queries = query @ W_q
    projected_keys = keys @ W_k
    coverage = keys.new_zeros(keys.shape[:2])
    steps = []
    for t in range(query.shape[1]):
        features = torch.tanh(projected_queries[:, t, None, :] + projected_keys + coverage[..., None] * w_c)
        step_weights = masked_softmax(features @ w_v, mask)
        steps.append(step_weights)
        coverage = coverage + step_weights.detach()  # "the coverage is bookkeeping, not a parameter"
    weights = torch.stack(steps, dim=1)
    return weights @ values, weights
