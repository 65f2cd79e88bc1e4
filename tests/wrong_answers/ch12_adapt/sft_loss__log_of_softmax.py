# Wrong answer: log(softmax(logits)): the probability underflows to 0 for large logits.
def sft_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of logits (B, T, n_vocab) over the targets (B, T) that are not IGNORE_INDEX."""
    counted = targets != IGNORE_INDEX  # (B, T)
    if not bool(counted.any()):
        raise ValueError("every target is IGNORE_INDEX: no token to put a loss on")
    log_probs = torch.log(torch.softmax(logits, dim=-1))
    picked = log_probs.gather(-1, targets.clamp(min=0)[..., None])[..., 0]  # (B, T)
    return -(picked * counted).sum() / counted.sum()
