# exercise: ch02_rnn_bottleneck/rnn_step
# style: `from torch import nn`, `import torch.nn.functional as F` (F.linear is allowed), mask arithmetic
import torch.nn.functional as F
from torch import nn


def rnn_step(x_t, h_prev, W_xh, W_hh, b_h, starts=None):
    keep = 1.0 if starts is None else (~starts).to(h_prev.dtype)[:, None]
    pre = F.linear(x_t, W_xh.T) + F.linear(h_prev * keep, W_hh.T, b_h)
    return nn.functional.tanh(pre)
