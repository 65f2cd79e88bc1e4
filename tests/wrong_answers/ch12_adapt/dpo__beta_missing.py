# Wrong answer: beta left out of the margin (the rewards keep it).
def dpo(policy_logps: torch.Tensor, reference_logps: torch.Tensor, answer_mask: torch.Tensor,
        beta: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, float]:
    """DPO's loss, chosen and rejected implicit rewards (B,) and preference accuracy from token log-probabilities (2B, T)."""
    if beta <= 0:
        raise ValueError(f"beta must be > 0, got {beta!r}")
    if policy_logps.shape != reference_logps.shape or policy_logps.shape != answer_mask.shape or policy_logps.dim() != 2:
        raise ValueError(f"expected three (2B, T) tensors of one shape, got {tuple(policy_logps.shape)}, "
                         f"{tuple(reference_logps.shape)} and {tuple(answer_mask.shape)}")
    if policy_logps.size(0) % 2:
        raise ValueError(f"expected 2B rows (chosen, then rejected), got {policy_logps.size(0)}")
    mask = answer_mask.to(policy_logps.dtype)
    logratios = ((policy_logps - reference_logps) * mask).sum(dim=1)  # (2B,): log pi(y|x) - log pi_ref(y|x)
    chosen, rejected = logratios.chunk(2)
    margin = chosen - rejected
    loss = -F.logsigmoid(margin).mean()  # logsigmoid: finite for margins of -1000
    chosen_rewards, rejected_rewards = beta * chosen.detach(), beta * rejected.detach()
    accuracy = (chosen_rewards > rejected_rewards).double().mean().item()
    return loss, chosen_rewards, rejected_rewards, accuracy
