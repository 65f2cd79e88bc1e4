# The new state zeroed where a sequence starts, instead of the previous state.
def rnn_step(x_t, h_prev, W_xh, W_hh, b_h, starts=None):
    h_t = torch.tanh(x_t @ W_xh + h_prev @ W_hh + b_h)
    return h_t if starts is None else h_t.masked_fill(starts[:, None], 0.0)
