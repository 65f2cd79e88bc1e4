# Copied from transformer_lib/sft.py (sft_example, renamed, applied row by row): the prompt is taken
# as everything before the first assistant token, the rest of the row (later user turns) trained.
def sft_targets(tokens, roles):
    if tokens.dim() != 2 or tokens.shape != roles.shape or tokens.size(1) < 2:
        raise ValueError("expected tokens and roles (B, T)")
    idx = tokens[:, :-1].clone()
    targets = torch.full_like(idx, -100)
    for b in range(tokens.size(0)):
        real = int((roles[b] != PAD).sum())
        answer = (roles[b] == ASSISTANT).nonzero()
        if len(answer) == 0:
            continue
        prompt_length = int(answer[0])
        sequence = tokens[b, :real].tolist()
        row = sequence[1:]
        row[: prompt_length - 1] = [-100] * (prompt_length - 1)
        targets[b, : len(row)] = torch.tensor(row)
    return idx, targets
