# Works on Python floats: sorted() list, the k-th largest logit by index, and -log(min_p) instead of log(1 / min_p);
# checks k before min_p.
def min_p_temperature(logits: torch.Tensor, min_p: float, k: int) -> float:
    """The smallest temperature at which min-p keeps at least k of the tokens of 1-D logits."""
    values = sorted((float(z) for z in logits.tolist()), reverse=True)
    if k < 1 or k > len(values):
        raise ValueError(f"k must be in 1..{len(values)}, got k={k}")
    if min_p <= 0 or min_p >= 1:
        raise ValueError(f"min_p must be in (0, 1), got min_p={min_p}")
    # p_k / p_max = exp(-(z_max - z_k) / tau) >= min_p  <=>  tau >= (z_max - z_k) / -ln(min_p)
    return (values[0] - values[k - 1]) / -math.log(min_p)
