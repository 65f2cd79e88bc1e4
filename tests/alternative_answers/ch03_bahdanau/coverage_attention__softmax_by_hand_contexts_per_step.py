# Coverage re-summed from the stored steps, the masked softmax by hand (shift, exp, mask, normalise), contexts per step.
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
    B, S = keys.shape[:2]
    real = torch.ones(B, S, dtype=torch.bool) if mask is None else mask
    keys_projected = keys @ W_k                                          # once, (B, S, d_a)
    step_weights, step_contexts = [], []
    for t in range(query.shape[1]):
        if step_weights:
            coverage = torch.stack(step_weights, dim=0).sum(dim=0)      # weights[0] + ... + weights[t - 1]
        else:
            coverage = torch.zeros(B, S, dtype=keys.dtype)
        coverage_term = coverage[:, :, None] * w_c[None, None, :]                 # (B, S, d_a)
        features = torch.tanh((query[:, t] @ W_q)[:, None, :] + keys_projected + coverage_term)
        scores = (features @ w_v[:, None])[..., 0]                       # (B, S)
        shifted = scores - scores.masked_fill(~real, float("-inf")).amax(dim=-1, keepdim=True).detach()
        exp = torch.where(real, shifted.exp(), torch.zeros_like(shifted))
        a = exp / exp.sum(dim=-1, keepdim=True)
        step_weights.append(a)
        step_contexts.append(torch.bmm(a[:, None, :], values)[:, 0])    # (B, d_v)
    return torch.stack(step_contexts, dim=1), torch.stack(step_weights, dim=1)
