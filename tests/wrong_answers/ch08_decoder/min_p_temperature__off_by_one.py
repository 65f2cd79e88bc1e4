# The gap to the (k+1)-th token instead of the k-th.
def min_p_temperature(logits, min_p, k):
    if not 0.0 < min_p < 1.0:
        raise ValueError(f"min_p must be strictly between 0 and 1, got {min_p}")
    if not 1 <= k <= logits.numel():
        raise ValueError(f"k must be between 1 and {logits.numel()}, got {k}")
    ordered = logits.double().sort(descending=True).values
    return float(ordered[0] - ordered[min(k, logits.numel() - 1)]) / math.log(1.0 / min_p)
