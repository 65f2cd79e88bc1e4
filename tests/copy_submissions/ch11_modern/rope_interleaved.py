# Copied from transformer_lib/rope.py (rotary_cos_sin and apply_rotary, shown on book/ch11_modern.md,
# section 2), inlined and renamed: the half-split layout, pairs (i, i + d/2).
def rope_interleaved(x, start=0, base=10000.0):
    d_head = x.size(-1)
    if d_head % 2 != 0:
        raise ValueError(f"RoPE rotates pairs of features: d_head must be even, got {d_head}")
    positions = torch.arange(start, start + x.size(-2))
    theta = base ** (-torch.arange(0, d_head, 2, dtype=torch.float64) / d_head)
    angle = positions.to(torch.float64)[:, None] * theta
    angle = torch.cat([angle, angle], dim=-1)
    cos, sin = angle.cos(), angle.sin()
    first, second = x.chunk(2, dim=-1)
    rotated_half = torch.cat([-second, first], dim=-1)
    return x * cos.to(x.dtype) + rotated_half * sin.to(x.dtype)
