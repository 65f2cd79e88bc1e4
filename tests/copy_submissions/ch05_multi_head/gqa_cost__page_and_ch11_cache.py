# A lazy combination: the chapter 5 page's multi-head counts (section 5.6) with chapter 11's KV-cache formula (2 S h_kv d_k, section "Grouped-query attention and the KV cache") and the exercise's ValueError.
def gqa_cost(d_model, num_heads, num_kv_heads, T, S):
    if d_model % num_heads or num_heads % num_kv_heads:
        raise ValueError(f"d_model={d_model}, num_heads={num_heads}, num_kv_heads={num_kv_heads}")
    d_k = d_model // num_heads
    return {"parameters": 4 * d_model**2 + 4 * d_model,
            "projection_macs": 2 * (T + S) * d_model**2,
            "attention_macs": 2 * T * S * d_model,
            "weight_entries": num_heads * T * S,
            "cache_entries": 2 * S * num_kv_heads * d_k}
