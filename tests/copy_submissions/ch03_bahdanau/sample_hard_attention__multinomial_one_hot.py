# Lazy combination: the page's section 3.5 line torch.multinomial(alpha, 1, generator=generator) per row, plus the colleague's given one-hot line, cast to the weights' dtype.
def sample_hard_attention(weights, generator):
    n_keys = weights.shape[-1]
    chosen = torch.multinomial(weights.reshape(-1, n_keys), 1, generator=generator).squeeze(-1)
    return F.one_hot(chosen, n_keys).to(weights.dtype).reshape(weights.shape)
