# exercise: ch06_positional/rope
# style: rotations as complex numbers (torch.polar, torch.view_as_complex)
def rope(x, positions, base=10000.0):
    d = x.shape[-1]
    freqs = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angles = positions[:, None].double() * freqs[None]
    rotation = torch.polar(torch.ones_like(angles), angles)
    pairs = torch.view_as_complex(x.double().reshape(*x.shape[:-1], d // 2, 2).contiguous())
    return torch.view_as_real(pairs * rotation).reshape(x.shape).to(x.dtype)
