# Attention multiply-adds and weights counted per key/value head (g) instead of per query head (h).
def gqa_cost(d_model, num_heads, num_kv_heads, T, S):
    if d_model % num_heads or num_heads % num_kv_heads:
        raise ValueError(f"d_model={d_model}, num_heads={num_heads}, num_kv_heads={num_kv_heads}")
    d_k = d_model // num_heads
    d_kv = num_kv_heads * d_k
    return {"parameters": 2 * (d_model * d_model + d_model) + 2 * (d_model * d_kv + d_kv),
            "projection_macs": 2 * T * d_model * d_model + 2 * S * d_model * d_kv,
            "attention_macs": num_kv_heads * 2 * T * S * d_k,
            "weight_entries": num_kv_heads * T * S,
            "cache_entries": 2 * S * d_kv}
