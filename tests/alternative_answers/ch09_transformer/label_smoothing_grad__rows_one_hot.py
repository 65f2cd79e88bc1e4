# Computes p - q only on the counted rows (boolean indexing, q from one_hot) and writes them into a zero tensor,
# instead of masking every row.
def label_smoothing_grad(logits: torch.Tensor, target: torch.Tensor, smoothing: float = 0.1,
                         ignore_index: int = PAD_ID) -> torch.Tensor:
    """The gradient of label_smoothing_loss(logits, target, smoothing, ignore_index) with respect to logits."""
    C = logits.shape[-1]
    z = logits.reshape(-1, C)
    y = target.reshape(-1)
    counted = y != ignore_index
    n = int(counted.sum())
    p = F.softmax(z[counted], dim=-1)
    q = (1 - smoothing) * F.one_hot(y[counted], C).to(z.dtype) + smoothing / C
    gradient = torch.zeros_like(z)
    gradient[counted] = (p - q) / n                                      # ignored rows stay exactly 0
    return gradient.reshape(logits.shape)
