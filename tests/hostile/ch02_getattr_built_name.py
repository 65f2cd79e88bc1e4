# exercise: ch02_rnn_bottleneck/rnn_step
# attack: the refused function named at run time
def rnn_step(x_t, h_prev, W_xh, W_hh, b_h, starts=None):
    name = "rnn_" + "tanh_cell"
    return getattr(torch, name)(x_t, h_prev, W_xh.T, W_hh.T, b_h, None)
