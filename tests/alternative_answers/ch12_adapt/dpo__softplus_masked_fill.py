# Masks with masked_fill, sums policy and reference apart, and writes -log sigmoid(m) as softplus(-m); accuracy counted
# in Python; shapes checked before beta.
def dpo(policy_logps: torch.Tensor, reference_logps: torch.Tensor, answer_mask: torch.Tensor,
        beta: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, float]:
    """DPO's loss, chosen and rejected implicit rewards (B,) and accuracy from token log-probabilities (2B, T)."""
    if policy_logps.dim() != 2 or reference_logps.dim() != 2 or answer_mask.dim() != 2:
        raise ValueError("policy_logps, reference_logps and answer_mask must be 2-D")
    if not (policy_logps.shape == reference_logps.shape == answer_mask.shape):
        raise ValueError("policy_logps, reference_logps and answer_mask must have one shape")
    if policy_logps.shape[0] % 2 == 1:
        raise ValueError("the rows must come in pairs (2B)")
    if not beta > 0:
        raise ValueError(f"beta must be positive, got {beta}")
    outside = ~answer_mask.bool()
    policy_sums = policy_logps.masked_fill(outside, 0.0).sum(dim=-1)
    reference_sums = reference_logps.masked_fill(outside, 0.0).sum(dim=-1)
    B = policy_logps.shape[0] // 2
    rewards = beta * (policy_sums - reference_sums)                       # (2B,)
    chosen, rejected = rewards[:B], rewards[B:]
    loss = F.softplus(rejected - chosen).mean()                           # -log sigmoid(m) = softplus(-m)
    wins = sum(1 for c, r in zip(chosen.tolist(), rejected.tolist()) if c > r)
    return loss, chosen.detach(), rejected.detach(), wins / B
