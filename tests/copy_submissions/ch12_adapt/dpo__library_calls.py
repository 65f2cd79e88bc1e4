# A lazy combination: transformer_lib.dpo's sequence_logprobs-style sum and dpo_loss called (both forbidden here).
from transformer_lib.dpo import dpo_loss


def dpo(policy_logps, reference_logps, answer_mask, beta):
    policy = (policy_logps * answer_mask).sum(1).chunk(2)
    reference = (reference_logps * answer_mask).sum(1).chunk(2)
    out = dpo_loss(*policy, *reference, beta=beta)
    return out.loss, out.chosen_rewards, out.rejected_rewards, out.accuracy
