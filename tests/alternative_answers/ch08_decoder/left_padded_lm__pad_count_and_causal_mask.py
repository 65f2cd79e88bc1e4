# Position ids as column minus the row's number of pads (clamped at 0), the page's causal_mask, and torch.logical_and
# with the key mask.
class LeftPaddedLM(BuggyLeftPaddedLM):
    """BuggyLeftPaddedLM with its three bugs fixed (the constructor is inherited)."""

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens (B, T) ids, left-padded with pad_id -> next-token logits (B, T, vocab_size)."""
        B, T = tokens.shape
        is_pad = tokens == self.pad_id
        n_pad = is_pad.sum(dim=1, keepdim=True)                              # left padding: the first n_pad columns
        positions = (torch.arange(T, device=tokens.device)[None, :] - n_pad).clamp(min=0)
        x = self.token(tokens) + self.position(positions)
        mask = torch.logical_and(causal_mask(T, device=tokens.device)[None, None], ~is_pad[:, None, None, :])
        return self.lm_head(self.blocks(x, mask))
