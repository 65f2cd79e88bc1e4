# One line of F.nll_loss(F.log_softmax(...), ignore_index=-100): the library does the masking and the token-weighted mean.
# earns 0: F.nll_loss and nn.NLLLoss are forbidden beside F.cross_entropy
def sft_loss(logits, targets):
    if not bool((targets != IGNORE_INDEX).any()):
        raise ValueError("every target is IGNORE_INDEX")
    return F.nll_loss(F.log_softmax(logits, dim=-1).flatten(0, 1), targets.flatten(), ignore_index=IGNORE_INDEX)
