# Counts c_j of each key: (c_j L_j - a_j sum L_i) / n; with the baseline, c_j (n L_j - sum L_i) / (n (n - 1)).
def reinforce_score_gradient(weights: torch.Tensor, values: torch.Tensor, grad_context: torch.Tensor, n_samples: int,
                             generator: torch.Generator, baseline: bool = False) -> torch.Tensor:
    """Score-function estimate (B, T, S) of dL/d(scores) for L = g . v_s, s drawn n_samples times from each row of weights."""
    # sum_i (L_i - b_i)(1[s_i = j] - a_j) with b_i = (sum L - L_i)/(n - 1): L_i - b_i = (n L_i - sum L)/(n - 1),
    # whose sum over i is 0, so the a_j part vanishes and only the draws of key j remain.
    n = n_samples
    S = weights.shape[-1]
    rows = weights.detach().reshape(-1, S)
    no_key = rows.sum(-1, keepdim=True) == 0
    drawable = torch.where(no_key, torch.ones_like(rows), rows)                           # multinomial refuses 0 rows
    draws = torch.multinomial(drawable, n, replacement=True, generator=generator)
    losses = (grad_context.detach() @ values.detach().transpose(1, 2)).reshape(-1, S)     # L(s) for every key
    counts = torch.zeros_like(rows).scatter_add_(1, draws, torch.ones_like(draws, dtype=rows.dtype))  # c_j
    total = losses.gather(1, draws).sum(dim=1, keepdim=True)                               # sum_i L(s_i)
    if baseline:
        estimate = counts * (n * losses - total) / (n * (n - 1))
    else:
        estimate = (counts * losses - rows * total) / n
    return estimate.masked_fill(no_key, 0.0).reshape(weights.shape)
