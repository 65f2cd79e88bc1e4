# Bug 3 left: the output reshaped to (B, T, d_model) without moving the positions back in front of the heads.
class GroupedQueryAttention(BuggyGroupedQueryAttention):
    def forward(self, query, key, value, mask=None):
        B, T, d_model = query.shape
        S = key.size(1)
        g, r, d_k = self.num_kv_heads, self.group_size, self.d_k
        q = self.W_q(query).view(B, T, g, r, d_k).permute(0, 2, 3, 1, 4)
        k = self.W_k(key).view(B, S, g, d_k).transpose(1, 2).unsqueeze(2)
        v = self.W_v(value).view(B, S, g, d_k).transpose(1, 2).unsqueeze(2)
        if mask is not None and mask.dim() == 3:
            mask = mask[:, None, None]
        output, weights = attention(q, k, v, mask)
        merged = output.reshape(B, T, d_model)
        return self.W_o(merged), weights.reshape(B, self.num_heads, T, S)
