# Keeps only the counted rows by boolean indexing, builds the full smoothed target q with one_hot, and log p
# as z - logsumexp(z).
def label_smoothing_loss(logits: torch.Tensor, target: torch.Tensor, smoothing: float = 0.1,
                         ignore_index: int = PAD_ID) -> torch.Tensor:
    """Mean label-smoothed cross-entropy over the positions whose target is not ignore_index."""
    C = logits.shape[-1]
    z = logits.reshape(-1, C)
    y = target.reshape(-1)
    counted = y != ignore_index
    z, y = z[counted], y[counted]                                        # padding rows dropped before any indexing
    log_p = z - torch.logsumexp(z, dim=-1, keepdim=True)
    q = (1 - smoothing) * F.one_hot(y, C).to(z.dtype) + smoothing / C
    return -(q * log_p).sum(dim=-1).mean()
