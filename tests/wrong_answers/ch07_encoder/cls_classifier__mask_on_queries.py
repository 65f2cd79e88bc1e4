# The padding mask on the query axis (B, 1, S + 1, 1): real tokens attend to padded keys.
class ClsClassifier(BuggyClsClassifier):
    def forward(self, tokens):
        cls = torch.full_like(tokens[:, :1], self.cls_id)
        with_cls = torch.cat([cls, tokens], dim=1)
        real = torch.cat([torch.ones_like(cls, dtype=torch.bool), tokens != self.pad_id], dim=1)
        states = self.encoder(self.embedding(with_cls), real[:, None, :, None])
        return self.head(states[:, 0])
