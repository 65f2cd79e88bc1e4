# exercise: ch02_rnn_bottleneck/rnn_step
# attack: nn.RNNCell imported from where it is defined
from torch.nn.modules.rnn import RNNCell


def rnn_step(x_t, h_prev, W_xh, W_hh, b_h, starts=None):
    cell = RNNCell(W_xh.shape[0], W_xh.shape[1]).to(x_t.dtype)
    with torch.no_grad():
        cell.weight_ih.copy_(W_xh.T)
        cell.weight_hh.copy_(W_hh.T)
        cell.bias_ih.copy_(b_h)
        cell.bias_hh.zero_()
    return cell(x_t, h_prev)
