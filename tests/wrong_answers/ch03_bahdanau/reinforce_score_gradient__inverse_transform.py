# Wrong answer: an unbiased inverse-transform sampler instead of the one torch.multinomial call the instructions name (other draws than the replay).
def reinforce_score_gradient(weights: torch.Tensor, values: torch.Tensor, grad_context: torch.Tensor, n_samples: int,
                             generator: torch.Generator, baseline: bool = False) -> torch.Tensor:
    """Score-function estimate (B, T, S) of dL/d(scores) for L = g . v_s, s drawn n_samples times from each row of weights."""
    n_keys = weights.shape[-1]
    rows = weights.detach().reshape(-1, n_keys)                                    # (N, S)
    has_key = rows.sum(-1, keepdim=True) > 0                                       # (N, 1)
    drawable = torch.where(has_key, rows, torch.ones_like(rows))
    u = torch.rand(n_samples, drawable.shape[0], generator=generator, dtype=drawable.dtype).T[..., None]  # (N, n, 1)
    cumulative = (drawable / drawable.sum(-1, keepdim=True)).cumsum(-1)[:, None, :]   # (N, 1, S)
    draws = (cumulative <= u).sum(-1).clamp(max=n_keys - 1)                          # (N, n)
    losses = (grad_context @ values.transpose(-2, -1)).detach().reshape(-1, n_keys)        # (N, S): L(s) = g . v_s
    drawn = losses.gather(1, draws)                                                # (N, n): L(s_i)
    if baseline:
        drawn = drawn - (drawn.sum(1, keepdim=True) - drawn) / (n_samples - 1)     # leave-one-out mean
    per_key = torch.zeros_like(rows).scatter_add_(1, draws, drawn)                 # sum_i L_i 1[s_i = j]
    estimate = (per_key - drawn.sum(1, keepdim=True) * rows) / n_samples
    return torch.where(has_key, estimate, torch.zeros_like(estimate)).reshape(weights.shape)
