# d log a_s / d e_j taken as 1[s = j] (the - a_j forgotten): biased, and the estimate no longer sums to 0 over j.
def reinforce_score_gradient(weights, values, grad_context, n_samples, generator, baseline=False):
    n_keys = weights.shape[-1]
    rows = weights.detach().reshape(-1, n_keys)
    has_key = rows.sum(-1, keepdim=True) > 0
    draws = torch.multinomial(torch.where(has_key, rows, torch.ones_like(rows)), n_samples, replacement=True, generator=generator)
    drawn = (grad_context @ values.transpose(-2, -1)).detach().reshape(-1, n_keys).gather(1, draws)
    if baseline:
        drawn = drawn - (drawn.sum(1, keepdim=True) - drawn) / (n_samples - 1)
    estimate = torch.zeros_like(rows).scatter_add_(1, draws, drawn) / n_samples
    return torch.where(has_key, estimate, torch.zeros_like(estimate)).reshape(weights.shape)
