# The 3-D mask given one axis for the heads, (B, 1, T, S), as for (B, h, T, S) scores: here the scores have five axes.
class GroupedQueryAttention(BuggyGroupedQueryAttention):
    def forward(self, query, key, value, mask=None):
        B, T, d_model = query.shape
        S = key.size(1)
        g, r, d_k = self.num_kv_heads, self.group_size, self.d_k
        q = self.W_q(query).view(B, T, g, r, d_k).permute(0, 2, 3, 1, 4)
        k = self.W_k(key).view(B, S, g, d_k).transpose(1, 2).unsqueeze(2)
        v = self.W_v(value).view(B, S, g, d_k).transpose(1, 2).unsqueeze(2)
        if mask is not None and mask.dim() == 3:
            mask = mask[:, None]
        output, weights = attention(q, k, v, mask)
        merged = output.permute(0, 3, 1, 2, 4).reshape(B, T, d_model)
        return self.W_o(merged), weights.reshape(B, self.num_heads, T, S)
