# Loops over the query heads, each with PyTorch's causal scaled_dot_product_attention on kv head i % h_kv's column
# slices; RMSNorm via rsqrt of x.square().mean(-1).
def modern_block(x: torch.Tensor, weights: dict[str, torch.Tensor], num_heads: int, num_kv_heads: int) -> torch.Tensor:
    """Pre-norm block: RMSNorm, grouped-query causal attention (round-robin heads), RMSNorm, SwiGLU.

    x (B, T, d) -> (B, T, d).
    """
    d_model = x.shape[-1]
    d_k = d_model // num_heads

    def rms_norm(t, gain):  # fix: the mean of the squares over the features (dim=-1), not over positions
        return t * torch.rsqrt(t.square().mean(-1, keepdim=True) + 1e-5) * gain

    normed = rms_norm(x, weights["attention_norm"])
    queries, keys, values = normed @ weights["wq"], normed @ weights["wk"], normed @ weights["wv"]
    head_outputs = []
    for i in range(num_heads):
        j = i % num_kv_heads  # fix: round-robin, not consecutive groups
        q_i = queries[..., i * d_k:(i + 1) * d_k]
        k_j, v_j = keys[..., j * d_k:(j + 1) * d_k], values[..., j * d_k:(j + 1) * d_k]
        # fix: causal (the buggy tril(-1) mask hid the past instead of the future); scale 1/sqrt(d_k) by default
        head_outputs.append(F.scaled_dot_product_attention(q_i, k_j, v_j, is_causal=True))
    x = x + torch.cat(head_outputs, dim=-1) @ weights["wo"]
    normed = rms_norm(x, weights["ffn_norm"])
    swiglu = F.silu(normed @ weights["w_gate"]) * (normed @ weights["w_up"])  # fix: SiLU on the gate
    return x + swiglu @ weights["w_down"]
