# A Python loop over the pairs with boolean-indexed sums, each pair's loss as logsumexp([0, -m]) = log(1 + e^-m),
# stacked then averaged.
def dpo(policy_logps: torch.Tensor, reference_logps: torch.Tensor, answer_mask: torch.Tensor,
        beta: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, float]:
    """DPO's loss, chosen and rejected implicit rewards (B,) and accuracy from token log-probabilities (2B, T)."""
    if beta <= 0:
        raise ValueError("beta must be > 0")
    shapes = {tuple(policy_logps.shape), tuple(reference_logps.shape), tuple(answer_mask.shape)}
    if len(shapes) != 1 or policy_logps.dim() != 2:
        raise ValueError(f"expected three 2-D tensors of one shape, got {shapes}")
    rows = policy_logps.shape[0]
    if rows % 2:
        raise ValueError(f"odd number of rows: {rows}")
    B = rows // 2
    mask = answer_mask.bool()

    def log_ratio(row):  # log pi(y|x) - log pi_ref(y|x) over the answer tokens of one row
        return policy_logps[row][mask[row]].sum() - reference_logps[row][mask[row]].sum()

    losses, chosen_rewards, rejected_rewards = [], [], []
    for pair in range(B):
        chosen, rejected = beta * log_ratio(pair), beta * log_ratio(B + pair)
        margin = chosen - rejected
        losses.append(torch.logsumexp(torch.stack([torch.zeros_like(margin), -margin]), dim=0))
        chosen_rewards.append(chosen.detach())
        rejected_rewards.append(rejected.detach())
    chosen_rewards, rejected_rewards = torch.stack(chosen_rewards), torch.stack(rejected_rewards)
    accuracy = float((chosen_rewards > rejected_rewards).sum()) / B
    return torch.stack(losses).mean(), chosen_rewards, rejected_rewards, accuracy
