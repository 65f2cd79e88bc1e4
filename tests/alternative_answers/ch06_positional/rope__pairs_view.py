# Views the features as (..., d/2, 2) pairs and writes the 2 x 2 rotation out, (x0 cos - x1 sin, x0 sin + x1 cos),
# stacked back, instead of x * cos + partner(x) * sin on interleaved full-width tables.
def rope(x: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Rotary position embedding, interleaved pairs (2i, 2i + 1): (..., T, d) -> (..., T, d)."""
    *_, T, d = x.shape
    if d % 2 != 0:
        raise ValueError(f"rope pairs the features, so d must be even; got d={d}")
    theta = 1.0 / base ** (torch.arange(d // 2, dtype=torch.float64) * 2 / d)   # (d/2,)
    angle = torch.outer(torch.arange(T, dtype=torch.float64), theta)            # (T, d/2)
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    pairs = x.reshape(*x.shape[:-1], d // 2, 2)
    x0, x1 = pairs[..., 0], pairs[..., 1]                                       # (..., T, d/2)
    rotated = torch.stack([x0 * cos - x1 * sin, x0 * sin + x1 * cos], dim=-1)
    return rotated.reshape(x.shape)
