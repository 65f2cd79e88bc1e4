# One u per row from the generator, found in the cumulative weights by torch.searchsorted(right=True); F.one_hot cast.
def sample_hard_attention(weights: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One location per row of weights (..., S), drawn with probability weights[..., s]; one-hot, same shape and dtype."""
    S = weights.shape[-1]
    rows = weights.detach().reshape(-1, S)                  # bug 1: (S, -1).T mixed the rows; rows are (N, S)
    u = torch.rand(rows.shape[0], 1, generator=generator)   # bugs 2 and 3: one u per row, from the generator
    cumulative = rows.cumsum(-1).contiguous()
    chosen = torch.searchsorted(cumulative, u.to(cumulative.dtype), right=True)[:, 0]  # first s with cumsum > u
    chosen = chosen.clamp(max=S - 1)                        # rounding: a total just under u
    return F.one_hot(chosen, S).to(weights.dtype).reshape(weights.shape)  # bug 4: int64 -> the weights' dtype
