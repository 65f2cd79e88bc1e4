# Copied from book/ch03_bahdanau.md, section 3.5 (soft and hard attention): the torch.multinomial draw, renamed.
def sample_hard_attention(weights: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One location per row of weights (..., S), drawn with probability weights[..., s]; one-hot, same shape and dtype."""
    draws = torch.multinomial(weights.detach().reshape(-1, weights.shape[-1]), 1, replacement=True, generator=generator)
    return draws
