# exercise: ch06_positional/alibi_bias
# style: a dtype chosen with getattr(torch, f"float{bits}") on the public torch module
def alibi_bias(num_heads, T, bits=32):
    dtype = getattr(torch, f"float{bits}")
    slopes = torch.tensor([2.0 ** (-8.0 * (i + 1) / num_heads) for i in range(num_heads)], dtype=dtype)
    distance = torch.arange(T, dtype=dtype)[None, :] - torch.arange(T, dtype=dtype)[:, None]
    return slopes[:, None, None] * distance.clamp(max=0)[None]
