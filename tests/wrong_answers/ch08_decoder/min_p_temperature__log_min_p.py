# log(min_p) instead of log(1 / min_p): a negative temperature.
def min_p_temperature(logits, min_p, k):
    if not 0.0 < min_p < 1.0:
        raise ValueError(f"min_p must be strictly between 0 and 1, got {min_p}")
    if not 1 <= k <= logits.numel():
        raise ValueError(f"k must be between 1 and {logits.numel()}, got {k}")
    ordered = logits.double().sort(descending=True).values
    return float(ordered[0] - ordered[k - 1]) / math.log(min_p)
