# Passes only the key padding mask (B, 1, 1, T) and lets the blocks add the causal mask with is_causal=True; positions
# from cumsum with torch.where.
class LeftPaddedLM(BuggyLeftPaddedLM):
    """BuggyLeftPaddedLM with its three bugs fixed (the constructor is inherited)."""

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens (B, T) ids, left-padded with pad_id -> next-token logits (B, T, vocab_size)."""
        real = tokens != self.pad_id
        counted = real.long().cumsum(dim=1)                                  # 1 at the first real token
        positions = torch.where(real, counted - 1, torch.zeros_like(counted))
        x = self.token(tokens) + self.position(positions)
        return self.lm_head(self.blocks(x, real[:, None, None, :], is_causal=True))
