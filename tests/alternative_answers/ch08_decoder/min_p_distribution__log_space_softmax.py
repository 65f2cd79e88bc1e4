# Filters in log space (keep z_i / tau >= max z / tau + ln min_p, the rule divided out), sets the dropped logits to
# -inf with torch.where and takes one softmax; checks the temperature first.
def min_p_distribution(logits: torch.Tensor, min_p: float, temperature: float = 1.0) -> torch.Tensor:
    """logits (..., n_vocab) -> probabilities (..., n_vocab) restricted to p_i >= min_p * max p."""
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got temperature={temperature}")
    if min_p < 0 or min_p > 1:
        raise ValueError(f"min_p must lie in [0, 1], got min_p={min_p}")
    scaled = logits / temperature
    top = scaled.amax(dim=-1, keepdim=True)
    log_min_p = math.log(min_p) if min_p > 0 else -math.inf       # p_i / p_max = exp(z_i - z_max) / 1
    keep = scaled - top >= log_min_p
    return torch.softmax(torch.where(keep, scaled, torch.full_like(scaled, -math.inf)), dim=-1)
