# Splits the queries into h heads first and regroups them with a reshape (B, h, T, d_k) -> (B, g, r, T, d_k), gives a
# 3-D mask its two head axes with reshape, and merges the heads with torch.cat over the unbound heads.
class GroupedQueryAttention(BuggyGroupedQueryAttention):
    """The layer with its three bugs fixed: the given __init__ (and parameters), a corrected forward."""

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """query (B, T, d_model), key and value (B, S, d_model); mask (T, S), (B, T, S) or (B, 1, S),
        True = may attend, the same for every head. Returns output (B, T, d_model), weights (B, h, T, S)."""
        B, T, _ = query.shape
        S = key.shape[1]
        h, g, r, d_k = self.num_heads, self.num_kv_heads, self.group_size, self.d_k
        heads = self.W_q(query).reshape(B, T, h, d_k).transpose(1, 2)    # (B, h, T, d_k): head i
        q = heads.reshape(B, g, r, T, d_k)                               # head i = group i // r, member i % r
        k = self.W_k(key).reshape(B, S, g, d_k).transpose(1, 2)[:, :, None]    # (B, g, 1, S, d_k)
        v = self.W_v(value).reshape(B, S, g, d_k).transpose(1, 2)[:, :, None]  # (B, g, 1, S, d_k)
        if mask is not None and mask.dim() == 3:
            mask = mask.reshape(mask.shape[0], 1, 1, mask.shape[1], mask.shape[2])  # (B, 1, 1, T or 1, S)
        output, weights = attention(q, k, v, mask)                       # (B, g, r, T, d_k), (B, g, r, T, S)
        per_head = output.reshape(B, h, T, d_k).unbind(dim=1)            # h tensors (B, T, d_k), in head order
        return self.W_o(torch.cat(per_head, dim=-1)), weights.reshape(B, h, T, S)
