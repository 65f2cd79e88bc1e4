# Wrong answer: the role of the current token decides, not the role of the token it predicts.
def sft_targets(tokens: torch.Tensor, roles: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(B, T) tokens and roles -> idx, targets (B, T - 1): loss on the tokens of every assistant turn only."""
    if tokens.dim() != 2 or tokens.shape != roles.shape or tokens.size(1) < 2:
        raise ValueError(f"expected tokens and roles (B, T) of the same shape with T >= 2, got "
                         f"{tuple(tokens.shape)} and {tuple(roles.shape)}")
    idx = tokens[:, :-1].clone().long()
    following = tokens[:, 1:].long()
    targets = torch.where(roles[:, :-1] == ASSISTANT, following, torch.full_like(following, IGNORE_INDEX))
    return idx, targets
