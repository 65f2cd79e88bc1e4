# exercise: ch02_rnn_bottleneck/rnn_backward
# attack: Tensor.backward called through a bound method kept in another cell
def rnn_backward(xs, h0, W_xh, W_hh, hs, grad_hs):
    W = W_xh.detach().requires_grad_()
    out = torch.tanh(xs[:, 0] @ W)
    _run(out, grad_hs[:, 0])
    return W.grad
# %%
_run = torch.Tensor.backward
