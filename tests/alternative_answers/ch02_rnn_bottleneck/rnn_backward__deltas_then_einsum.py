# The loop carries only the recurrence and stores each delta; all other gradients after it, over all steps, by einsum.
def rnn_backward(xs: torch.Tensor, h0: torch.Tensor, W_xh: torch.Tensor, W_hh: torch.Tensor, hs: torch.Tensor,
                 grad_hs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Backpropagation through time for the tanh RNN: the gradients of xs, h0, W_xh, W_hh and b_h, given dL/dhs."""
    T = xs.shape[1]
    deltas = torch.zeros_like(hs)                              # dL/d(pre-activation) at every step, (B, T, H)
    from_later = torch.zeros_like(h0)                          # dL/dh_t through the recurrence only
    for t in range(T - 1, -1, -1):
        deltas[:, t] = (grad_hs[:, t] + from_later) * (1 - hs[:, t] * hs[:, t])
        from_later = torch.einsum("bj,ij->bi", deltas[:, t], W_hh)   # delta W_hh^T
    previous = torch.cat([h0[:, None], hs[:, :-1]], dim=1)     # the state each step read, (B, T, H)
    grad_xs = torch.einsum("btj,ij->bti", deltas, W_xh)
    grad_W_xh = torch.einsum("btd,bth->dh", xs, deltas)
    grad_W_hh = torch.einsum("bti,btj->ij", previous, deltas)
    grad_b_h = deltas.sum(dim=(0, 1))
    return grad_xs, from_later, grad_W_xh, grad_W_hh, grad_b_h
