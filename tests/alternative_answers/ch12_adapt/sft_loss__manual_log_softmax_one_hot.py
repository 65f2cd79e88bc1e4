# A log-softmax written by hand (maximum subtracted), the target picked by a one-hot product, and the ignored tokens
# removed with torch.where before summing.
def sft_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of logits (B, T, n_vocab) over the targets (B, T) that are not IGNORE_INDEX."""
    counted = targets != IGNORE_INDEX
    n_counted = int(counted.sum())
    if n_counted == 0:
        raise ValueError("every target is IGNORE_INDEX")
    shifted = logits - logits.max(dim=-1, keepdim=True).values.detach()   # no overflow for logits of 1000
    log_probs = shifted - shifted.exp().sum(dim=-1, keepdim=True).log()
    one_hot = F.one_hot(targets.clamp(min=0), num_classes=logits.shape[-1]).to(logits.dtype)
    token_log_probs = (one_hot * log_probs).sum(dim=-1)                   # (B, T)
    nll = torch.where(counted, -token_log_probs, torch.zeros_like(token_log_probs))
    return nll.sum() / n_counted
