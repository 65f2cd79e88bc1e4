# exercise: ch02_rnn_bottleneck/rnn_backward
# attack: gradients switched back on through torch._C inside the answer
def rnn_backward(xs, h0, W_xh, W_hh, hs, grad_hs):
    torch._C._set_grad_enabled(True)
    W = W_xh.detach().requires_grad_()
    (torch.tanh(xs[:, 0] @ W) * grad_hs[:, 0]).sum().backward()
    return W.grad
