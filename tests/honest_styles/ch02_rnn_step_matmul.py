# exercise: ch02_rnn_bottleneck/rnn_step
# style: torch.matmul and torch.where, type hints
def rnn_step(x_t: torch.Tensor, h_prev: torch.Tensor, W_xh: torch.Tensor, W_hh: torch.Tensor,
             b_h: torch.Tensor, starts: torch.Tensor | None = None) -> torch.Tensor:
    if starts is not None:
        h_prev = torch.where(starts[:, None], torch.zeros_like(h_prev), h_prev)
    return torch.tanh(torch.matmul(x_t, W_xh) + torch.matmul(h_prev, W_hh) + b_h)
