# The cross-entropy written out as logsumexp(logits) minus the target's logit, ignored targets replaced by 0 with
# torch.where, then the mean over the counted tokens by boolean indexing.
def sft_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of logits (B, T, n_vocab) over the targets (B, T) that are not IGNORE_INDEX."""
    counted = targets != IGNORE_INDEX
    if counted.sum() == 0:
        raise ValueError("no target is counted")
    safe_targets = torch.where(counted, targets, torch.zeros_like(targets))  # -100 is not an index
    target_logits = logits.gather(-1, safe_targets.unsqueeze(-1)).squeeze(-1)
    per_token = torch.logsumexp(logits, dim=-1) - target_logits        # -log softmax(logits)[target], stable
    return per_token[counted].mean()
