# The reset as a product with a float keep mask (1 - starts) instead of masked_fill, and torch.matmul for @.
def rnn_step(x_t: torch.Tensor, h_prev: torch.Tensor, W_xh: torch.Tensor, W_hh: torch.Tensor,
             b_h: torch.Tensor, starts: torch.Tensor | None = None) -> torch.Tensor:
    """One tanh RNN step: x_t (B, D), h_prev (B, H) -> h_t (B, H); rows where starts (B,) is True start from zeros."""
    if starts is None:
        keep = torch.ones(h_prev.shape[0], 1, dtype=h_prev.dtype)
    else:
        keep = 1.0 - starts.to(h_prev.dtype).unsqueeze(1)          # (B, 1): 0 where a sequence starts
    pre_activation = torch.matmul(x_t, W_xh) + torch.matmul(keep * h_prev, W_hh) + b_h
    return torch.tanh(pre_activation)
