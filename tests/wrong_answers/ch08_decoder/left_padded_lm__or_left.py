# Bug 2 left: the padding mask OR-ed with the causal mask.
class LeftPaddedLM(BuggyLeftPaddedLM):
    def forward(self, tokens):
        B, T = tokens.shape
        real = tokens != self.pad_id
        positions = (real.long().cumsum(dim=1) - 1).clamp(min=0)
        x = self.token(tokens) + self.position(positions)
        causal = torch.ones(T, T, dtype=torch.bool, device=tokens.device).tril()
        mask = causal | real[:, None, None, :]
        return self.lm_head(self.blocks(x, mask))
