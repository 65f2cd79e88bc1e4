# [CLS] appended after the sentence (its position moves with the padding), read at -1.
class ClsClassifier(BuggyClsClassifier):
    def forward(self, tokens):
        cls = torch.full_like(tokens[:, :1], self.cls_id)
        with_cls = torch.cat([tokens, cls], dim=1)
        real = torch.cat([tokens != self.pad_id, torch.ones_like(cls, dtype=torch.bool)], dim=1)
        states = self.encoder(self.embedding(with_cls), real[:, None, None, :])
        return self.head(states[:, -1])
