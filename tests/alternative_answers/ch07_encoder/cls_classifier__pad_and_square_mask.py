# Prepends [CLS] with F.pad, builds the mask from the ids with [CLS] forced visible, passes a full
# (B, 1, S + 1, S + 1) mask, and reads position 0 with select.
class ClsClassifier(BuggyClsClassifier):
    """BuggyClsClassifier with its three bugs fixed (the constructor is inherited)."""

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens (B, S) ids, padded on the right with pad_id -> logits (B, num_classes)."""
        with_cls = F.pad(tokens, (1, 0), value=self.cls_id)                     # (B, S + 1)
        keys = with_cls != self.pad_id
        keys[:, 0] = True                                     # [CLS] is never masked, even if cls_id == pad_id
        n = with_cls.shape[1]
        mask = keys[:, None, None, :].expand(-1, 1, n, n)                       # every query sees the same keys
        states = self.encoder(self.embedding(with_cls), mask)
        return self.head(states.select(1, 0))
