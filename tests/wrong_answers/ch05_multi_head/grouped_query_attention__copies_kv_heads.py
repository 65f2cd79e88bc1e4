# All three bugs fixed by copying each key/value head r times (repeat_interleave to h heads), as transformer_lib does: attention then reads h key heads.
class GroupedQueryAttention(BuggyGroupedQueryAttention):
    def forward(self, query, key, value, mask=None):
        B, T, d_model = query.shape
        S = key.size(1)
        q = self.W_q(query).view(B, T, self.num_heads, self.d_k).transpose(1, 2)
        k = self.W_k(key).view(B, S, self.num_kv_heads, self.d_k).transpose(1, 2).repeat_interleave(self.group_size, dim=1)
        v = self.W_v(value).view(B, S, self.num_kv_heads, self.d_k).transpose(1, 2).repeat_interleave(self.group_size, dim=1)
        if mask is not None and mask.dim() == 3:
            mask = mask.unsqueeze(1)
        output, weights = attention(q, k, v, mask)
        return self.W_o(output.transpose(1, 2).reshape(B, T, d_model)), weights
