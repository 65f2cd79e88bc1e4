# A lazy combination: F.log_softmax and F.nll_loss (refused now) row by row, then the mean of the rows:
# a short answer weighs as much as a long one, and a row without targets gives NaN.
def sft_loss(logits, targets):
    if not (targets != IGNORE_INDEX).any():
        raise ValueError("every target is IGNORE_INDEX")
    rows = [F.nll_loss(F.log_softmax(row, dim=-1), target, ignore_index=IGNORE_INDEX)
            for row, target in zip(logits, targets) if (target != IGNORE_INDEX).any()]
    return torch.stack(rows).mean()
