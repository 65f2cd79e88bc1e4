# exercise: ch03_bahdanau/sample_hard_attention
# style: inverse transform sampling with searchsorted, the generator passed on
def sample_hard_attention(weights, generator):
    cdf = weights.cumsum(dim=-1)
    u = torch.rand(weights.shape[:-1] + (1,), generator=generator, dtype=weights.dtype)
    index = torch.searchsorted(cdf, u * cdf[..., -1:]).clamp(max=weights.shape[-1] - 1)
    return index.squeeze(-1)
