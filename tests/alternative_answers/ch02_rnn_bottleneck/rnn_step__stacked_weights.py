# One product of [x_t, h~] (B, D + H) with the stacked weights (D + H, H), as nn.RNN fuses them; reset by where.
def rnn_step(x_t: torch.Tensor, h_prev: torch.Tensor, W_xh: torch.Tensor, W_hh: torch.Tensor,
             b_h: torch.Tensor, starts: torch.Tensor | None = None) -> torch.Tensor:
    """One tanh RNN step: x_t (B, D), h_prev (B, H) -> h_t (B, H); rows where starts (B,) is True start from zeros."""
    h_tilde = h_prev
    if starts is not None:
        h_tilde = torch.where(starts.reshape(-1, 1), torch.zeros_like(h_prev), h_prev)
    inputs = torch.cat([x_t, h_tilde], dim=1)                  # (B, D + H)
    weights = torch.cat([W_xh, W_hh], dim=0)                   # (D + H, H)
    return torch.tanh(inputs @ weights + b_h)
