# Wrong answer: merge() adds the update again when already merged.
class LoRAQV(nn.Module):
    """A frozen fused projection nn.Linear(d_in, 3 d) with rank-r LoRA updates on its query and value rows."""

    def __init__(self, base: nn.Linear, r: int, alpha: float) -> None:
        super().__init__()
        if not isinstance(r, int) or isinstance(r, bool) or r < 1:
            raise ValueError(f"the rank r must be a positive int, got {r!r}")
        if base.out_features % 3:
            raise ValueError(f"base must have 3 d outputs (queries, keys, values), got {base.out_features}")
        self.base = base
        for parameter in base.parameters():
            parameter.requires_grad_(False)
        self.r, self.alpha, self.merged = r, alpha, False
        d, d_in = base.out_features // 3, base.in_features
        like = {"dtype": base.weight.dtype, "device": base.weight.device}
        bound = 1.0 / math.sqrt(d_in)
        self.A_q = nn.Parameter(torch.empty(r, d_in, **like).uniform_(-bound, bound))
        self.A_v = nn.Parameter(torch.empty(r, d_in, **like).uniform_(-bound, bound))
        self.B_q = nn.Parameter(torch.zeros(d, r, **like))  # zero: the layer starts as the base layer
        self.B_v = nn.Parameter(torch.zeros(d, r, **like))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(..., d_in) -> (..., 3 d)."""
        out = self.base(x)
        if self.merged:
            return out
        scaling = self.alpha / self.r
        query = (x @ self.A_q.T) @ self.B_q.T * scaling  # (..., d): two thin products, no (d, d_in) matrix
        value = (x @ self.A_v.T) @ self.B_v.T * scaling
        return out + torch.cat([query, torch.zeros_like(query), value], dim=-1)

    def merge(self) -> None:
        """Add the updates into base.weight (in place); forward is then the base layer alone."""
        d, scaling = self.B_q.shape[0], self.alpha / self.r
        with torch.no_grad():
            self.base.weight[:d] += scaling * (self.B_q @ self.A_q)
            self.base.weight[2 * d:] += scaling * (self.B_v @ self.A_v)
        self.merged = True

    def unmerge(self) -> None:
        """Take the updates out of base.weight again."""
        if not self.merged:
            return
        d, scaling = self.B_q.shape[0], self.alpha / self.r
        with torch.no_grad():
            self.base.weight[:d] -= scaling * (self.B_q @ self.A_q)
            self.base.weight[2 * d:] -= scaling * (self.B_v @ self.A_v)
        self.merged = False
