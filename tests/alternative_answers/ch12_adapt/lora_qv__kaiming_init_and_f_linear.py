# Factors started with nn.init.kaiming_uniform_(a=sqrt(5)) (nn.Linear's own init), forward through F.linear on slices of
# the base output, merge with add_(alpha=...) on .data.
class LoRAQV(nn.Module):
    """A frozen fused projection nn.Linear(d_in, 3 d) with rank-r LoRA updates on its query and value rows."""

    def __init__(self, base: nn.Linear, r: int, alpha: float) -> None:
        super().__init__()
        if base.out_features % 3 != 0:
            raise ValueError(f"{base.out_features} outputs are not queries, keys and values of one size")
        if type(r) is not int or r <= 0:
            raise ValueError(f"r must be a positive int, got {r!r}")
        base.requires_grad_(False)
        self.base = base
        self.r = r
        self.alpha = alpha
        self.merged = False
        d = base.out_features // 3
        dtype, device = base.weight.dtype, base.weight.device
        self.A_q = nn.Parameter(torch.empty(r, base.in_features, dtype=dtype, device=device))
        self.A_v = nn.Parameter(torch.empty(r, base.in_features, dtype=dtype, device=device))
        nn.init.kaiming_uniform_(self.A_q, a=math.sqrt(5))  # what nn.Linear does: uniform in +-1/sqrt(d_in)
        nn.init.kaiming_uniform_(self.A_v, a=math.sqrt(5))
        self.B_q = nn.Parameter(torch.zeros(d, r, dtype=dtype, device=device))
        self.B_v = nn.Parameter(torch.zeros(d, r, dtype=dtype, device=device))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(..., d_in) -> (..., 3 d)."""
        out = self.base(x)
        if self.merged:
            return out
        d = self.B_q.shape[0]
        s = self.alpha / self.r
        q_rows = out[..., :d] + s * F.linear(F.linear(x, self.A_q), self.B_q)
        v_rows = out[..., 2 * d:] + s * F.linear(F.linear(x, self.A_v), self.B_v)
        return torch.cat([q_rows, out[..., d:2 * d], v_rows], dim=-1)

    def merge(self) -> None:
        """Add the updates into base.weight (in place); forward is then the base layer alone."""
        if self.merged:
            return
        d, s = self.B_q.shape[0], self.alpha / self.r
        self.base.weight.data[:d].add_(self.B_q.data @ self.A_q.data, alpha=s)
        self.base.weight.data[2 * d:].add_(self.B_v.data @ self.A_v.data, alpha=s)
        self.merged = True

    def unmerge(self) -> None:
        """Take the updates out of base.weight again."""
        if not self.merged:
            return
        d, s = self.B_q.shape[0], self.alpha / self.r
        self.base.weight.data[:d].sub_(self.B_q.data @ self.A_q.data, alpha=s)
        self.base.weight.data[2 * d:].sub_(self.B_v.data @ self.A_v.data, alpha=s)
        self.merged = False
