# Fills the four entries of each frequency in a Python loop with math.cos and math.sin instead of building diagonal
# blocks and concatenating them.
def relative_position_map(k: int, d_model: int) -> torch.Tensor:
    """M (d_model, d_model), float64, with PE_half[pos + k] = PE_half[pos] @ M.T for every position."""
    if d_model % 2 != 0:
        raise ValueError(f"d_model must be even for the half-split table, got {d_model}")
    half = d_model // 2
    M = torch.zeros(d_model, d_model, dtype=torch.float64)
    for i in range(half):
        b = k * 10000.0 ** (-2 * i / d_model)
        # sin(a + b) = sin a cos b + cos a sin b: output column i reads input columns i (sin) and i + half (cos)
        M[i, i], M[i, i + half] = math.cos(b), math.sin(b)
        # cos(a + b) = cos a cos b - sin a sin b: output column i + half
        M[i + half, i], M[i + half, i + half] = -math.sin(b), math.cos(b)
    return M
