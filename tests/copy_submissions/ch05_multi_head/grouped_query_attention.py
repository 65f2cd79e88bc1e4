# Copy of transformer_lib.modern.GroupedQueryAttention.forward (printed on the chapter 11 page) in the given class: repeat_interleave of the key/value heads, the transpose back, and the mask put on the head axis.
class GroupedQueryAttention(BuggyGroupedQueryAttention):
    def forward(self, query, key, value, mask=None):
        B, T, d_model = query.shape
        S = key.size(1)
        q = self.W_q(query).view(B, T, self.num_heads, self.d_k).transpose(1, 2)
        k, v = (t.view(B, S, self.num_kv_heads, self.d_k).transpose(1, 2) for t in (self.W_k(key), self.W_v(value)))
        group = self.num_heads // self.num_kv_heads
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)  # (B, h, S, d_k)
        if mask is not None and mask.dim() == 3:
            mask = mask.unsqueeze(1)
        output, weights = attention(q, k, v, mask)
        return self.W_o(output.transpose(1, 2).reshape(B, T, d_model)), weights
