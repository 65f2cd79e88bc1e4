# Copied from transformer_lib/lora.py (LoRALinear, renamed; its freeze inlined): one adapter on the
# whole fused projection, keys included, with the library's parameter names.
class LoRAQV(nn.Module):
    def __init__(self, base: nn.Linear, r: int = 8, alpha: float = 8.0, dropout: float = 0.0) -> None:
        super().__init__()
        if not isinstance(base, nn.Linear):
            raise TypeError(f"LoRALinear wraps an nn.Linear, got {type(base).__name__}")
        if not (isinstance(r, int) and r > 0):
            raise ValueError(f"rank r must be a positive int, got {r!r}")
        if alpha <= 0:
            raise ValueError(f"alpha must be > 0, got {alpha!r}")
        for p in base.parameters():
            p.requires_grad_(False)
        self.base = base
        self.r, self.alpha, self.scaling = r, alpha, alpha / r
        self.in_features, self.out_features = base.in_features, base.out_features
        like = {"device": base.weight.device, "dtype": base.weight.dtype}
        self.lora_A = nn.Parameter(torch.empty(r, base.in_features, **like))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r, **like))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        self.dropout = nn.Dropout(dropout)
        self.merged = False

    def delta_weight(self):
        return self.scaling * (self.lora_B @ self.lora_A)

    def forward(self, x):
        y = self.base(x)
        if self.merged:
            return y
        return y + F.linear(F.linear(self.dropout(x), self.lora_A), self.lora_B) * self.scaling

    @torch.no_grad()
    def merge(self):
        if not self.merged:
            self.base.weight += self.delta_weight()
            self.merged = True

    @torch.no_grad()
    def unmerge(self):
        if self.merged:
            self.base.weight -= self.delta_weight()
            self.merged = False
