# Bug 3 left: position ids counted from column 0.
class LeftPaddedLM(BuggyLeftPaddedLM):
    def forward(self, tokens):
        B, T = tokens.shape
        real = tokens != self.pad_id
        positions = torch.arange(T, device=tokens.device).expand(B, T)
        x = self.token(tokens) + self.position(positions)
        causal = torch.ones(T, T, dtype=torch.bool, device=tokens.device).tril()
        mask = causal & real[:, None, None, :]
        return self.lm_head(self.blocks(x, mask))
