# Each step projects its query in the loop; einsum for the score; masked_fill(-inf) + torch.softmax, no masked_softmax.
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
    B, T, _ = query.shape
    key_features = torch.einsum("bsk,ka->bsa", keys, W_k)               # projected once, (B, S, d_a)
    coverage = torch.zeros(B, keys.shape[1], dtype=keys.dtype)          # cov_0 = 0
    all_weights = []
    for t in range(T):
        query_features = torch.einsum("bq,qa->ba", query[:, t], W_q)    # (B, d_a)
        hidden = torch.tanh(query_features.unsqueeze(1) + key_features + coverage.unsqueeze(-1) * w_c)
        scores = torch.einsum("bsa,a->bs", hidden, w_v)                 # (B, S)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        step = torch.softmax(scores, dim=-1)
        all_weights.append(step)
        coverage = coverage + step                                      # what steps 0..t gave each key
    weights = torch.stack(all_weights, dim=1)
    return torch.einsum("bts,bsv->btv", weights, values), weights
