# The temperature applied after the filter (to the kept probabilities).
def min_p_distribution(logits, min_p, temperature=1.0):
    if not 0.0 <= min_p <= 1.0:
        raise ValueError(f"min_p must be in [0, 1], got {min_p}")
    if not temperature > 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    probs = torch.softmax(logits, dim=-1)
    threshold = min_p * probs.max(dim=-1, keepdim=True).values
    kept = probs.masked_fill(probs < threshold, 0.0)
    kept = kept ** (1 / temperature)
    return kept / kept.sum(dim=-1, keepdim=True)
