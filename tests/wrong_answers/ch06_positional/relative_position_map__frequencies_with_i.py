# The frequencies 10000^(-i/d) instead of 10000^(-2i/d).
def relative_position_map(k, d_model):
    if d_model % 2:
        raise ValueError(f"odd d_model={d_model}")
    phase = k * 10000.0 ** (-1.0 * torch.arange(d_model // 2, dtype=torch.float64) / d_model)
    c, s = torch.diag(phase.cos()), torch.diag(phase.sin())
    return torch.cat([torch.cat([c, s], dim=1), torch.cat([-s, c], dim=1)], dim=0)
