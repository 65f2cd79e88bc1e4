# One down-projection with A_q and A_v stacked (2r features), then einsum with each B; the update added through a zero-
# padded (..., 3 d) tensor; factors drawn with rand * 2b - b; merge via a shared helper with a sign.
class LoRAQV(nn.Module):
    """A frozen fused projection nn.Linear(d_in, 3 d) with rank-r LoRA updates on its query and value rows."""

    def __init__(self, base: nn.Linear, r: int, alpha: float) -> None:
        super().__init__()
        if not isinstance(r, int) or isinstance(r, bool) or r < 1:
            raise ValueError(f"r must be a positive int, got {r!r}")
        d, extra = divmod(base.out_features, 3)
        if extra:
            raise ValueError(f"base.out_features={base.out_features} is not a multiple of 3")
        self.base = base
        for p in self.base.parameters():
            p.requires_grad = False
        self.r, self.alpha, self.merged = r, alpha, False
        d_in = base.in_features
        bound = d_in ** -0.5
        w = base.weight
        self.A_q = nn.Parameter((torch.rand(r, d_in, dtype=w.dtype, device=w.device) * 2 - 1) * bound)
        self.A_v = nn.Parameter((torch.rand(r, d_in, dtype=w.dtype, device=w.device) * 2 - 1) * bound)
        self.B_q = nn.Parameter(w.new_zeros(d, r))
        self.B_v = nn.Parameter(w.new_zeros(d, r))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(..., d_in) -> (..., 3 d)."""
        if self.merged:
            return self.base(x)
        r = self.r
        low = torch.einsum("...i,ri->...r", x, torch.cat([self.A_q, self.A_v], dim=0))   # (..., 2r)
        update_q = torch.einsum("...r,dr->...d", low[..., :r], self.B_q)
        update_v = torch.einsum("...r,dr->...d", low[..., r:], self.B_v)
        update = torch.cat([update_q, torch.zeros_like(update_q), update_v], dim=-1)
        return self.base(x) + (self.alpha / r) * update

    def _shift_weight(self, sign: float) -> None:
        d = self.B_q.shape[0]
        factor = sign * self.alpha / self.r
        with torch.no_grad():
            self.base.weight[:d] += factor * (self.B_q @ self.A_q)
            self.base.weight[2 * d:] += factor * (self.B_v @ self.A_v)

    def merge(self) -> None:
        """Add the updates into base.weight (in place); forward is then the base layer alone."""
        if not self.merged:
            self._shift_weight(+1.0)
            self.merged = True

    def unmerge(self) -> None:
        """Take the updates out of base.weight again."""
        if self.merged:
            self._shift_weight(-1.0)
            self.merged = False
