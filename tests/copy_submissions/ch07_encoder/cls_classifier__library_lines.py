# The buggy forward with transformer_lib.models.TransformerClassifier.forward's lines where they differ (real = tokens != pad_id, the mask real[:, None, None, :], the mean over real tokens), [CLS] dropped.
class ClsClassifier(BuggyClsClassifier):
    def forward(self, tokens):
        real = tokens != self.pad_id
        states = self.encoder(self.embedding(tokens), real[:, None, None, :])
        pooled = (states * real[..., None]).sum(1) / real.sum(1, keepdim=True).clamp(min=1)
        return self.head(pooled)
