# Adapted from book/ch02_rnn_bottleneck.md, section 2: recurrent_part re-run with autograd, as input_sensitivity does (.backward(), then .grad).
def rnn_backward(xs: torch.Tensor, h0: torch.Tensor, W_xh: torch.Tensor, W_hh: torch.Tensor, hs: torch.Tensor,
                 grad_hs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Backpropagation through time for the tanh RNN: the gradients of xs, h0, W_xh, W_hh and b_h, given dL/dhs."""
    leaves = [t.detach().clone().requires_grad_(True) for t in (xs, h0, W_xh, W_hh)]
    xs, h0, W_xh, W_hh = leaves
    # b_h is recovered from the first state: tanh^-1(hs[:, 0]) - x_0 W_xh - h0 W_hh, averaged over the batch
    b_h = (torch.atanh(hs[:, 0]) - xs[:, 0].detach() @ W_xh.detach() - h0.detach() @ W_hh.detach()).mean(0)
    b_h = b_h.clone().requires_grad_(True)
    projected = xs @ W_xh + b_h
    state, states = h0, []
    for t in range(projected.shape[1]):
        state = torch.tanh(projected[:, t] + state @ W_hh)
        states.append(state)
    (torch.stack(states, dim=1) * grad_hs).sum().backward()
    return xs.grad, h0.grad, W_xh.grad, W_hh.grad, b_h.grad
