# exercise: ch08_decoder/min_p_distribution
# style: softmax with temperature and a boolean mask
def min_p_distribution(logits, min_p, temperature=1.0):
    if not 0.0 < min_p < 1.0:
        raise ValueError(f"min_p must be in (0, 1), got {min_p}")
    p = torch.softmax(logits / temperature, dim=-1)
    keep = p >= min_p * p.max(dim=-1, keepdim=True).values
    p = p * keep
    return p / p.sum(dim=-1, keepdim=True)
