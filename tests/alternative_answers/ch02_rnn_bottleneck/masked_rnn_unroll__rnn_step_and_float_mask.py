# Calls exercise 1's rnn_step at each step and blends with a float mask (m * new + (1 - m) * old),
# not torch.where: the same states.
def masked_rnn_unroll(xs: torch.Tensor, lengths: torch.Tensor, h0: torch.Tensor, W_xh: torch.Tensor,
                      W_hh: torch.Tensor, b_h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """tanh RNN over a right-padded batch xs (B, T, D): states hs (B, T, H), zero at padding, and h_last (B, H)."""
    B, T, _ = xs.shape
    hs = xs.new_zeros(B, T, h0.shape[-1])
    state = h0
    for t in range(T):
        real = (lengths > t).to(xs.dtype).unsqueeze(-1)           # (B, 1): 1.0 where token t is real
        stepped = rnn_step(xs[:, t], state, W_xh, W_hh, b_h)
        hs[:, t] = real * stepped
        state = real * stepped + (1 - real) * state
    return hs, state
