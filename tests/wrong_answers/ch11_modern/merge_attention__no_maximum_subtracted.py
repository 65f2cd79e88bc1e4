# Wrong answer: weights exp(lse) without subtracting the maximum.
def merge_attention(out_a: torch.Tensor, lse_a: torch.Tensor, out_b: torch.Tensor,
                    lse_b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention over two disjoint key sets, from each one's output (..., T, d_v) and log-sum-exp (..., T)."""
    top = torch.maximum(lse_a, lse_b)
    safe_top = torch.zeros_like(top)  # both empty: avoid -inf - -inf
    weight_a, weight_b = torch.exp(lse_a - safe_top), torch.exp(lse_b - safe_top)  # e^{l - top}: 0 for an empty set
    total = weight_a + weight_b
    lse = safe_top + torch.log(total)  # -inf when both are empty
    share_a = torch.where(total > 0, weight_a / total, torch.zeros_like(total))[..., None]
    share_b = torch.where(total > 0, weight_b / total, torch.zeros_like(total))[..., None]
    # an empty set's output may be NaN: 0 * NaN is NaN, so select instead of multiplying
    part_a = torch.where(share_a > 0, share_a * out_a, torch.zeros_like(out_a))
    part_b = torch.where(share_b > 0, share_b * out_b, torch.zeros_like(out_b))
    return part_a + part_b, torch.where(total > 0, lse, torch.full_like(lse, float("-inf")))
