# The buggy function with the lines that differ from transformer_lib.rope taken from it (positions, frequencies, the rotate-half partner and its sign), keeping the given cos/sin.
def rope(x, base=10000.0):
    T, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError(f"rope needs an even feature size, got d={d}")
    positions = torch.arange(T, dtype=torch.float64)
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angle = positions[:, None] * theta
    cos = torch.cat([angle.cos(), angle.cos()], dim=-1).to(x.dtype)
    sin = torch.cat([angle.sin(), angle.sin()], dim=-1).to(x.dtype)
    first, second = x.chunk(2, dim=-1)
    return x * cos + torch.cat([-second, first], dim=-1) * sin
