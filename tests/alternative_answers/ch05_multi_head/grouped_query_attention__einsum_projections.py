# Projects with einsum on the layers' weights and unflatten, moves axes with movedim, masks with unsqueeze twice and
# merges with flatten, instead of view/permute on the Linear outputs.
class GroupedQueryAttention(BuggyGroupedQueryAttention):
    """The layer with its three bugs fixed: the given __init__ (and parameters), a corrected forward."""

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """query (B, T, d_model), key and value (B, S, d_model); mask (T, S), (B, T, S) or (B, 1, S),
        True = may attend, the same for every head. Returns output (B, T, d_model), weights (B, h, T, S)."""
        g, r, d_k = self.num_kv_heads, self.group_size, self.d_k

        def project(linear, x):
            return torch.einsum("bti,oi->bto", x, linear.weight) + linear.bias

        q = project(self.W_q, query).unflatten(-1, (g, r, d_k)).movedim(1, 3)    # (B, g, r, T, d_k)
        k = project(self.W_k, key).unflatten(-1, (g, 1, d_k)).movedim(1, 3)      # (B, g, 1, S, d_k)
        v = project(self.W_v, value).unflatten(-1, (g, 1, d_k)).movedim(1, 3)    # (B, g, 1, S, d_k)
        if mask is not None and mask.dim() == 3:
            mask = mask.unsqueeze(1).unsqueeze(1)                                 # (B, 1, 1, T or 1, S)
        output, weights = attention(q, k, v, mask=mask)                          # (B, g, r, T, d_k), (B, g, r, T, S)
        merged = output.movedim(3, 1).flatten(2)                                 # (B, T, g * r * d_k), head order
        return self.W_o(merged), weights.flatten(1, 2)
