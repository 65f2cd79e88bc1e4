# Splits the loss into (1 - eps) * F.nll_loss(..., ignore_index) plus eps * the masked mean of -mean_c log p, instead
# of one masked per-position sum.
def label_smoothing_loss(logits: torch.Tensor, target: torch.Tensor, smoothing: float = 0.1,
                         ignore_index: int = PAD_ID) -> torch.Tensor:
    """Mean label-smoothed cross-entropy over the positions whose target is not ignore_index."""
    C = logits.shape[-1]
    log_p = F.log_softmax(logits.reshape(-1, C), dim=-1)
    y = target.reshape(-1)
    keep = (y != ignore_index).to(log_p.dtype)
    nll = F.nll_loss(log_p, y, ignore_index=ignore_index)                # mean of -log p(y) over the kept positions
    uniform = (-log_p.mean(dim=-1) * keep).sum() / keep.sum()            # mean of -(1/C) sum_c log p(c)
    return (1 - smoothing) * nll + smoothing * uniform
