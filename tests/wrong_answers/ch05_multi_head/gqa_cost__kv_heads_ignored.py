# The page's multi-head counts kept for W_K and W_V (num_kv_heads ignored in the parameters and projections).
def gqa_cost(d_model, num_heads, num_kv_heads, T, S):
    if d_model % num_heads or num_heads % num_kv_heads:
        raise ValueError(f"d_model={d_model}, num_heads={num_heads}, num_kv_heads={num_kv_heads}")
    d_k = d_model // num_heads
    return {"parameters": 4 * d_model * d_model + 4 * d_model,
            "projection_macs": 2 * (T + S) * d_model * d_model,
            "attention_macs": num_heads * 2 * T * S * d_k,
            "weight_entries": num_heads * T * S,
            "cache_entries": 2 * S * num_kv_heads * d_k}
