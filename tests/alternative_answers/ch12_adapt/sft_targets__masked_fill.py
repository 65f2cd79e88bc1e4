# Copies the shifted tokens and masked_fill's IGNORE_INDEX where the next token's role is not ASSISTANT, instead of
# torch.where.
def sft_targets(tokens: torch.Tensor, roles: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(B, T) tokens and roles -> idx, targets (B, T - 1): loss on the tokens of every assistant turn only."""
    if tokens.shape != roles.shape:
        raise ValueError(f"tokens {tuple(tokens.shape)} and roles {tuple(roles.shape)} must have one shape")
    if tokens.dim() != 2:
        raise ValueError(f"expected (B, T) tensors, got {tokens.dim()}-D")
    if tokens.shape[1] < 2:
        raise ValueError("T must be at least 2")
    idx = tokens[:, :-1].to(torch.long)   # .to makes a copy only when the dtype changes: clone below
    targets = tokens[:, 1:].to(torch.long).clone()
    targets.masked_fill_(roles[:, 1:] != ASSISTANT, IGNORE_INDEX)
    return idx.clone(), targets
