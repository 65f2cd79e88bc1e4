# The baseline is the mean of L over all n draws, the draw's own included (biased by (n - 1) / n).
def reinforce_score_gradient(weights, values, grad_context, n_samples, generator, baseline=False):
    n_keys = weights.shape[-1]
    rows = weights.detach().reshape(-1, n_keys)
    has_key = rows.sum(-1, keepdim=True) > 0
    draws = torch.multinomial(torch.where(has_key, rows, torch.ones_like(rows)), n_samples, replacement=True, generator=generator)
    drawn = (grad_context @ values.transpose(-2, -1)).detach().reshape(-1, n_keys).gather(1, draws)
    if baseline:
        drawn = drawn - drawn.mean(1, keepdim=True)
    per_key = torch.zeros_like(rows).scatter_add_(1, draws, drawn)
    estimate = (per_key - drawn.sum(1, keepdim=True) * rows) / n_samples
    return torch.where(has_key, estimate, torch.zeros_like(estimate)).reshape(weights.shape)
