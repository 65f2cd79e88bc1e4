# Wrong answer: mean over padding too.
def label_smoothing_loss(logits: torch.Tensor, target: torch.Tensor, smoothing: float = 0.1,
                         ignore_index: int = PAD_ID) -> torch.Tensor:
    """Mean label-smoothed cross-entropy over the positions whose target is not ignore_index.

    Args:
        logits: (N, C) or (B, T, C) unnormalised scores.
        target: (N,) or (B, T) class ids; positions equal to ignore_index are left out.
        smoothing: epsilon in [0, 1): the mass spread uniformly over all C classes.
        ignore_index: the target value of positions that do not count (padding).

    Returns:
        a 0-dimensional tensor, equal to F.cross_entropy(..., ignore_index, label_smoothing).
    """
    n_classes = logits.shape[-1]
    log_probs = F.log_softmax(logits.reshape(-1, n_classes), dim=-1)   # (N, C)
    flat_target = target.reshape(-1)
    counted = flat_target != ignore_index                               # (N,)
    safe_target = flat_target.masked_fill(~counted, 0)                  # any valid id: masked below
    true_class = -log_probs.gather(1, safe_target[:, None]).squeeze(1)  # -log p(y_i)
    uniform = -log_probs.mean(dim=-1)                                   # -(1/C) sum_c log p(c)
    per_position = (1.0 - smoothing) * true_class + smoothing * uniform
    return per_position.masked_fill(~counted, 0.0).mean()
