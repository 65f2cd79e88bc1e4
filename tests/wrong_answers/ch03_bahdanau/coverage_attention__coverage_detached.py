# Wrong answer: the coverage accumulated with .detach() (no gradient through earlier steps' weights).
def coverage_attention(query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, W_q: torch.Tensor,
                       W_k: torch.Tensor, w_c: torch.Tensor, w_v: torch.Tensor,
                       mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Additive attention whose score also sees each key's coverage (the weight earlier steps gave it).

    Args:
        query: (B, T, d_q), T successive decoder steps; keys: (B, S, d_k); values: (B, S, d_v).
        W_q: (d_q, d_a); W_k: (d_k, d_a); w_c: (d_a,); w_v: (d_a,).
        mask: None or boolean (B, S); True = a real key.

    Returns:
        (context, weights): context (B, T, d_v); weights (B, T, S).
    """
    projected_queries = query @ W_q                          # (B, T, d_a)
    projected_keys = keys @ W_k                              # (B, S, d_a)
    coverage = keys.new_zeros(keys.shape[:2])                # (B, S)
    steps = []
    for t in range(query.shape[1]):
        features = torch.tanh(projected_queries[:, t, None, :] + projected_keys + coverage[..., None] * w_c)
        step_weights = masked_softmax(features @ w_v, mask)  # (B, S)
        steps.append(step_weights)
        coverage = coverage + step_weights.detach()
    weights = torch.stack(steps, dim=1)                      # (B, T, S)
    return weights @ values, weights
