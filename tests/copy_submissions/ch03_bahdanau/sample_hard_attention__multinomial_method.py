# Lazy combination: the page's torch.multinomial as the Tensor method rows.multinomial(1, generator=...), plus the given one-hot line (issue 50: refusing torch.multinomial by identity let the method through).
def sample_hard_attention(weights, generator):
    n_keys = weights.shape[-1]
    chosen = weights.reshape(-1, n_keys).multinomial(1, generator=generator).squeeze(-1)
    return F.one_hot(chosen, n_keys).to(weights.dtype).reshape(weights.shape)
