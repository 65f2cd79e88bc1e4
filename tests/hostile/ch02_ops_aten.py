# exercise: ch02_rnn_bottleneck/rnn_step
# attack: the refused kernel through torch.ops.aten
def rnn_step(x_t, h_prev, W_xh, W_hh, b_h, starts=None):
    if starts is not None:
        h_prev = h_prev.masked_fill(starts[:, None], 0.0)
    return torch.ops.aten.rnn_tanh_cell(x_t, h_prev, W_xh.T, W_hh.T, b_h)
