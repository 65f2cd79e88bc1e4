# Builds the targets with a Python loop over rows and positions (a target kept when the next token's role is ASSISTANT),
# then makes long tensors.
def sft_targets(tokens: torch.Tensor, roles: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(B, T) tokens and roles -> idx, targets (B, T - 1): loss on the tokens of every assistant turn only."""
    if tokens.ndim != 2 or roles.ndim != 2:
        raise ValueError("tokens and roles must be 2-D (B, T)")
    if tuple(tokens.shape) != tuple(roles.shape):
        raise ValueError(f"tokens {tuple(tokens.shape)} and roles {tuple(roles.shape)} differ in shape")
    B, T = tokens.shape
    if T < 2:
        raise ValueError(f"need T >= 2 to have a target, got T={T}")
    token_rows, role_rows = tokens.tolist(), roles.tolist()
    idx, targets = [], []
    for row_tokens, row_roles in zip(token_rows, role_rows):
        idx.append(row_tokens[:-1])
        targets.append([row_tokens[t + 1] if row_roles[t + 1] == ASSISTANT else IGNORE_INDEX for t in range(T - 1)])
    return torch.tensor(idx, dtype=torch.long), torch.tensor(targets, dtype=torch.long)
