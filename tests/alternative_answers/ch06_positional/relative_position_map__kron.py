# Writes M as a sum of two Kronecker products, [[1, 0], [0, 1]] x diag(cos) + [[0, 1], [-1, 0]] x diag(sin), with the
# frequencies from exp(-log(10000) 2i/d), instead of torch.cat of diagonal blocks.
def relative_position_map(k: int, d_model: int) -> torch.Tensor:
    """M (d_model, d_model), float64, with PE_half[pos + k] = PE_half[pos] @ M.T for every position."""
    if d_model % 2:
        raise ValueError(f"odd d_model={d_model}: the sine and cosine halves do not pair up")
    omega = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angle = k * omega
    identity = torch.eye(2, dtype=torch.float64)
    turn = torch.tensor([[0.0, 1.0], [-1.0, 0.0]], dtype=torch.float64)
    return torch.kron(identity, torch.diag(torch.cos(angle))) + torch.kron(turn, torch.diag(torch.sin(angle)))
