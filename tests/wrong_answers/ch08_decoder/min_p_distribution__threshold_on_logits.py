# The threshold on the logits (z_i >= min_p * max z) instead of the probabilities.
def min_p_distribution(logits, min_p, temperature=1.0):
    if not 0.0 <= min_p <= 1.0:
        raise ValueError(f"min_p must be in [0, 1], got {min_p}")
    if not temperature > 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    z = logits / temperature
    probs = torch.softmax(z, dim=-1)
    kept = probs.masked_fill(z < min_p * z.max(dim=-1, keepdim=True).values, 0.0)
    return kept / kept.sum(dim=-1, keepdim=True)
