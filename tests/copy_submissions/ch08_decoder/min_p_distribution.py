# copy: transformer_lib.decoding.filter_logits (the nucleus, top-p, branch) then the softmax of transformer_lib.models.sample_next_token
def min_p_distribution(logits: torch.Tensor, min_p: float, temperature: float = 1.0) -> torch.Tensor:
    """logits (..., n_vocab) -> probabilities (..., n_vocab) restricted to p_i >= min_p * max p."""
    if not 0 < min_p <= 1:
        raise ValueError(f"top_p must be in (0, 1], got {min_p}")
    logits = logits / temperature
    sorted_logits, order = logits.sort(dim=-1, descending=True)
    probs = sorted_logits.softmax(dim=-1)
    outside = probs.cumsum(dim=-1) - probs >= min_p  # mass before this token already reaches top_p
    logits = logits.masked_fill(outside.scatter(-1, order, outside), float("-inf"))
    return torch.softmax(logits, dim=-1)
