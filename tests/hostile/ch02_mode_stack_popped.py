# exercise: ch02_rnn_bottleneck/rnn_step
# attack: torch's function-mode stack popped around the refused call (refuse's mode no longer sees it)
def rnn_step(x_t, h_prev, W_xh, W_hh, b_h, starts=None):
    if starts is not None:
        h_prev = h_prev.masked_fill(starts[:, None], 0.0)
    mode = torch._C._pop_torch_function_stack()
    try:
        return torch.rnn_tanh_cell(x_t, h_prev, W_xh.T, W_hh.T, b_h, None)
    finally:
        torch._C._push_on_torch_function_stack(mode)
