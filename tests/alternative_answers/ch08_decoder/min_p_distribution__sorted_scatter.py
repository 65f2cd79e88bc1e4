# Sorts the probabilities in descending order, compares each with the first (the maximum), renormalises in sorted
# order and scatters the result back.
def min_p_distribution(logits: torch.Tensor, min_p: float, temperature: float = 1.0) -> torch.Tensor:
    """logits (..., n_vocab) -> probabilities (..., n_vocab) restricted to p_i >= min_p * max p."""
    if not (0.0 <= min_p <= 1.0):
        raise ValueError(f"min_p={min_p} is outside [0, 1]")
    if not (temperature > 0.0):
        raise ValueError(f"temperature={temperature} is not positive")
    probs = F.softmax(logits / temperature, dim=-1)
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    kept = torch.where(sorted_probs >= min_p * sorted_probs[..., :1], sorted_probs, torch.zeros_like(sorted_probs))
    kept = kept / kept.sum(dim=-1, keepdim=True)
    return torch.zeros_like(probs).scatter(-1, order, kept)
