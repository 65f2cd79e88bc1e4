# The reversal index built row by row in Python, advanced indexing instead of gather, torch.where for the zeros.
def bidirectional_encode(xs: torch.Tensor, lengths: torch.Tensor, forward_rnn: nn.RNN,
                         backward_rnn: nn.RNN) -> tuple[torch.Tensor, torch.Tensor]:
    """Forward and backward states (B, T, 2H) of a right-padded batch, 0 at padding, and the context (B, 2H)."""
    B, T, _ = xs.shape
    index = []
    for n in lengths.tolist():                  # bug 1: reverse the n real tokens only, padding stays in place
        index.append(list(range(n - 1, -1, -1)) + list(range(n, T)))
    index = torch.tensor(index, dtype=torch.long)                      # (B, T)
    batch = torch.arange(B)[:, None]                                   # (B, 1)
    forward_states, _ = forward_rnn(xs)
    backward_read, _ = backward_rnn(xs[batch, index])                  # begins at each row's last real token
    backward_states = backward_read[batch, index]                      # back to the positions' order
    real = (torch.arange(T)[None, :] < lengths[:, None])[..., None]    # (B, T, 1)
    both = torch.cat([forward_states, backward_states], dim=-1)
    states = torch.where(real, both, torch.zeros_like(both))           # bug 3: padding must hold zeros
    forward_last = forward_states[torch.arange(B), lengths - 1]        # bug 2: the last REAL token, not column T - 1
    context = torch.cat([forward_last, backward_states[:, 0]], dim=-1)
    return states, context
