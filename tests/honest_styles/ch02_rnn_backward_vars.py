# exercise: ch02_rnn_bottleneck/rnn_backward
# style: backpropagation through time by hand, a debug print of vars()
def rnn_backward(xs, h0, W_xh, W_hh, hs, grad_hs):
    T = xs.shape[1]
    dW_xh, dW_hh = torch.zeros_like(W_xh), torch.zeros_like(W_hh)
    db = torch.zeros(W_hh.shape[0], dtype=W_hh.dtype)
    carry = torch.zeros_like(h0)
    for t in reversed(range(T)):
        dh = grad_hs[:, t] + carry
        dz = dh * (1 - hs[:, t] ** 2)
        prev = hs[:, t - 1] if t > 0 else h0
        dW_xh += xs[:, t].T @ dz
        dW_hh += prev.T @ dz
        db += dz.sum(0)
        carry = dz @ W_hh.T
    if False:
        print(sorted(vars()))
    return dW_xh, dW_hh, db, carry
