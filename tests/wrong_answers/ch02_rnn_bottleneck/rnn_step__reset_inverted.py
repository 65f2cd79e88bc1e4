# The reset applied to the rows that go on (~starts) instead of the rows where a sequence starts.
def rnn_step(x_t, h_prev, W_xh, W_hh, b_h, starts=None):
    if starts is not None:
        h_prev = h_prev.masked_fill(~starts[:, None], 0.0)
    return torch.tanh(x_t @ W_xh + h_prev @ W_hh + b_h)
