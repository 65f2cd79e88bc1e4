# No reshape or indexing: u (..., 1), the step 1[cumsum > u] (last column forced to 1); the one-hot is its torch.diff.
def sample_hard_attention(weights: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One location per row of weights (..., S), drawn with probability weights[..., s]; one-hot, same shape and dtype."""
    # bug 1: the colleague's reshape(S, -1).T mixed the rows up; here every row stays where it is
    # bugs 2 and 3: one u per row (not one for all), drawn from generator (not the global generator)
    u = torch.rand(*weights.shape[:-1], 1, generator=generator, dtype=weights.dtype)
    step = (weights.detach().cumsum(-1) > u).to(weights.dtype)   # 0 ... 0 1 ... 1: the 1s start at the draw
    step[..., -1] = 1.0                                          # a total just under u from rounding: the last key
    # bug 4: the colleague's F.one_hot gave int64; this stays in the weights' dtype
    return torch.diff(step, dim=-1, prepend=torch.zeros_like(step[..., :1]))
