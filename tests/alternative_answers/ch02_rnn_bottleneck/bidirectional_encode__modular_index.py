# Index (n - 1 - t) mod T: the real tokens reversed, then the padding (which no real state reads); float mask.
def bidirectional_encode(xs: torch.Tensor, lengths: torch.Tensor, forward_rnn: nn.RNN,
                         backward_rnn: nn.RNN) -> tuple[torch.Tensor, torch.Tensor]:
    """Forward and backward states (B, T, 2H) of a right-padded batch, 0 at padding, and the context (B, 2H)."""
    B, T, D = xs.shape
    t = torch.arange(T)
    # bug 1: the whole row was flipped, so the backward RNN read the padding first. Row b reads position
    # (n - 1 - t) mod T: its n real tokens reversed first, then its padding (reversed too, read after them).
    index = (lengths[:, None] - 1 - t[None, :]) % T                   # (B, T), a permutation that undoes itself
    forward_states = forward_rnn(xs)[0]
    H = forward_states.shape[-1]
    backward_read = backward_rnn(torch.gather(xs, 1, index[..., None].expand(B, T, D)))[0]
    backward_states = torch.gather(backward_read, 1, index[..., None].expand(B, T, H))
    keep = (t[None, :] < lengths[:, None]).to(xs.dtype)[..., None]   # bug 3: 0 at padding
    states = torch.cat([forward_states, backward_states], dim=-1) * keep
    last = torch.gather(forward_states, 1, (lengths - 1)[:, None, None].expand(B, 1, H))[:, 0]  # bug 2
    return states, torch.cat([last, backward_states[:, 0]], dim=-1)
