# einsum for the products, RMSNorm from the vector norm, round-robin kv heads by index_select with i % h_kv, torch.where
# on an allowed (tril) mask, SiLU as g * sigmoid(g).
def modern_block(x: torch.Tensor, weights: dict[str, torch.Tensor], num_heads: int, num_kv_heads: int) -> torch.Tensor:
    """Pre-norm block: RMSNorm, grouped-query causal attention (round-robin heads), RMSNorm, SwiGLU.

    x (B, T, d) -> (B, T, d).
    """
    B, T, d_model = x.shape
    d_k = d_model // num_heads

    def rms_norm(h, gain):  # fix: over the features of each token (the buggy one averaged over positions)
        mean_square = torch.linalg.vector_norm(h, dim=-1, keepdim=True) ** 2 / d_model
        return gain * h / torch.sqrt(mean_square + 1e-5)

    h = rms_norm(x, weights["attention_norm"])
    q = torch.einsum("btd,de->bte", h, weights["wq"]).view(B, T, num_heads, d_k)
    k = torch.einsum("btd,de->bte", h, weights["wk"]).view(B, T, num_kv_heads, d_k)
    v = torch.einsum("btd,de->bte", h, weights["wv"]).view(B, T, num_kv_heads, d_k)
    # fix: round-robin grouping, query head i reads kv head i % h_kv (repeat_interleave gave i // group)
    kv_of_head = torch.arange(num_heads) % num_kv_heads
    k, v = k.index_select(2, kv_of_head), v.index_select(2, kv_of_head)
    scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(d_k)
    # fix: a query sees itself and the past (tril), the buggy mask hid the past and showed the future
    allowed = torch.ones(T, T, dtype=torch.bool).tril()
    scores = torch.where(allowed, scores, torch.tensor(float("-inf"), dtype=scores.dtype))
    mixed = torch.einsum("bhqk,bkhd->bqhd", torch.softmax(scores, dim=-1), v).reshape(B, T, d_model)
    x = x + torch.einsum("btd,de->bte", mixed, weights["wo"])
    h = rms_norm(x, weights["ffn_norm"])
    gate = h @ weights["w_gate"]
    # fix: SiLU on the gate projection, not on the up projection
    return x + ((gate * torch.sigmoid(gate)) * (h @ weights["w_up"])) @ weights["w_down"]
