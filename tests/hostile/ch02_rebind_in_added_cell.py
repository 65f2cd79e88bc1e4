# exercise: ch02_rnn_bottleneck/masked_rnn_unroll
# attack: an honest-looking answer replaced by an added cell with the library's RNN
def masked_rnn_unroll(xs, lengths, h0, W_xh, W_hh, b_h):
    raise NotImplementedError
# %%
def _via_library(xs, lengths, h0, W_xh, W_hh, b_h):
    rnn = nn.RNN(W_xh.shape[0], W_xh.shape[1], batch_first=True)
    return rnn(xs, h0[None])


masked_rnn_unroll = _via_library
