# exercise: ch02_rnn_bottleneck/rnn_step
# attack: the refused function taken in another cell before the rule applies, under an innocent name
def rnn_step(x_t, h_prev, W_xh, W_hh, b_h, starts=None):
    return _fast(x_t, h_prev, W_xh.T, W_hh.T, b_h, None)
# %%
_fast = torch.rnn_tanh_cell
