# exercise: ch02_rnn_bottleneck/rnn_step
# attack: the same through torch.overrides' helper
from torch.overrides import _pop_mode_temporarily


def rnn_step(x_t, h_prev, W_xh, W_hh, b_h, starts=None):
    with _pop_mode_temporarily():
        return torch.rnn_tanh_cell(x_t, h_prev, W_xh.T, W_hh.T, b_h, None)
