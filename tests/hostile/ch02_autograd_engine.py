# exercise: ch02_rnn_bottleneck/rnn_backward
# attack: autograd's C engine called directly
def rnn_backward(xs, h0, W_xh, W_hh, hs, grad_hs):
    engine = torch._C._ImperativeEngine()
    leaves = [W_xh.detach().requires_grad_(), W_hh.detach().requires_grad_()]
    out = torch.tanh(xs[:, 0] @ leaves[0] + h0 @ leaves[1])
    return engine.run_backward((out,), (grad_hs[:, 0],), False, False, tuple(leaves), False, False)
