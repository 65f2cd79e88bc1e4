# Fills the position ids row by row in a Python loop and builds the mask by comparing key and query indices with a
# square (B, 1, T, T) key mask.
class LeftPaddedLM(BuggyLeftPaddedLM):
    """BuggyLeftPaddedLM with its three bugs fixed (the constructor is inherited)."""

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens (B, T) ids, left-padded with pad_id -> next-token logits (B, T, vocab_size)."""
        B, T = tokens.shape
        positions = torch.zeros(B, T, dtype=torch.long)
        for b in range(B):
            n_real = int((tokens[b] != self.pad_id).sum())
            positions[b, T - n_real:] = torch.arange(n_real)                # counting from the first real token
        x = self.token(tokens) + self.position(positions)
        query = torch.arange(T)[:, None]
        key = torch.arange(T)[None, :]
        key_is_real = (tokens != self.pad_id)[:, None, None, :].expand(B, 1, T, T)
        mask = (key <= query) & key_is_real
        return self.lm_head(self.blocks(x, mask))
