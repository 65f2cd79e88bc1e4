# copy: transformer_lib.positional.sinusoidal_positional_encoding (printed on the chapter page) added to x, the closest public position code
def rope(x: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Rotary position embedding, interleaved pairs (2i, 2i + 1): (..., T, d) -> (..., T, d)."""
    T, d = x.shape[-2], x.shape[-1]
    position = torch.arange(T, dtype=torch.float64).unsqueeze(1)
    frequencies = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    table = torch.zeros(T, d, dtype=torch.float64)
    table[:, 0::2] = torch.sin(position * frequencies)
    table[:, 1::2] = torch.cos(position * frequencies)
    return x + table.to(x.dtype)
