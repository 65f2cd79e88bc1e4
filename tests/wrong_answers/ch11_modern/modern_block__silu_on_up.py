# Wrong answer: three bugs fixed; SiLU still on the up projection.
def modern_block(x: torch.Tensor, weights: dict[str, torch.Tensor], num_heads: int, num_kv_heads: int) -> torch.Tensor:
    """Pre-norm block: RMSNorm, grouped-query causal attention (round-robin heads), RMSNorm, SwiGLU. x (B, T, d) -> (B, T, d)."""
    B, T, d_model = x.shape
    d_k = d_model // num_heads

    def rms_norm(h, gain):
        return gain * h * torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + 1e-5)

    def heads(h, n):  # (B, T, n d_k) -> (B, n, T, d_k)
        return h.reshape(B, T, n, d_k).transpose(1, 2)

    h = rms_norm(x, weights["attention_norm"])
    q = heads(h @ weights["wq"], num_heads)
    k, v = heads(h @ weights["wk"], num_kv_heads), heads(h @ weights["wv"], num_kv_heads)
    group = num_heads // num_kv_heads
  
    k, v = k.repeat(1, group, 1, 1), v.repeat(1, group, 1, 1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
  
    future = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)
    attended = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1) @ v
    x = x + attended.transpose(1, 2).reshape(B, T, d_model) @ weights["wo"]
    h = rms_norm(x, weights["ffn_norm"])
  
    return x + (h @ weights["w_gate"] * F.silu(h @ weights["w_up"])) @ weights["w_down"]
