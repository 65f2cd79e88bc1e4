# copy: transformer_lib.models.TransformerClassifier.forward (printed on the chapter page), mean pooling branch
class ClsClassifier(BuggyClsClassifier):
    """BuggyClsClassifier with its three bugs fixed (the constructor is inherited)."""

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens (B, S) ids, padded on the right with pad_id -> logits (B, num_classes)."""
        real = tokens != self.pad_id  # (B, S)
        x = self.encoder(self.embedding(tokens), real[:, None, None, :])
        pooled = (x * real[..., None]).sum(1) / real.sum(1, keepdim=True).clamp(min=1)
        return self.head(pooled)
