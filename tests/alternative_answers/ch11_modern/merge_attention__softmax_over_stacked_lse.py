# Stacks the two workers: the shares are a softmax over their log-sum-exps and the merged lse a logsumexp over them; NaN
# shares of empty rows zeroed, NaN outputs masked by nan_to_num where the share is 0.
def merge_attention(out_a: torch.Tensor, lse_a: torch.Tensor, out_b: torch.Tensor,
                    lse_b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention over two disjoint key sets, from each one's output (..., T, d_v) and log-sum-exp (..., T)."""
    lses = torch.stack([lse_a, lse_b], dim=-1)                    # (..., T, 2)
    outs = torch.stack([out_a, out_b], dim=-2)                    # (..., T, 2, d_v)
    shares = torch.softmax(lses, dim=-1).nan_to_num(0.0)          # both -inf: softmax is NaN, no share at all
    lse = torch.logsumexp(lses, dim=-1)                           # -inf when both are -inf
    has_mass = (shares > 0)[..., None]
    # a worker with no share may hold garbage (NaN, inf): replace it before the weighted sum
    safe_outs = torch.where(has_mass, outs, torch.zeros_like(outs))
    return (shares[..., None] * safe_outs).sum(dim=-2), lse
