# Treats each pair (x_2i, x_2i+1) as the complex number x_2i + i x_2i+1 and multiplies it by e^{i p theta}
# (torch.polar), instead of real cos/sin tables.
def rope(x: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Rotary position embedding, interleaved pairs (2i, 2i + 1): (..., T, d) -> (..., T, d)."""
    T, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError(f"rope needs an even number of features, got {d}")
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angle = torch.arange(T, dtype=torch.float64)[:, None] * theta[None, :]    # (T, d/2)
    turn = torch.polar(torch.ones_like(angle), angle)                          # e^{i p theta_i}, complex128
    z = torch.view_as_complex(x.to(torch.float64).contiguous().reshape(*x.shape[:-1], d // 2, 2))
    return torch.view_as_real(z * turn).reshape(x.shape).to(x.dtype)
