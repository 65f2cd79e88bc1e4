# exercise: ch03_bahdanau/coverage_attention
# style: an nn.Module with super().__init__() and a repr naming self.__class__.__name__
class CoverageAttention(nn.Module):
    def __init__(self, d_query, d_key, d_attn):
        super().__init__()
        self.w_q = nn.Linear(d_query, d_attn, bias=False)
        self.w_k = nn.Linear(d_key, d_attn, bias=False)
        self.w_c = nn.Linear(1, d_attn, bias=False)
        self.v = nn.Linear(d_attn, 1, bias=False)

    def __repr__(self):
        return f"{self.__class__.__name__}(d_attn={self.v.in_features})"

    def forward(self, query, keys, coverage, mask=None):
        e = self.v(torch.tanh(self.w_q(query)[:, None] + self.w_k(keys) + self.w_c(coverage[..., None]))).squeeze(-1)
        if mask is not None:
            e = e.masked_fill(~mask, float("-inf"))
        a = torch.softmax(e, dim=-1)
        return (a[..., None] * keys).sum(1), a


def coverage_attention(query, keys, coverage, mask=None, module=None):
    return module(query, keys, coverage, mask)
