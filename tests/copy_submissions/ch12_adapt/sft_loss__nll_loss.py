# Lazy combination: F.nll_loss of F.log_softmax with ignore_index=-100, the library doing the masking and the token-weighted mean (issue 50).
def sft_loss(logits, targets):
    if not bool((targets != IGNORE_INDEX).any()):
        raise ValueError("every target is IGNORE_INDEX")
    return F.nll_loss(F.log_softmax(logits, dim=-1).flatten(0, 1), targets.flatten(), ignore_index=IGNORE_INDEX)
