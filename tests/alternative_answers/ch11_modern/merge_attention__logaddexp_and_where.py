# The merged log-sum-exp from torch.logaddexp first, then each share as exp(lse_x - lse), with empty workers and empty
# rows selected away by torch.where.
def merge_attention(out_a: torch.Tensor, lse_a: torch.Tensor, out_b: torch.Tensor,
                    lse_b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention over two disjoint key sets, from each one's output (..., T, d_v) and log-sum-exp (..., T)."""
    lse = torch.logaddexp(lse_a, lse_b)           # log(e^a + e^b), stable; -inf when both are -inf
    empty = torch.isneginf(lse)
    safe_lse = torch.where(empty, torch.zeros_like(lse), lse)
    share_a = torch.exp(lse_a - safe_lse)          # e^{l_a} / (e^{l_a} + e^{l_b}); 0 when a is empty
    share_b = torch.exp(lse_b - safe_lse)
    zero = torch.zeros_like(out_a)
    from_a = torch.where(torch.isneginf(lse_a)[..., None], zero, share_a[..., None] * out_a)
    from_b = torch.where(torch.isneginf(lse_b)[..., None], zero, share_b[..., None] * out_b)
    return from_a + from_b, lse
