# Bug 2 left: the partner (x_1, -x_0), a turn by -p theta.
def rope(x, base=10000.0):
    T, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError(f"rope needs an even feature size, got d={d}")
    positions = torch.arange(T, dtype=torch.float64)
    frequencies = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angle = positions[:, None] * frequencies[None, :]
    cos = angle.cos().repeat_interleave(2, dim=-1).to(x.dtype)
    sin = angle.sin().repeat_interleave(2, dim=-1).to(x.dtype)
    partner = torch.stack([x[..., 1::2], -x[..., 0::2]], dim=-1).flatten(-2)
    return x * cos + partner * sin
