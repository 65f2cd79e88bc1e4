# The slopes 2^(-8h/H) with h from 0 (the first head gets slope 1) instead of 2^(-8(h+1)/H).
def alibi_bias(num_heads, T):
    if num_heads < 1 or num_heads & (num_heads - 1) or T < 1:
        raise ValueError(f"num_heads={num_heads}, T={T}")
    slopes = 2.0 ** (-8.0 * torch.arange(num_heads, dtype=torch.float64) / num_heads)
    i = torch.arange(T, dtype=torch.float64)
    distance = i[:, None] - i[None, :]
    return (-slopes[:, None, None] * distance).masked_fill(distance < 0, float("-inf"))
