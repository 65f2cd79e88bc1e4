# Treats the reference as frozen: reference_logps is detached (no gradient into it), the masked sums by einsum with the
# float mask, the loss via logsigmoid.
def dpo(policy_logps: torch.Tensor, reference_logps: torch.Tensor, answer_mask: torch.Tensor,
        beta: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, float]:
    """DPO's loss, chosen and rejected implicit rewards (B,) and accuracy from token log-probabilities (2B, T)."""
    if beta <= 0:
        raise ValueError(f"beta must be > 0, got {beta}")
    shape = policy_logps.shape
    if policy_logps.dim() != 2 or reference_logps.shape != shape or answer_mask.shape != shape:
        raise ValueError("expected policy_logps, reference_logps and answer_mask (2B, T) of one shape")
    if policy_logps.shape[0] % 2:
        raise ValueError("expected an even number of rows: B chosen, then B rejected")
    weights = answer_mask.to(policy_logps.dtype)
    policy_sums = torch.einsum("nt,nt->n", policy_logps, weights)
    reference_sums = torch.einsum("nt,nt->n", reference_logps.detach(), weights)  # the reference is frozen
    B = policy_logps.shape[0] // 2
    log_ratios = policy_sums - reference_sums
    margin = beta * (log_ratios[:B] - log_ratios[B:])
    loss = -F.logsigmoid(margin).mean()
    chosen_rewards = (beta * log_ratios[:B]).detach()
    rejected_rewards = (beta * log_ratios[B:]).detach()
    accuracy = float((chosen_rewards > rejected_rewards).float().mean())
    return loss, chosen_rewards, rejected_rewards, accuracy
