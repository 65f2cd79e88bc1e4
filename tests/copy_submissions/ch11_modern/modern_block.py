# Copied from transformer_lib/modern.py (RMSNorm.forward, GroupedQueryAttention.forward with its
# repeat_interleave grouping, SwiGLUFeedForward.forward, ModernBlock.forward), written out on the
# exercise's weights, without RoPE.
def modern_block(x, weights, num_heads, num_kv_heads):
    B, T, d_model = x.shape
    d_k = d_model // num_heads

    def rms_norm(h, weight, eps=1e-5):
        return weight * h * torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + eps)

    h = rms_norm(x, weights["attention_norm"])
    q = (h @ weights["wq"]).view(B, T, num_heads, d_k).transpose(1, 2)
    k, v = ((h @ weights[n]).view(B, T, num_kv_heads, d_k).transpose(1, 2) for n in ("wk", "wv"))
    group = num_heads // num_kv_heads
    k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    output = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    x = x + output.transpose(1, 2).reshape(B, T, d_model) @ weights["wo"]
    h = rms_norm(x, weights["ffn_norm"])
    return x + (F.silu(h @ weights["w_gate"]) * (h @ weights["w_up"])) @ weights["w_down"]
