# Finds the k-th largest logit with torch.kthvalue (the (n - k + 1)-th smallest) and the top with max, in torch
# float64, then converts with .item().
def min_p_temperature(logits: torch.Tensor, min_p: float, k: int) -> float:
    """The smallest temperature at which min-p keeps at least k of the tokens of 1-D logits."""
    n = logits.numel()
    if not (0 < min_p < 1):
        raise ValueError(f"min_p = {min_p} is not strictly between 0 and 1")
    if not (1 <= k <= n):
        raise ValueError(f"k = {k} is not between 1 and {n}")
    z = logits.to(torch.float64)
    kth = torch.kthvalue(z, n - k + 1).values
    tau = (z.max() - kth) / torch.log(torch.tensor(1.0 / min_p, dtype=torch.float64))
    return tau.item()
