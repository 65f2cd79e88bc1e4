# Loops over the positions in Python, p as exp(z - logsumexp z), and subtracts eps / C everywhere and 1 - eps at the
# target by hand.
def label_smoothing_grad(logits: torch.Tensor, target: torch.Tensor, smoothing: float = 0.1,
                         ignore_index: int = PAD_ID) -> torch.Tensor:
    """The gradient of label_smoothing_loss(logits, target, smoothing, ignore_index) with respect to logits."""
    C = logits.shape[-1]
    z = logits.reshape(-1, C)
    y = target.reshape(-1).tolist()
    n = sum(1 for t in y if t != ignore_index)
    gradient = torch.zeros_like(z)
    for i, t in enumerate(y):
        if t == ignore_index:
            continue                                                     # padding: no gradient at all
        row = torch.exp(z[i] - torch.logsumexp(z[i], dim=0)) - smoothing / C
        row[t] -= 1 - smoothing
        gradient[i] = row / n
    return gradient.reshape(logits.shape)
