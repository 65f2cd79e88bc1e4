# LoRALinear's effective weight pasted: forward through F.linear(x, W + (alpha / r) delta), delta one (3 d, d_in) matrix.
# earns 5, then 2 once issue 50 item 2 (the forward's "without forming a (3 d, d_in) matrix" checked) lands: merge and unmerge stay right (2)
class LoRAQV(nn.Module):
    def __init__(self, base, r, alpha):
        super().__init__()
        if not isinstance(r, int) or r < 1:
            raise ValueError(f"r must be a positive int, got {r!r}")
        if base.out_features % 3:
            raise ValueError(f"out_features must be a multiple of 3, got {base.out_features}")
        self.base = base
        for parameter in base.parameters():
            parameter.requires_grad_(False)
        self.r, self.alpha, self.merged = r, alpha, False
        d, d_in = base.out_features // 3, base.in_features
        like = {"dtype": base.weight.dtype, "device": base.weight.device}
        bound = 1.0 / math.sqrt(d_in)
        self.A_q = nn.Parameter(torch.empty(r, d_in, **like).uniform_(-bound, bound))
        self.A_v = nn.Parameter(torch.empty(r, d_in, **like).uniform_(-bound, bound))
        self.B_q = nn.Parameter(torch.zeros(d, r, **like))
        self.B_v = nn.Parameter(torch.zeros(d, r, **like))

    def delta_weight(self):
        update = torch.cat([self.B_q @ self.A_q, torch.zeros_like(self.B_q @ self.A_q), self.B_v @ self.A_v])
        return self.alpha / self.r * update  # (3 d, d_in)

    def forward(self, x):
        if self.merged:
            return self.base(x)
        return F.linear(x, self.base.weight + self.delta_weight(), self.base.bias)

    def merge(self):
        if not self.merged:
            with torch.no_grad():
                self.base.weight += self.delta_weight()
            self.merged = True

    def unmerge(self):
        if self.merged:
            with torch.no_grad():
                self.base.weight -= self.delta_weight()
            self.merged = False
