# One batch element at a time with vectors: outer products for the weight gradients, tanh' as (1 - h)(1 + h).
def rnn_backward(xs: torch.Tensor, h0: torch.Tensor, W_xh: torch.Tensor, W_hh: torch.Tensor, hs: torch.Tensor,
                 grad_hs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Backpropagation through time for the tanh RNN: the gradients of xs, h0, W_xh, W_hh and b_h, given dL/dhs."""
    B, T, _ = xs.shape
    grad_xs = torch.zeros_like(xs)
    grad_h0 = torch.zeros_like(h0)
    grad_W_xh = torch.zeros_like(W_xh)
    grad_W_hh = torch.zeros_like(W_hh)
    grad_b_h = torch.zeros(W_hh.shape[0], dtype=xs.dtype)
    for b in range(B):
        carried = torch.zeros(W_hh.shape[0], dtype=xs.dtype)  # dL/dh_t from the steps after t
        for t in reversed(range(T)):
            h = hs[b, t]
            delta = (grad_hs[b, t] + carried) * (1 - h) * (1 + h)    # through tanh
            h_before = h0[b] if t == 0 else hs[b, t - 1]
            grad_W_xh += torch.outer(xs[b, t], delta)
            grad_W_hh += torch.outer(h_before, delta)
            grad_b_h += delta
            grad_xs[b, t] = W_xh @ delta                       # (D, H) @ (H,)
            carried = W_hh @ delta                             # to h_{t-1}
        grad_h0[b] = carried
    return grad_xs, grad_h0, grad_W_xh, grad_W_hh, grad_b_h
