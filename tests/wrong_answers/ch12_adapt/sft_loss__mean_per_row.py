# Wrong answer: the mean of each row's mean: every row weighs the same, not every token.
def sft_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of logits (B, T, n_vocab) over the targets (B, T) that are not IGNORE_INDEX."""
    counted = targets != IGNORE_INDEX  # (B, T)
    if not bool(counted.any()):
        raise ValueError("every target is IGNORE_INDEX: no token to put a loss on")
    log_probs = F.log_softmax(logits, dim=-1)  # stable: subtracts the maximum
    picked = log_probs.gather(-1, targets.clamp(min=0)[..., None])[..., 0]  # (B, T)
    rows = counted.any(dim=1)
    per_row = (picked * counted).sum(1)[rows] / counted.sum(1)[rows]
    return -per_row.mean()
