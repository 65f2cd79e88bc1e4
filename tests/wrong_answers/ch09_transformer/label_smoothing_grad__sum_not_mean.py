# Wrong answer: sum not mean.
def label_smoothing_grad(logits: torch.Tensor, target: torch.Tensor, smoothing: float = 0.1,
                         ignore_index: int = PAD_ID) -> torch.Tensor:
    """The gradient of label_smoothing_loss(logits, target, smoothing, ignore_index) with respect to logits.

    Args:
        logits: (N, C) or (B, T, C) unnormalised scores.
        target: (N,) or (B, T) class ids; positions equal to ignore_index do not count.

    Returns:
        a tensor of the shape and dtype of logits, computed without autograd.
    """
    n_classes = logits.shape[-1]
    probs = torch.softmax(logits.reshape(-1, n_classes), dim=-1)          # (N, C)
    flat_target = target.reshape(-1)
    counted = flat_target != ignore_index                                 # (N,)
    smoothed = torch.full_like(probs, smoothing / n_classes)              # q: eps / C everywhere...
    smoothed[counted, flat_target[counted]] += 1.0 - smoothing            # ...plus 1 - eps on the target
    # d l_i / d z_k = sum_c q(c) (p(k) - [c = k]) = p(k) - q(k); the mean divides by the counted positions
    gradient = (probs - smoothed) * counted[:, None]
    return gradient.reshape(logits.shape)
