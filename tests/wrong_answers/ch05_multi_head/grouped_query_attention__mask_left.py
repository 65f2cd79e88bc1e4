# Bug 2 left: the 3-D mask unsqueezed at axis 1, (B, 1, T, S), which puts the batch on the group axis.
class GroupedQueryAttention(BuggyGroupedQueryAttention):
    def forward(self, query, key, value, mask=None):
        B, T, d_model = query.shape
        S = key.size(1)
        g, r, d_k = self.num_kv_heads, self.group_size, self.d_k
        q = self.W_q(query).view(B, T, g, r, d_k).permute(0, 2, 3, 1, 4)
        k = self.W_k(key).view(B, S, g, d_k).transpose(1, 2).unsqueeze(2)
        v = self.W_v(value).view(B, S, g, d_k).transpose(1, 2).unsqueeze(2)
        if mask is not None and mask.dim() == 3:
            mask = mask.unsqueeze(1)
        output, weights = attention(q, k, v, mask)
        merged = output.permute(0, 3, 1, 2, 4).reshape(B, T, d_model)
        return self.W_o(merged), weights.reshape(B, self.num_heads, T, S)
